"""How big a tree would be, found out cheaply and within a budget, before it is
built (a file's header names a game and a betting abstraction; building its
tree from an untrusted header could take hours and gigabytes).

:func:`tree_size` counts the betting tree of :func:`strategies.cfr.tree.betting.build_betting_tree`
exactly, and bounds the public tree of :func:`strategies.cfr.tree.public.build_tree`
from above (every deal at every chance node, no suit isomorphism), by walking
betting situations: states with the same chips, raise bound, folds, round,
raise count, actor, action count in the round and actions since the last raise
(all the future of a two- or three-player hand depends on) have equal subtrees and are
counted once. It gives up, raising :class:`TreeBudgetError`, after
``max_work`` generated actions (a few microseconds each) or once either count
passes its limit, so it returns or fails in well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from poker.gamedef import Game
from poker.state import ActionType, State
from strategies.cfr.tree.public import NO_LIMIT_DEFAULT, BettingAbstraction, tree_actions

__all__ = ["TreeBudgetError", "TreeSize", "tree_size"]


class TreeBudgetError(ValueError):
    """A tree over a limit (the message says which)."""


@dataclass(frozen=True)
class TreeSize:
    """``betting_nodes`` of the betting tree (exact); ``public_nodes`` and
    ``public_decisions`` of the public tree (upper bounds: exact without suit
    isomorphism, which keeps at most one board in ``suits!``)."""

    betting_nodes: int
    public_nodes: int
    public_decisions: int


def _situation(state: State) -> tuple[object, ...]:
    actions = state.actions[state.round]
    actors = state.actors[state.round]
    tail: list[tuple[int, int]] = []
    for action, actor in zip(reversed(actions), reversed(actors), strict=True):
        tail.append((int(action.type), actor))
        if action.type is ActionType.RAISE:
            break
    return (
        state.spent,
        state.min_raise_to,
        state.folded,
        state.round,
        state.finished,
        state.num_raises(),
        -1 if state.finished else state.current_player(),
        len(actions),
        tuple(tail),
    )


def tree_size(
    game: Game,
    abstraction: BettingAbstraction | None,
    *,
    max_betting_nodes: int,
    max_public_nodes: int | None = None,
    max_work: int,
) -> TreeSize:
    """The sizes of ``game``'s trees from the start of a hand (no-limit through
    ``abstraction``, default :data:`~strategies.cfr.tree.public.NO_LIMIT_DEFAULT`; a
    two-player game, or a three-player one: the situation key holds every actor
    since the last raise, so it fixes a three-player hand's future too, and the
    counts equal :func:`strategies.cfr.solvers.multiplayer.build_multi_tree`'s). ``max_public_nodes`` None: the public tree is not limited.

    Raises:
        TreeBudgetError: a tree over its limit, or more than ``max_work``
            actions to look at before knowing.
    """
    if game.num_players not in (2, 3):
        raise TreeBudgetError(f"the trees are two- or three-player; the game has {game.num_players}")
    if not game.is_limit and abstraction is None:
        abstraction = NO_LIMIT_DEFAULT
    deck = len(game.deck())
    last = game.num_rounds - 1
    # situation -> (betting nodes, public nodes and decisions per board of the subtree's root)
    known: dict[tuple[object, ...], tuple[int, int, int]] = {}
    work = 0

    def board_cards(state: State) -> int:
        return game.total_board_cards(last if state.is_showdown() else state.round)

    def over(betting: int, public: int) -> None:
        if betting > max_betting_nodes:
            raise TreeBudgetError(f"the betting tree has over {max_betting_nodes:,} nodes (the limit)")
        if max_public_nodes is not None and public > max_public_nodes:
            raise TreeBudgetError(f"the public tree has over {max_public_nodes:,} nodes (the limit)")

    def count(state: State) -> tuple[int, int, int]:
        nonlocal work
        key = _situation(state)
        found = known.get(key)
        if found is not None:
            return found
        betting = public = 1
        decisions = 0
        work += 1
        if not state.finished:
            actions = tree_actions(state, abstraction)
            work += len(actions) + (0 if abstraction is None else len(abstraction.pot_fractions) // 8)
            if work > max_work:
                raise TreeBudgetError(
                    f"the betting tree is too big to size up: over {max_work:,} betting situations and"
                    " actions (the limit) before the count was done"
                )
            decisions = 1
            cards = board_cards(state)
            for action in actions:
                child = state.apply(action)
                below, below_public, below_decisions = count(child)
                betting += below
                dealt = board_cards(child) - cards
                if dealt == 0:
                    public += below_public
                    decisions += below_decisions
                else:  # one chance node per board, then the child on every deal
                    deals = math.comb(deck - cards, dealt)
                    public += 1 + deals * below_public
                    decisions += deals * below_decisions
                over(betting, public)
        known[key] = betting, public, decisions
        return betting, public, decisions

    root = State(game)
    betting, public, decisions = count(root)
    dealt = board_cards(root)
    if dealt:
        deals = math.comb(deck, dealt)
        public, decisions = 1 + deals * public, deals * decisions
    over(betting, public)
    return TreeSize(betting, public, decisions)
