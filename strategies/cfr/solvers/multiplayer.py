"""CFR (vanilla or CFR+) and exact best responses for small three-player games
(3p Kuhn, 3p Leduc).

Reference: Abou Risk & Szafron (2010), 'Using Counterfactual Regret Minimization to
Create Competitive Multiplayer Poker Agents': CFR is run unchanged on a
three-player game (no convergence guarantee), and the result is checked with the
seven-step epsilon: (1) CFR profile sigma; (2) a best response BR_i to
sigma_{-i} for each position i; (3) the combined best-response profile; (4) the
positions' utilities when all play sigma; (5) each BR_i's utility against two
copies of sigma; (6) the gain per position; (7) epsilon = the average gain. The
paper finds the BRs by CFR; here they are exact public-tree best responses.

The tree (:mod:`strategies.cfr.tree.multi`) is the two-player public tree's
idea without its card-removal tricks: vectors over each position's private hands
at every node, and at each terminal a dense payoff table over the three
positions' hands, ``float64[3, H, H, H]``: fine for Kuhn (4 hands) and Leduc (8),
not for hold'em.

CFR here: simultaneous updates (every position against the same profile, as in
the original CFR); vanilla (regret matching, uniform average: Abou Risk & Szafron's) or
CFR+ (regrets floored at zero, average weighted by iteration), which on 3p Leduc
reaches a seven-step epsilon of 0.0028 in 3,000 iterations where vanilla CFR is
at 0.0159 after 10,000 (no guarantee either way with three players). Values in
chips (antes) per hand. Shapes: strategies ``float64[D, A, H]`` as in
:mod:`strategies.cfr.solvers.solver`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from strategies.cfr.tree.multi import CHANCE as _CHANCE
from strategies.cfr.tree.multi import DECISION as _DECISION
from strategies.cfr.tree.multi import MultiTree
from strategies.cfr.tree.multi import PLAYERS as _PLAYERS
from strategies.cfr.tree.multi import TERMINAL as _TERMINAL

__all__ = ["MultiCFR", "seven_step_epsilon", "EpsilonCheck"]


@njit(cache=True, nogil=True)
def _terminal_values(payoff, position, reach, out):  # type: ignore[no-untyped-def]
    """out[h] = sum over the other two positions' hands of their reaches times
    ``payoff[position]`` (indexed by position 0, 1, 2 hands)."""
    n = out.shape[0]
    out[:] = 0.0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                u = payoff[position, a, b, c]
                if u == 0.0:
                    continue
                if position == 0:
                    out[a] += u * reach[1, b] * reach[2, c]
                elif position == 1:
                    out[b] += u * reach[0, a] * reach[2, c]
                else:
                    out[c] += u * reach[0, a] * reach[1, b]


@njit(cache=True, nogil=True)
def _walk(  # type: ignore[no-untyped-def]
    kind,
    player,
    first_child,
    num_children,
    decision_index,
    terminal_index,
    chance_weight,
    board_mask,
    payoff,
    sigma,
    position,
    best,
    reach,
    values,
):
    """Reach top-down (``reach[3, N, H]``, root set by the caller), then
    ``position``'s counterfactual values bottom-up into ``values[N, H]``: its own
    decisions play ``sigma`` (``[D, A, H]``) or, if ``best``, the maximum."""
    n_nodes, n_hands = values.shape
    for node in range(n_nodes):
        for j in range(num_children[node]):
            c = first_child[node] + j
            for p in range(3):
                for h in range(n_hands):
                    r = reach[p, node, h]
                    if kind[node] == _CHANCE:
                        r *= board_mask[c, h]
                    elif kind[node] == _DECISION and player[node] == p:
                        r *= sigma[decision_index[node], j, h]
                    reach[p, c, h] = r
    for node in range(n_nodes - 1, -1, -1):
        k = kind[node]
        first = first_child[node]
        if k == _TERMINAL:
            _terminal_values(payoff[terminal_index[node]], position, reach[:, node, :], values[node])
        elif k == _CHANCE:
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += chance_weight[node] * board_mask[first + j, h] * values[first + j, h]
        elif player[node] != position:
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += values[first + j, h]
        elif best:
            for h in range(n_hands):
                top = values[first, h]
                for j in range(1, num_children[node]):
                    top = max(top, values[first + j, h])
                values[node, h] = top
        else:
            d = decision_index[node]
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += sigma[d, j, h] * values[first + j, h]


@njit(cache=True, nogil=True)
def _cfr_iterations(  # type: ignore[no-untyped-def]
    kind,
    player,
    first_child,
    num_children,
    decision_index,
    terminal_index,
    chance_weight,
    board_mask,
    payoff,
    num_actions,
    start,
    iterations,
    plus,
    regret,
    cumulative,
    sigma,
    reach,
    values,
):
    """CFR with simultaneous updates, in place, iterations ``start + 1 ..
    start + iterations``: vanilla (uniform average) or, if ``plus``, CFR+'s
    regrets floored at zero and an average weighted by the iteration number."""
    n_nodes, n_hands = values.shape
    n_decisions = regret.shape[0]
    updates = np.zeros((3,) + regret.shape)
    for step in range(iterations):
        weight = float(start + step + 1) if plus else 1.0
        # (1) regret matching
        for d in range(n_decisions):
            n = num_actions[d]
            for h in range(n_hands):
                total = 0.0
                for a in range(n):
                    total += max(regret[d, a, h], 0.0)
                for a in range(n):
                    sigma[d, a, h] = max(regret[d, a, h], 0.0) / total if total > 0.0 else 1.0 / n
        # (2)-(3) values per position against the same profile, regret deltas
        updates[:] = 0.0
        for position in range(3):
            reach[:, 0, :] = 1.0
            _walk(
                kind,
                player,
                first_child,
                num_children,
                decision_index,
                terminal_index,
                chance_weight,
                board_mask,
                payoff,
                sigma,
                position,
                False,
                reach,
                values,
            )
            for node in range(n_nodes):
                if kind[node] != _DECISION or player[node] != position:
                    continue
                d = decision_index[node]
                for a in range(num_children[node]):
                    for h in range(n_hands):
                        updates[position, d, a, h] = values[first_child[node] + a, h] - values[node, h]
                        cumulative[d, a, h] += weight * reach[position, node, h] * sigma[d, a, h]
        # (4) add the regrets
        for position in range(3):
            for d in range(n_decisions):
                for a in range(num_actions[d]):
                    for h in range(n_hands):
                        regret[d, a, h] += updates[position, d, a, h]
                        if plus and regret[d, a, h] < 0.0:
                            regret[d, a, h] = 0.0


class MultiCFR:
    """CFR state on a :class:`MultiTree`: vanilla CFR (Abou Risk & Szafron's), or with
    ``plus`` CFR+'s regret floor and linear average (no guarantee in three-player
    games either, but it reaches a smaller seven-step epsilon in the same
    iterations on 3p Kuhn and Leduc; measured in the tests)."""

    def __init__(self, tree: MultiTree, *, plus: bool = False) -> None:
        self.tree = tree
        self.plus = plus
        shape = (tree.num_decisions, tree.max_actions, len(tree.hands))
        self.regret = np.zeros(shape)
        self.cumulative = np.zeros(shape)
        self._sigma = np.zeros(shape)
        self._reach = np.zeros((_PLAYERS, len(tree.kind), len(tree.hands)))
        self._values = np.zeros((len(tree.kind), len(tree.hands)))
        self.iteration = 0

    def run(self, iterations: int) -> None:
        t = self.tree
        _cfr_iterations(
            t.kind,
            t.player,
            t.first_child,
            t.num_children,
            t.decision_index,
            t.terminal_index,
            t.chance_weight,
            t.board_mask,
            t.payoff,
            t.num_actions,
            self.iteration,
            iterations,
            self.plus,
            self.regret,
            self.cumulative,
            self._sigma,
            self._reach,
            self._values,
        )
        self.iteration += iterations

    def load_arrays(
        self, *, iteration: int, regret: npt.NDArray[np.float64], cumulative: npt.NDArray[np.float64]
    ) -> None:
        """Continue from a checkpoint's arrays (shapes checked when its file was read)."""
        self.regret[...] = regret
        self.cumulative[...] = cumulative
        self.iteration = iteration

    def average_strategy(self) -> npt.NDArray[np.float64]:
        """Normalised cumulative strategy, uniform where it is zero."""
        totals = self.cumulative.sum(axis=1, keepdims=True)
        uniform = np.zeros_like(self.cumulative)
        for d, n in enumerate(self.tree.num_actions):
            uniform[d, :n] = 1.0 / n
        average: npt.NDArray[np.float64] = np.where(
            totals > 0, self.cumulative / np.where(totals > 0, totals, 1.0), uniform
        )
        return average

    def root_value(self, strategy: npt.NDArray[np.float64], position: int, *, best: bool) -> float:
        """Chips per hand of ``position`` when all play ``strategy`` or, if ``best``,
        when it best-responds to the others' parts of it."""
        t = self.tree
        self._reach[:, 0, :] = 1.0
        _walk(
            t.kind,
            t.player,
            t.first_child,
            t.num_children,
            t.decision_index,
            t.terminal_index,
            t.chance_weight,
            t.board_mask,
            t.payoff,
            strategy,
            position,
            best,
            self._reach,
            self._values,
        )
        return float(self._values[0].sum()) / self.tree.num_deals


@dataclass(frozen=True)
class EpsilonCheck:
    """The seven-step check: per-position utilities of the profile, of each best
    response against it, and epsilon = the mean gain (chips per hand)."""

    profile_values: tuple[float, ...]
    best_response_values: tuple[float, ...]

    @property
    def gains(self) -> tuple[float, ...]:
        return tuple(b - v for b, v in zip(self.best_response_values, self.profile_values, strict=True))

    @property
    def epsilon(self) -> float:
        return sum(self.gains) / len(self.gains)


def seven_step_epsilon(solver: MultiCFR, strategy: npt.NDArray[np.float64] | None = None) -> EpsilonCheck:
    """Abou Risk & Szafron's seven-step epsilon of ``strategy`` (default the solver's average profile)."""
    profile = solver.average_strategy() if strategy is None else strategy
    return EpsilonCheck(
        tuple(solver.root_value(profile, p, best=False) for p in range(_PLAYERS)),
        tuple(solver.root_value(profile, p, best=True) for p in range(_PLAYERS)),
    )
