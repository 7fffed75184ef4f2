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
``max_work`` generated actions (5-15 us each in CPython on 2-core machines) or
once a count passes its limit. A file's size bounds the betting decisions its
arrays can hold (``max_betting_decisions``): every distinct situation expanded is
at least one of them, so the walk stops after that many and a small file costs
a short walk, however big the tree its header names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from poker.gamedef import Game
from poker.state import ActionType, State
from strategies.cfr.tree.public import NO_LIMIT_DEFAULT, BettingAbstraction, tree_actions

__all__ = ["TooManyDecisions", "TreeBudgetError", "TreeSize", "tree_size"]


class TreeBudgetError(ValueError):
    """A tree over a limit (the message says which)."""


class TooManyDecisions(TreeBudgetError):
    """The betting tree has more decisions than ``max_betting_decisions``."""


@dataclass(frozen=True)
class TreeSize:
    """``betting_nodes`` and ``betting_decisions`` of the betting tree (exact);
    ``public_nodes`` and ``public_decisions`` of the public tree (upper bounds:
    exact without suit isomorphism, which keeps at most one board in ``suits!``)."""

    betting_nodes: int
    betting_decisions: int
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
    max_betting_decisions: int | None = None,
    max_work: int,
) -> TreeSize:
    """The sizes of ``game``'s trees from the start of a hand (no-limit through
    ``abstraction``, default :data:`~strategies.cfr.tree.public.NO_LIMIT_DEFAULT`; a
    two-player game, or a three-player one: the situation key holds every actor
    since the last raise, so it fixes a three-player hand's future too, and the
    counts equal :func:`strategies.cfr.tree.multi.build_multi_tree`'s).
    ``max_public_nodes``, ``max_betting_decisions`` None: not limited.

    Raises:
        TooManyDecisions: more than ``max_betting_decisions`` betting decisions.
        TreeBudgetError: a tree over another limit, or more than ``max_work``
            actions to look at before knowing.
    """
    if game.num_players not in (2, 3):
        raise TreeBudgetError(f"the trees are two- or three-player; the game has {game.num_players}")
    if not game.is_limit and abstraction is None:
        abstraction = NO_LIMIT_DEFAULT
    deck = len(game.deck())
    last = game.num_rounds - 1
    # situation -> (betting nodes and decisions, public nodes and decisions per board of the subtree's root)
    known: dict[tuple[object, ...], tuple[int, int, int, int]] = {}
    work = expanded = 0

    def too_many() -> TooManyDecisions:
        return TooManyDecisions(f"the betting tree has over {max_betting_decisions:,} decisions (the limit)")

    def board_cards(state: State) -> int:
        return game.total_board_cards(last if state.is_showdown() else state.round)

    def over(betting: int, public: int) -> None:
        if betting > max_betting_nodes:
            raise TreeBudgetError(f"the betting tree has over {max_betting_nodes:,} nodes (the limit)")
        if max_public_nodes is not None and public > max_public_nodes:
            raise TreeBudgetError(f"the public tree has over {max_public_nodes:,} nodes (the limit)")

    def count(state: State) -> tuple[int, int, int, int]:
        nonlocal work, expanded
        key = _situation(state)
        found = known.get(key)
        if found is not None:
            return found
        betting = public = 1
        betting_decisions = decisions = 0
        work += 1
        if not state.finished:
            expanded += 1  # a distinct situation: at least one more decision of the betting tree
            if max_betting_decisions is not None and expanded > max_betting_decisions:
                raise too_many()
            actions = tree_actions(state, abstraction)
            work += len(actions) + (0 if abstraction is None else len(abstraction.pot_fractions) // 8)
            if work > max_work:
                raise TreeBudgetError(
                    f"the betting tree is too big to size up: over {max_work:,} betting situations and"
                    " actions (the limit) before the count was done"
                )
            betting_decisions = decisions = 1
            cards = board_cards(state)
            for action in actions:
                child = state.apply(action)
                below, below_betting_decisions, below_public, below_decisions = count(child)
                betting += below
                betting_decisions += below_betting_decisions
                dealt = board_cards(child) - cards
                if dealt == 0:
                    public += below_public
                    decisions += below_decisions
                else:  # one chance node per board, then the child on every deal
                    deals = math.comb(deck - cards, dealt)
                    public += 1 + deals * below_public
                    decisions += deals * below_decisions
                over(betting, public)
        known[key] = betting, betting_decisions, public, decisions
        return betting, betting_decisions, public, decisions

    root = State(game)
    betting, betting_decisions, public, decisions = count(root)
    dealt = board_cards(root)
    if dealt:
        deals = math.comb(deck, dealt)
        public, decisions = 1 + deals * public, deals * decisions
    over(betting, public)
    if max_betting_decisions is not None and betting_decisions > max_betting_decisions:
        raise too_many()
    return TreeSize(betting, betting_decisions, public, decisions)
