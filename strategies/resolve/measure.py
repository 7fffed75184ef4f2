"""Exact exploitability of a policy, measured as DeepStack-Leduc (DSL) does, so
continual re-solving's figures compare with its published ones
(github.com/lifrordi/DeepStack-Leduc).

**Our measure** (:func:`exploitability_on_tree`): the best responder plays in a
public tree (fold, call, the listed pot fractions, all-in), both seats; the
policy is asked once per public state of that tree for every private hand
(:func:`strategies.cfr.best_response.exact.strategy_from_policy`), which for
the re-solving agent means re-solving along every public history, and the
engine's exact best response walks the tree. Result: true chips per hand, the
mean of the two best-response values.

**DSL's unit.** DSL's evaluator weights every pair of private hands 1/H² (1/36
in Leduc), the impossible pairs (both players holding the same card) included
with value 0, so its figures are ``compatible pairs / H²`` (5/6 in Leduc) of
true chips: :func:`dsl_factor`. And its betting tree offers fold when a check
is free, which :mod:`poker.state` forbids (so the engine's trees lack it). A
policy that never folds for free (every policy on our trees, the re-solving
agent's included) is exploited the same on both trees, because for the best
responder a free fold is never better than checking (it can still fold at its
next decision, and a showdown never costs more than its chips in), so DSL units
are ``dsl_factor`` times our chips. The uniform policy is the exception: on
DSL's tree it folds for free, which is why DSL's tutorial quotes "a bit over
175" for it; :func:`dsl_uniform_exploitability` walks DSL's tree (a plain
recursion over public states, vectorised over hands) to check that figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game
from poker.state import FOLD, Action, State
from strategies.base import PublicState, Strategy
from strategies.cfr.best_response.exact import best_response, strategy_from_policy
from strategies.cfr.tree.public import BettingAbstraction, build_tree, tree_actions

__all__ = ["Exploitability", "dsl_factor", "dsl_uniform_exploitability", "exploitability_on_tree"]

PolicyFn = Callable[[PublicState], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class Exploitability:
    """Best-response values (chips per hand) of position 0 and of position 1
    against the other seat of the measured policy, and the DSL unit factor."""

    values: tuple[float, float]
    factor: float

    @property
    def chips(self) -> float:
        """True chips per hand: the mean of the two best-response values."""
        return (self.values[0] + self.values[1]) / 2

    @property
    def dsl(self) -> float:
        """The same in DeepStack-Leduc's unit (every pair of hands weighted 1/H²)."""
        return self.chips * self.factor


def dsl_factor(game: Game) -> float:
    """Compatible pairs of private hands / all pairs: DSL's figures over true chips."""
    hands = private_hands(game)
    clash = (hands[:, None, :, None] == hands[None, :, None, :]).any(axis=(2, 3))
    return float((~clash).sum()) / len(hands) ** 2


def exploitability_on_tree(
    game: Game, policy: Strategy | PolicyFn, fractions: tuple[float, ...] = (1.0,)
) -> Exploitability:
    """Exact exploitability of ``policy`` (for both seats) against a best responder
    that may play fold, call, raises to ``fractions`` of the pot and all-in
    (every legal action in a limit game)."""
    abstraction = None if game.is_limit else BettingAbstraction(fractions)
    tree = build_tree(game, abstraction)
    strategy = strategy_from_policy(tree, policy)
    response = best_response(tree, strategy)
    return Exploitability(response.values, dsl_factor(game))


def _dsl_actions(state: State, abstraction: BettingAbstraction | None) -> list[Action]:
    """DSL's actions: fold always (even when a check is free), call, then the tree's raises."""
    kept = [a for a in tree_actions(state, abstraction) if a != FOLD]
    return [FOLD, *kept]


def dsl_uniform_exploitability(game: Game, fractions: tuple[float, ...] = (1.0,)) -> Exploitability:
    """Exact exploitability of the uniform policy on DSL's tree (fold always
    offered, call, raises to ``fractions`` of the pot, all-in), both seats."""
    abstraction = None if game.is_limit else BettingAbstraction(fractions)
    hands = private_hands(game)
    n = len(hands)
    clash = (hands[:, None, :, None] == hands[None, :, None, :]).any(axis=(2, 3))
    deck = sorted(game.deck())

    def mask_of(board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        return np.asarray(~np.isin(hands, board).any(axis=1), dtype=np.float64)

    def showdown_sign(board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        valid = mask_of(board)
        rows = hands[valid > 0]
        ranks = np.zeros(n, dtype=np.int64)
        board_rows = np.tile(np.array(board, dtype=hands.dtype), (len(rows), 1))
        ranks[valid > 0] = rank_hands(np.concatenate([rows, board_rows], axis=1))
        sign = np.sign(ranks[:, None] - ranks[None, :]) * ~clash * valid[:, None] * valid[None, :]
        return np.asarray(sign, dtype=np.float64)

    def value(
        state: State, board: tuple[int, ...], responder: int, opp_reach: npt.NDArray[np.float64], folder: int
    ) -> npt.NDArray[np.float64]:
        """The responder's counterfactual values per hand (chips x opponent reach)."""
        compatible = ~clash * mask_of(board)[:, None] * mask_of(board)[None, :]
        if folder >= 0:
            chips = float(state.spent[folder])
            folded: npt.NDArray[np.float64] = (chips if folder != responder else -chips) * (compatible @ opp_reach)
            return folded
        if state.finished and not state.is_showdown():
            return value(state, board, responder, opp_reach, state.folded.index(True))
        if len(board) < game.total_board_cards(state.round):  # the next round's cards, or an all-in run-out
            remaining = [c for c in deck if c not in board]
            weight = 1.0 / (len(remaining) - 2 * game.num_hole_cards)
            total = np.zeros(n)
            for card in remaining:
                dealt = (*board, card)
                total += weight * mask_of(dealt) * value(state, dealt, responder, opp_reach * mask_of(dealt), -1)
            return total
        if state.finished:
            shown: npt.NDArray[np.float64] = float(min(state.spent)) * (showdown_sign(board) @ opp_reach)
            return shown
        actions = _dsl_actions(state, abstraction)
        actor = state.current_player()
        children = []
        child_reach = opp_reach / len(actions) if actor != responder else opp_reach
        for action in actions:
            if action == FOLD and not state.can_fold():  # DSL's free fold: a terminal poker.state does not allow
                children.append(value(state, board, responder, child_reach, actor))
            else:
                children.append(value(state.apply(action), board, responder, child_reach, -1))
        stacked = np.array(children)
        best: npt.NDArray[np.float64] = stacked.max(axis=0) if actor == responder else stacked.sum(axis=0)
        return best

    root = State(game)
    compatible_pairs = float((~clash).sum())
    values = []
    for responder in range(2):
        root_values = value(root, (), responder, np.ones(n), -1)
        values.append(float(root_values.sum()) / compatible_pairs)
    return Exploitability((values[0], values[1]), dsl_factor(game))
