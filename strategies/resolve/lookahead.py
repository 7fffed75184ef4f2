"""The lookahead of a re-solve: the public tree below the real public state, with
a sparse set of raises that may differ by depth.

DeepStack (Burch 2017 thesis ch6; Moravčík et al. 2017) re-solves on a sparse tree built at
the state the game has actually reached, so an opponent's bet of any size is the
tree's root rather than something to translate, and the tree may offer more
raise sizes near its root than deeper down. Here the tree is the engine's public
tree (:func:`strategies.cfr.tree.public.build_tree`) rooted at the real state and
board; :class:`DepthAbstraction` gives it pot fractions per depth, depth counted
in actions below the lookahead's root (depth 0 is the decision being made).
The lookahead runs to the end of the hand: the *exact* evaluation of its leaves,
which is cheap in Leduc and isolates the error of re-solving;
:mod:`strategies.resolve.depth_limited` cuts it at the street's end instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from poker.gamedef import Game
from poker.state import CALL, State
from strategies.cfr.tree.public import BettingAbstraction, Tree, TreeError, build_tree

__all__ = ["DepthAbstraction", "build_lookahead", "checked_down", "lookahead_abstraction", "parse_sizes"]


def _actions_taken(state: State) -> int:
    return sum(len(round_actions) for round_actions in state.actions)


@dataclass(frozen=True)
class DepthAbstraction(BettingAbstraction):
    """Raises to ``by_depth[d]`` pot fractions at depth ``d`` below the lookahead
    root (the last entry for every deeper level), plus all-in if ``all_in``.
    ``root_actions`` is the number of actions taken before the root, so a state's
    depth is its action count minus it. ``pot_fractions`` is the root's set."""

    by_depth: tuple[tuple[float, ...], ...] = ((1.0,),)
    root_actions: int = 0

    def __post_init__(self) -> None:
        if not self.by_depth:
            raise TreeError("a depth abstraction needs the fractions of at least one depth")
        for fractions in self.by_depth:
            BettingAbstraction(fractions, self.all_in)  # validates each level

    def raise_to_sizes(self, state: State) -> list[int]:
        depth = max(_actions_taken(state) - self.root_actions, 0)
        level = self.by_depth[min(depth, len(self.by_depth) - 1)]
        return BettingAbstraction(level, self.all_in).raise_to_sizes(state)

    def describe(self) -> str:
        levels = " / ".join(",".join(f"{f:g}" for f in level) or "none" for level in self.by_depth)
        return f"pot fractions by depth {levels}; {'all-in' if self.all_in else 'no all-in'}"


def parse_sizes(text: str) -> tuple[tuple[float, ...], ...]:
    """``"0.5+1+2/1"`` -> ``((0.5, 1.0, 2.0), (1.0,))``: pot fractions joined by
    ``+``, depths separated by ``/`` (the last applies to every deeper level);
    an empty level keeps no raise but all-in.

    Raises:
        TreeError: a fraction that is not a positive number.
    """
    levels: list[tuple[float, ...]] = []
    for level in text.split("/"):
        fractions: list[float] = []
        for item in filter(None, level.split("+")):
            try:
                fractions.append(float(item))
            except ValueError:
                raise TreeError(f"raise sizes {text!r}: {item!r} is not a pot fraction") from None
        levels.append(tuple(fractions))
    BettingAbstraction(tuple(f for level in levels for f in level))  # positive and finite
    return tuple(levels)


def build_lookahead(
    game: Game, state: State, board: Sequence[int], sizes: tuple[tuple[float, ...], ...], *, all_in: bool = True
) -> Tree:
    """The lookahead tree at the real ``state`` and ``board`` (the cards dealt so
    far): every legal action in a limit game, else fold, call, the depth's pot
    fractions and all-in; to the end of the hand."""
    return build_tree(game, lookahead_abstraction(game, state, sizes, all_in=all_in), root=state, board=tuple(board))


def lookahead_abstraction(
    game: Game, state: State, sizes: tuple[tuple[float, ...], ...], *, all_in: bool = True
) -> DepthAbstraction | None:
    """The betting abstraction of a lookahead rooted at ``state`` (None in a limit game)."""
    return None if game.is_limit else DepthAbstraction(sizes[0], all_in, sizes, _actions_taken(state))


def checked_down(game: Game) -> tuple[State, tuple[int, ...]]:
    """The first decision of the hand's last street after every earlier decision
    called, and a board for it (the deck's lowest cards): the hand the re-solving
    agents replay to warm up, since reaching it re-solves on every street."""
    state = State(game)
    while state.round < game.num_rounds - 1:
        state = state.apply(CALL)
    return state, tuple(sorted(game.deck()))[: game.total_board_cards(state.round)]
