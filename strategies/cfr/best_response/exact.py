"""Exact best response and exploitability by one public-tree walk per position.

Reference: Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', ch2 §2.4,
accelerated best response: walk the public tree once, carrying the opponent's reach
vector over its private hands down and returning the responder's values for all its
private hands up; at the responder's decisions take the maximum per hand, at the
opponent's the sum, at chance nodes the probability-weighted sum with card removal.
Terminals use the O(n) fold and sorted-showdown evaluation of §2.4 (see
:mod:`strategies.cfr.tree._kernels`). The result is the same arithmetic as a walk of the
responder's information sets, reordered so each opponent strategy entry is read once for
all of the responder's hands.

Exploitability = the mean of the two best-response values (Johanson Eq 2.3,
Burch §2.4.5), in chips per hand; NashConv (OpenSpiel) is their sum minus the
profile's value sum, i.e. twice the exploitability in a zero-sum game.
Hold'em figures are usually quoted in mbb/g: :func:`to_mbb` converts.

Strategies are ``float64[D, A, H]`` arrays on a :class:`~strategies.cfr.tree.public.Tree`
(``A`` = the tree's ``max_actions``); :func:`strategy_from_policy` builds one from
any :class:`strategies.base.Strategy` (or callable) that gives ``policy(public)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from strategies.base import PublicState, Strategy
from strategies.cfr.solvers.solver import root_reach, to_kernel_layout
from strategies.cfr.tree import _kernels
from strategies.cfr.tree.public import Tree

__all__ = [
    "BestResponse",
    "best_response",
    "exploitability",
    "profile_values",
    "strategy_from_policy",
    "to_mbb",
]

PolicyFn = Callable[[PublicState], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class BestResponse:
    """Best-response values (chips per hand) of each position against the other's
    part of a strategy profile."""

    values: tuple[float, float]

    @property
    def exploitability(self) -> float:
        """Mean of the two best-response values, chips per hand."""
        return (self.values[0] + self.values[1]) / 2

    @property
    def nash_conv(self) -> float:
        """Sum of the two best-response values (zero-sum games), chips per hand."""
        return self.values[0] + self.values[1]


def _check(tree: Tree, strategy: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    shape = (tree.num_decisions, tree.max_actions, tree.num_hands)
    if strategy.shape != shape:
        raise ValueError(f"a strategy on this tree has shape {shape}, got {strategy.shape}")
    return np.ascontiguousarray(strategy, dtype=np.float64)


def _walk(
    tree: Tree,
    strategy: npt.NDArray[np.float64],
    mode: int,
    payoff: npt.NDArray[np.float64] | None,
    ranges: npt.NDArray[np.float64] | None,
) -> tuple[float, float]:
    return root_expectations(tree, to_kernel_layout(_check(tree, strategy)), mode, payoff, root_reach(tree, ranges))


def root_expectations(
    tree: Tree,
    kernel_strategy: npt.NDArray[np.float64],
    mode: int,
    payoff: npt.NDArray[np.float64] | None,
    reach0: npt.NDArray[np.float64],
) -> tuple[float, float]:
    """Each position's expected chips per hand from the root values of ``mode``
    (``kernel_strategy`` in the kernels' ``[A, D, H]`` layout, root reach ``reach0``)."""
    payoff = tree.payoff if payoff is None else payoff
    out = np.zeros((2, tree.num_hands))
    reach = np.empty((2, tree.num_nodes, tree.num_hands))
    values = np.empty((tree.num_nodes, tree.num_hands))
    _kernels.root_values(tree.kernel_arrays, payoff, kernel_strategy, mode, reach0, reach, values, out)
    pairs = tree.root_pairs(reach0[0], reach0[1])
    return float(reach0[0] @ out[0]) / pairs, float(reach0[1] @ out[1]) / pairs


def best_response(
    tree: Tree,
    strategy: npt.NDArray[np.float64],
    *,
    payoff: npt.NDArray[np.float64] | None = None,
    ranges: npt.NDArray[np.float64] | None = None,
) -> BestResponse:
    """Each position's best-response value against the other position's part of
    ``strategy``, in chips per hand (expected over the deal, or over ``ranges``
    at a subtree root). ``payoff`` (default the real game's) gives the
    responder's utilities."""
    return BestResponse(_walk(tree, strategy, _kernels.MODE_BEST_RESPONSE, payoff, ranges))


def exploitability(tree: Tree, strategy: npt.NDArray[np.float64]) -> float:
    """Mean of the two best-response values in the real game, chips per hand."""
    return best_response(tree, strategy).exploitability


def profile_values(
    tree: Tree,
    strategy: npt.NDArray[np.float64],
    *,
    payoff: npt.NDArray[np.float64] | None = None,
    ranges: npt.NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    """Expected chips per hand of each position when both play ``strategy``."""
    return _walk(tree, strategy, _kernels.MODE_VALUE, payoff, ranges)


def to_mbb(game: Game, chips: float) -> float:
    """Chips per hand of ``game`` as milli-big-blinds per game."""
    return 1000.0 * chips / game.big_blind


def strategy_from_policy(tree: Tree, policy: Strategy | PolicyFn) -> npt.NDArray[np.float64]:
    """A tree strategy from ``policy(public) -> float64[n_hands, n_actions]`` (rows
    per private hand in :func:`poker.deal.private_hands` order, columns in
    the order of ``public.actions``, which are the tree's actions at the node).

    A :class:`strategies.base.Strategy` is used through its ``policy`` method.

    Raises:
        ValueError: a policy answer of the wrong shape or not a distribution on
            the hands that fit the board.
    """
    ask: PolicyFn = policy.policy if isinstance(policy, Strategy) else policy
    strategy = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
    for d, node in enumerate(tree.decision_nodes):
        actions = tree.actions(int(node))
        board = tree.boards[tree.board_index[node]]
        public = PublicState(tree.states[node], board, actions)
        answer = np.asarray(ask(public), dtype=np.float64)
        if answer.shape != (tree.num_hands, len(actions)):
            raise ValueError(
                f"policy at {tree.key(int(node))!r} has shape {answer.shape};"
                f" expected ({tree.num_hands}, {len(actions)})"
            )
        valid = tree.board_mask[tree.board_index[node]] > 0
        rows = answer[valid]
        if (rows < 0).any() or not np.allclose(rows.sum(axis=1), 1.0):
            raise ValueError(f"policy at {tree.key(int(node))!r} is not a probability distribution per hand")
        strategy[d, : len(actions), :] = answer.T
        strategy[d, : len(actions), ~valid] = 1.0 / len(actions)
    return strategy
