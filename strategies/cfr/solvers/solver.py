"""CFR and CFR+ on the public tree, vectorised over private hands.

References: Zinkevich et al. (2007) and Burch (2017) thesis ch3 (CFR: regret
matching, uniform average; Algorithm 3 is the public-tree form);
Burch thesis §4.1 (CFR+: regret-matching+ §4.1.1, linearly weighted average
§4.1.2, alternating updates §4.1.3); Tammelin et al. (2015) for the
averaging delay ``d`` (weight ``max(t - d, 0)``).

Per iteration t (numbered from 1), for each position p in turn (alternating
updates) or for both against the same profile (simultaneous):

1. mix the restricted position's fixed model into its strategy, if any
   (:class:`Restriction`, Johanson thesis Eq 6.1: data-biased response);
2. walk the tree top-down with each position's reach vector over private hands;
3. walk it bottom-up computing p's counterfactual values; at p's decisions add
   ``w_t * reach_p * sigma`` to the cumulative strategy and the instantaneous
   regrets to the cumulative regrets (clipped at zero for CFR+);
4. regret-match p's new strategy (so with alternating updates the second
   position already plays against the first one's new strategy).

The kernels (:mod:`strategies.cfr.tree._kernels`) run whole batches of iterations
without returning to Python; :meth:`Solver.run` calls them in batches.

Presets, matching OpenSpiel's ``CFRSolver`` and ``CFRPlusSolver`` (whose Leduc
trajectories the tests compare against):

* ``cfr``: regret matching, uniform average (weight 1), alternating updates;
* ``cfr+``: regret-matching+, linear average with delay 0, alternating updates.

Deviations from the thesis: the CFR+ average is updated inside p's value pass
(with p's strategy of this iteration), which is Burch's Algorithm 4 order; the
"modified value computation" of §4.1.5 is not used, so the values passed up are
those of the strategy that was played (it took more iterations on Leduc: 740
against 680 to 2.6e-4 with delay 150).

Shapes: strategies, regrets and cumulative strategies are
``float64[n_decision_nodes, max_actions, n_hands]`` in this API (the kernels keep
them action-major, ``[A, D, H]``, and :class:`Solver` transposes at the
boundary); values are in chips.

Trees with at most :data:`strategies.cfr.tree._kernels.FIXED_HANDS` private hands
(Kuhn, Leduc) run on a hand axis padded to that width with zero-reach dummy
hands, which the kernels compile with a constant hand count; the results are
those of the unpadded arrays (the dummies add exact zeros), and the accessors
return the real hands only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from strategies.cfr.tree import _kernels
from strategies.cfr.tree.public import Tree

__all__ = [
    "Algorithm",
    "Solver",
    "Restriction",
    "SolverError",
    "uniform_strategy",
    "root_reach",
    "to_kernel_layout",
    "from_kernel_layout",
]


class SolverError(ValueError):
    """Solver settings or arrays that do not fit the tree."""


class Algorithm(enum.Enum):
    CFR = "cfr"
    CFR_PLUS = "cfr+"


@dataclass(frozen=True)
class Restriction:
    """One position forced to follow ``fixed`` with probability ``p_conf`` at each
    information set (data-biased response, Johanson thesis §6.5, Eq 6.1).

    ``fixed`` is ``float64[D, A, H]`` (only the position's rows are read) and
    ``p_conf`` is ``float64[D, H]`` in [0, 1]. p_conf = 0 everywhere is a plain
    solve; 1 everywhere makes the other position's solution a best response to
    ``fixed``. Regrets are kept for the free part ``sigma'`` only, scaled by
    ``1 - p_conf``, and the cumulative strategy of the restricted position
    averages ``sigma'``."""

    position: int
    fixed: npt.NDArray[np.float64]
    p_conf: npt.NDArray[np.float64]


def uniform_strategy(tree: Tree) -> npt.NDArray[np.float64]:
    """Every legal action equally likely, ``float64[D, A, H]``."""
    actions = tree.num_actions[:, None, None]
    legal = np.arange(tree.max_actions)[None, :, None] < actions
    strategy: npt.NDArray[np.float64] = np.broadcast_to(np.where(legal, 1.0 / actions, 0.0), (
        tree.num_decisions, tree.max_actions, tree.num_hands
    )).copy()
    return strategy


def to_kernel_layout(strategy: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``[D, A, H]`` -> the kernels' contiguous ``[A, D, H]``."""
    return np.ascontiguousarray(np.asarray(strategy, dtype=np.float64).transpose(1, 0, 2))


def from_kernel_layout(array: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The kernels' ``[A, D, H]`` -> a new contiguous ``[D, A, H]`` array."""
    return np.ascontiguousarray(array.transpose(1, 0, 2))


def root_reach(tree: Tree, ranges: npt.NDArray[np.float64] | None = None) -> npt.NDArray[np.float64]:
    """``float64[2, H]`` root reach: ``ranges`` (each position's weight per hand)
    or 1 for every hand, zeroed where a hand clashes with the root board. On a
    suit-isomorphic tree the ranges must be suit-symmetric."""
    mask = tree.board_mask[tree.board_index[0]]
    if ranges is None:
        return np.tile(mask, (2, 1))
    ranges = np.asarray(ranges, dtype=np.float64)
    if ranges.shape != (2, tree.num_hands):
        raise SolverError(f"ranges must have shape (2, {tree.num_hands}), got {ranges.shape}")
    if (ranges < 0).any():
        raise SolverError("ranges must be non-negative")
    if any(not np.array_equal(ranges[:, perm], ranges) for perm in tree.hand_perm[1:]):
        raise SolverError("a suit-isomorphic tree needs ranges that are the same under every suit permutation")
    masked: npt.NDArray[np.float64] = ranges * mask
    return masked


# The kernels typed as plain callables: mypy reads numba's compiled dispatcher
# as taking a fixed argument list and rejects calls that unpack tuples into it.
_RUN_ITERATIONS: Callable[..., int] = _kernels.run_iterations
_RUN_TO_TARGET: Callable[..., tuple[int, float]] = _kernels.run_to_target


class Solver:
    """CFR / CFR+ state on one tree, advanced in place by :meth:`run`; the
    ``regret``, ``cumulative``, :meth:`average_strategy` and
    :meth:`current_strategy` accessors return ``[D, A, H]`` copies.

    Args:
        tree: the public tree.
        algorithm: ``Algorithm.CFR`` or ``Algorithm.CFR_PLUS`` (or their names).
        alternating: alternating (default) or simultaneous updates.
        linear_average: weight ``max(t - delay, 0)`` (default for CFR+) or a
            uniform weight from iteration ``delay + 1`` on (default for CFR).
        delay: iterations left out of the average (or subtracted from the
            linear weight).
        payoff: terminal payoffs ``float64[N, 2, 3]``; default the real game's
            (:func:`strategies.cfr.tree.public.zero_sum_payoff`).
        ranges: root ranges ``float64[2, H]`` (default every hand weight 1).
        restriction: an optional :class:`Restriction` of one position.
    """

    def __init__(
        self,
        tree: Tree,
        algorithm: Algorithm | str = Algorithm.CFR_PLUS,
        *,
        alternating: bool = True,
        linear_average: bool | None = None,
        delay: int = 0,
        payoff: npt.NDArray[np.float64] | None = None,
        ranges: npt.NDArray[np.float64] | None = None,
        restriction: Restriction | None = None,
    ) -> None:
        self.tree = tree
        self.algorithm = Algorithm(algorithm)
        self.alternating = alternating
        self.linear_average = self.algorithm is Algorithm.CFR_PLUS if linear_average is None else linear_average
        if delay < 0:
            raise SolverError(f"the averaging delay must be non-negative, got {delay}")
        self.delay = delay
        shape = (tree.num_decisions, tree.max_actions, tree.num_hands)
        # The kernels' hand axis: small trees are padded to the fixed width.
        width = max(_kernels.FIXED_HANDS, tree.num_hands)
        self._arrays = tree.kernel_arrays if width == tree.num_hands else tree.padded_kernel_arrays(width)
        self.payoff = tree.payoff if payoff is None else np.ascontiguousarray(payoff, dtype=np.float64)
        if self.payoff.shape != (tree.num_nodes, 2, 3):
            raise SolverError(f"payoff must have shape {(tree.num_nodes, 2, 3)}, got {self.payoff.shape}")
        self.root_reach = root_reach(tree, ranges)
        self._root_reach = _pad(self.root_reach, width)
        kernel_shape = (tree.max_actions, tree.num_decisions, width)
        self._regret = np.zeros(kernel_shape)
        self._cumulative = np.zeros(kernel_shape)
        self._sigma = _pad(to_kernel_layout(uniform_strategy(tree)), width)
        self.iteration = 0
        self.restriction = restriction
        if restriction is None:
            self._fixed = np.zeros((0, 0, 0))
            self._p_conf = np.zeros((0, 0))
            self._restricted = -1
            self._sigma_play = self._sigma
        else:
            if restriction.position not in (0, 1):
                raise SolverError(f"the restricted position must be 0 or 1, got {restriction.position}")
            if restriction.fixed.shape != shape or restriction.p_conf.shape != shape[::2]:
                raise SolverError(
                    f"restriction arrays must have shapes {shape} and {shape[::2]},"
                    f" got {restriction.fixed.shape} and {restriction.p_conf.shape}"
                )
            if ((restriction.p_conf < 0) | (restriction.p_conf > 1)).any():
                raise SolverError("p_conf must lie in [0, 1]")
            self._fixed = _pad(to_kernel_layout(restriction.fixed), width)
            self._p_conf = _pad(np.asarray(restriction.p_conf, dtype=np.float64), width)
            self._restricted = restriction.position
            self._sigma_play = np.empty(kernel_shape)
        self._reach = np.zeros((2, tree.num_nodes, width))
        self._values = np.zeros((tree.num_nodes, width))
        # Buffers of exploitability(): the best-response walk keeps its own reach,
        # since run() relies on _reach surviving between calls.
        self._br_reach = np.zeros_like(self._reach)
        self._average = np.zeros(kernel_shape)
        self._root_out = np.zeros((2, width))
        self._full_reach = root_reach(tree)
        self._kernel_full_reach = _pad(self._full_reach, width)
        self._pairs = 0.0

    def run(self, iterations: int) -> None:
        """Run ``iterations`` more iterations."""
        if iterations < 0:
            raise SolverError(f"iterations must be non-negative, got {iterations}")
        if iterations == 0:
            return
        head, state = self._kernel_args()
        self.iteration = _RUN_ITERATIONS(*head, self.iteration + 1, iterations, state) - 1

    def solve_to(self, target: float, *, check_every: int, max_iterations: int) -> float:
        """Run until the exploitability of the average strategy is at most
        ``target`` chips per hand, measured exactly every ``check_every``
        iterations (none while the average is still empty, before iteration
        ``delay + 1``), or until iteration ``max_iterations`` (counting those done
        already); returns the last measurement. One kernel call: for small games
        the checks cost no Python round trips."""
        if check_every < 1:
            raise SolverError(f"check_every must be at least 1, got {check_every}")
        if max_iterations <= self.iteration:
            return self.exploitability()
        head, state = self._kernel_args()
        following, measured = _RUN_TO_TARGET(
            *head,
            self.iteration + 1,
            max_iterations,
            check_every,
            target,
            state,
            (
                self.tree.payoff,
                self.tree.num_actions,
                self._kernel_full_reach,
                self._root_pair_mass(),
                self._average,
                self._br_reach,
                self._root_out,
            ),
        )
        self.iteration = following - 1
        return float(measured)

    def _kernel_args(self) -> tuple[tuple[object, ...], tuple[object, ...]]:
        """The arguments of :func:`_kernels.run_iterations` before the iteration
        range (the tree) and its ``state`` tuple (the solver's settings and arrays)."""
        head = (self._arrays, self.payoff, self.tree.decision_player, self._root_reach)
        state = (
            self.algorithm is Algorithm.CFR_PLUS,
            self.alternating,
            self.linear_average,
            self.delay,
            self._regret,
            self._cumulative,
            self._sigma,
            self._sigma_play,
            self._fixed,
            self._p_conf,
            self._restricted,
            self._reach,
            self._values,
        )
        return head, state

    def _root_pair_mass(self) -> float:
        if not self._pairs:
            self._pairs = self.tree.root_pairs(self._full_reach[0], self._full_reach[1])
        return self._pairs

    @property
    def regret(self) -> npt.NDArray[np.float64]:
        """Cumulative regrets ``[D, A, H]`` (a copy)."""
        return from_kernel_layout(self._regret[..., : self.tree.num_hands])

    @property
    def cumulative(self) -> npt.NDArray[np.float64]:
        """Cumulative (weighted) strategy ``[D, A, H]`` (a copy)."""
        return from_kernel_layout(self._cumulative[..., : self.tree.num_hands])

    def average_strategy(self) -> npt.NDArray[np.float64]:
        """The normalised cumulative strategy ``[D, A, H]`` (uniform where it is all zero), a new array."""
        out = np.zeros_like(self._cumulative)
        _kernels.normalise(self._cumulative, self.tree.num_actions, out)
        return from_kernel_layout(out[..., : self.tree.num_hands])

    def exploitability(self) -> float:
        """Exploitability of the average strategy in the real game, chips per hand:
        the mean of the two best-response values (same figure as
        :func:`strategies.cfr.best_response.exact.exploitability`, computed in one kernel
        call on the solver's own buffers)."""
        tree = self.tree
        full = self._full_reach
        out = self._root_out[:, : tree.num_hands]
        _kernels.average_best_response(
            self._arrays,
            tree.payoff,
            self._cumulative,
            tree.num_actions,
            self._kernel_full_reach,
            self._average,
            self._br_reach,
            self._values,
            self._root_out,
        )
        return float(full[0] @ out[0] + full[1] @ out[1]) / self._root_pair_mass() / 2

    def current_strategy(self) -> npt.NDArray[np.float64]:
        """The strategy the next iteration would play (regret-matched), ``[D, A, H]``, a copy."""
        return from_kernel_layout(self._sigma[..., : self.tree.num_hands])

    def load_arrays(
        self, *, iteration: int, regret: npt.NDArray[np.float64], cumulative: npt.NDArray[np.float64]
    ) -> None:
        """Resume from saved ``[D, A, H]`` arrays (a checkpoint of the same tree and settings)."""
        shape = (self.tree.num_decisions, self.tree.max_actions, self.tree.num_hands)
        if regret.shape != shape or cumulative.shape != shape:
            raise SolverError(
                f"checkpoint arrays have shapes {regret.shape}, {cumulative.shape}; the tree needs {shape}"
            )
        self._regret[..., : shape[2]] = regret.transpose(1, 0, 2)
        self._cumulative[..., : shape[2]] = cumulative.transpose(1, 0, 2)
        self.iteration = iteration
        _kernels.regret_matching(self._regret, self.tree.num_actions, self.tree.decision_player, -1, self._sigma)


def _pad(array: npt.NDArray[np.float64], width: int) -> npt.NDArray[np.float64]:
    """A contiguous copy of ``array`` with its last (hand) axis padded with zeros to ``width``."""
    padded = np.zeros((*array.shape[:-1], width))
    padded[..., : array.shape[-1]] = array
    return padded
