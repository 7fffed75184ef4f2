"""One re-solve: CFR+ on a lookahead, with the re-solving gadget at its root.

Reference: Burch (2017) thesis §5.2.4–5.2.5 (re-solving and the gadget game,
Fig 5.7) and ch6 (continual re-solving); DeepStack-Leduc's gadget (``cfrd_gadget.lua``).

We keep our range at the lookahead's root and, per opponent private hand, one
*constraint*: a counterfactual value the opponent could already get against our
earlier strategy. In the gadget each opponent hand first chooses between
*terminate* (take its constraint) and *follow* (enter the lookahead); the
follow probability is the opponent's root reach. Solving the gadget gives a
strategy for us under which no opponent hand gets more than
``max(constraint, value)``, so an opponent who could not beat the constraints
before cannot beat them now (Theorem 18). The gadget's {follow, terminate}
choice is updated by regret-matching+ inside the solver's kernel
(:mod:`strategies.resolve._kernels`), right after each opponent pass.

Without constraints (:func:`resolve` with ``constraint=None``) the lookahead is
solved with both ranges fixed: the root solve of a hand (both ranges uniform)
and *unsafe* re-solving (the opponent's range from a trunk strategy), which
Burch §5.4.1 contrasts with safe re-solving.

Values are the kernels' counterfactual values (chips, weighted by the other
position's root reach): with our root range ``r`` an opponent hand's value is
``sum_h r[h] * (its chips against h, over the boards below)``, the units the
constraints must be in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from poker.state import State
from strategies.cfr.solvers.solver import Algorithm, Solver, SolverError, to_kernel_layout
from strategies.cfr.tree import _kernels as _engine
from strategies.cfr.tree.public import Tree, TreeError
from strategies.resolve import _kernels
from strategies.resolve.lookahead import build_lookahead
from strategies.resolve.street_tree import StreetTree

__all__ = ["Resolution", "ResolveError", "resolve", "resolve_tree"]

# numba dispatchers typed as plain callables (mypy reads them as fixed signatures).
_RUN_GADGET: Callable[..., int] = _kernels.run_gadget_iterations
_POSITION_VALUES: Callable[..., None] = _kernels.position_values

#: Iterations per kernel call under a time budget (how often the clock is read).
TIME_BATCH = 25


class ResolveError(ValueError):
    """Ranges or constraints that do not fit the lookahead."""


@dataclass(frozen=True, eq=False)
class Resolution:
    """The result of one re-solve.

    Attributes:
        tree: the lookahead.
        position: the re-solving position (whose root decision this is).
        strategy: the average strategy ``float64[D, A, H]`` (both positions'
            rows; ours is what we play).
        ranges: root reach ``float64[2, H]`` used: our range, and the opponent's
            (its last follow probabilities in a gadget solve).
        constraint: the opponent's constraints ``float64[H]`` (None: no gadget).
        br_values: ``float64[2, N, H]``: each position's counterfactual
            best-response values at every node against the other position's
            average strategy, with the root ranges above (the opponent's row is
            what continual re-solving carries; our row is meaningful only when
            the opponent's range is, i.e. without a gadget).
        iterations: CFR+ iterations run.
        seconds: wall time of the solve.
    """

    tree: Tree | StreetTree
    position: int
    strategy: npt.NDArray[np.float64]
    ranges: npt.NDArray[np.float64]
    constraint: npt.NDArray[np.float64] | None
    br_values: npt.NDArray[np.float64]
    iterations: int
    seconds: float

    @property
    def opponent(self) -> int:
        return 1 - self.position

    def root_policy(self) -> npt.NDArray[np.float64]:
        """Our average strategy at the root, ``float64[H, n_root_actions]``."""
        n = int(self.tree.num_children[0])
        row = int(self.tree.decision_index[0])
        policy: npt.NDArray[np.float64] = self.strategy[row, :n, :].T.copy()
        return policy

    def opponent_root_values(self) -> npt.NDArray[np.float64]:
        """The opponent's best-response counterfactual values at the root."""
        values: npt.NDArray[np.float64] = self.br_values[self.opponent, 0].copy()
        return values

    def values_after_chance(
        self, node: int, board: tuple[int, ...]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]:
        """At chance node ``node``, for the deal that made ``board`` (each
        round's cards ascending, as the tree lists them): the mask of the hands
        that survive it, the opponent's values below it, in this re-solve's
        units (per-board values, not weighted by the deal's probability), and
        the node below (-1 where the lookahead stops at the chance node)."""
        tree = self.tree
        for child in tree.children(node):
            if isinstance(tree, Tree) and tree.boards[tree.board_index[child]] == board:
                mask = tree.board_mask[tree.board_index[child]]
                values: npt.NDArray[np.float64] = self.br_values[self.opponent, child]
                return mask, values, child
        raise TreeError(f"board {list(board)} is not a deal of the lookahead's chance node")

    def constraint_excess(self) -> float:
        """``max_h (best-response value - constraint)`` over the opponent hands
        it may hold: how far the re-solved strategy misses its constraints
        (at most the gadget's solution error; 0 without a gadget)."""
        if self.constraint is None:
            return 0.0
        mask = self.tree.board_mask[self.tree.board_index[0]] > 0
        return float((self.opponent_root_values() - self.constraint)[mask].max())


class _GadgetSolver(Solver):
    """The engine's :class:`Solver` with the gadget kernel as its iteration."""

    def __init__(self, tree: Tree, ranges: npt.NDArray[np.float64], opponent: int, constraint: npt.NDArray[np.float64]):
        super().__init__(tree, Algorithm.CFR_PLUS, ranges=ranges)
        width = self._root_reach.shape[1]
        self.opponent = opponent
        self._constraint = np.zeros(width)
        self._constraint[: tree.num_hands] = constraint
        self._mask = np.zeros(width)
        self._mask[: tree.num_hands] = tree.board_mask[tree.board_index[0]]
        self._gadget_regret = np.zeros((2, width))
        self._root_reach[opponent] = 0.5 * self._mask  # regret matching over two actions with no regret yet

    def run(self, iterations: int) -> None:
        if iterations <= 0:
            return
        head, state = self._kernel_args()
        gadget = (self.opponent, self._constraint, self._mask, self._gadget_regret)
        self.iteration = _RUN_GADGET(*head, self.iteration + 1, iterations, state, gadget) - 1

    @property
    def follow(self) -> npt.NDArray[np.float64]:
        follow: npt.NDArray[np.float64] = self._root_reach[self.opponent, : self.tree.num_hands].copy()
        return follow


def _run_budget(solver: Solver, iterations: int, seconds: float) -> None:
    """``iterations`` iterations, or as many as fit in ``seconds`` if that is positive
    (at least one batch)."""
    if seconds <= 0:
        solver.run(iterations)
        return
    deadline = time.perf_counter() + seconds
    while True:
        solver.run(TIME_BATCH)
        if time.perf_counter() >= deadline:
            return


def resolve_tree(
    tree: Tree,
    position: int,
    our_range: npt.NDArray[np.float64],
    *,
    constraint: npt.NDArray[np.float64] | None = None,
    opponent_range: npt.NDArray[np.float64] | None = None,
    iterations: int = 1000,
    seconds: float = 0.0,
) -> Resolution:
    """Solve ``tree`` for ``position`` with CFR+ (alternating updates, linear
    average); the root may be either position's decision (the gadget's opponent
    then chooses terminate or follow before its own first action): with the gadget if ``constraint`` is given (the opponent's range
    is then the gadget's), else with ``opponent_range`` fixed (default: every
    hand weight 1). ``seconds`` > 0 replaces the iteration count by a time
    budget (the result then depends on the machine's speed).

    Raises:
        ResolveError: a range or constraint of the wrong shape, or a negative range.
    """
    if tree.kind[0] != _engine.DECISION:
        raise ResolveError("the lookahead's root is not a decision")
    ranges, constraint_vector = check_inputs(tree.num_hands, position, our_range, constraint, opponent_range, iterations, seconds)
    opponent = 1 - position
    start = time.perf_counter()
    try:
        solver: Solver
        if constraint_vector is None:
            solver = Solver(tree, Algorithm.CFR_PLUS, ranges=ranges)
        else:
            solver = _GadgetSolver(tree, ranges, opponent, constraint_vector)
    except SolverError as error:
        raise ResolveError(str(error)) from None
    _run_budget(solver, iterations, seconds)
    strategy = solver.average_strategy()
    used = solver.root_reach.copy()
    if isinstance(solver, _GadgetSolver):
        used[opponent] = solver.follow
    br_values = _best_response_values(tree, strategy, used)
    return Resolution(
        tree=tree,
        position=position,
        strategy=strategy,
        ranges=used,
        constraint=constraint_vector,
        br_values=br_values,
        iterations=solver.iteration,
        seconds=time.perf_counter() - start,
    )


def resolve(
    game: Game,
    state: State,
    board: tuple[int, ...],
    our_range: npt.NDArray[np.float64],
    *,
    sizes: tuple[tuple[float, ...], ...] = ((1.0,),),
    constraint: npt.NDArray[np.float64] | None = None,
    opponent_range: npt.NDArray[np.float64] | None = None,
    iterations: int = 1000,
    seconds: float = 0.0,
) -> Resolution:
    """:func:`resolve_tree` on the lookahead at the real ``state`` and ``board``
    (:func:`strategies.resolve.lookahead.build_lookahead` with ``sizes``) for the
    position to act."""
    tree = build_lookahead(game, state, board, sizes)
    return resolve_tree(
        tree,
        state.current_player(),
        our_range,
        constraint=constraint,
        opponent_range=opponent_range,
        iterations=iterations,
        seconds=seconds,
    )


def check_inputs(
    n_hands: int,
    position: int,
    our_range: npt.NDArray[np.float64],
    constraint: npt.NDArray[np.float64] | None,
    opponent_range: npt.NDArray[np.float64] | None,
    iterations: int,
    seconds: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """The root ranges ``[2, H]`` (the opponent's 1 per hand unless
    ``opponent_range`` is given) and the constraint vector, checked.

    Raises:
        ResolveError: a bad position, shape, negative range or iteration count.
    """
    if position not in (0, 1):
        raise ResolveError(f"the re-solving position must be 0 or 1, got {position}")
    ranges = np.ones((2, n_hands))
    ranges[position] = _vector(our_range, n_hands, "our range")
    if opponent_range is not None:
        if constraint is not None:
            raise ResolveError("a gadget solve takes the opponent's range from the gadget, not opponent_range")
        ranges[1 - position] = _vector(opponent_range, n_hands, "the opponent's range")
    if (ranges < 0).any():
        raise ResolveError("ranges must be non-negative")
    if iterations < 1 and seconds <= 0:
        raise ResolveError(f"a re-solve needs at least one iteration, got {iterations}")
    vector = None if constraint is None else _vector(constraint, n_hands, "the constraint").copy()
    return ranges, vector


def _vector(values: npt.NDArray[np.float64], n_hands: int, what: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (n_hands,):
        raise ResolveError(f"{what} must have shape ({n_hands},), got {array.shape}")
    if not np.isfinite(array).all():
        raise ResolveError(f"{what} holds a value that is not finite")
    return array


def profile_values(
    tree: Tree, strategy: npt.NDArray[np.float64], ranges: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Both positions' counterfactual values ``float64[2, N, H]`` when both play
    ``strategy`` from the root ``ranges`` (zero-sum: at the root
    ``ranges[0] . v[0] + ranges[1] . v[1] = 0``)."""
    return _best_response_values(tree, strategy, ranges, _engine.MODE_VALUE)


def _best_response_values(
    tree: Tree, strategy: npt.NDArray[np.float64], ranges: npt.NDArray[np.float64], mode: int = _engine.MODE_BEST_RESPONSE
) -> npt.NDArray[np.float64]:
    """Each position's best-response counterfactual values at every node against
    the other's part of ``strategy``, ``float64[2, N, H]`` (with ``mode``
    ``MODE_VALUE``: the values of ``strategy`` itself)."""
    width = max(_engine.FIXED_HANDS, tree.num_hands)
    arrays = tree.kernel_arrays if width == tree.num_hands else tree.padded_kernel_arrays(width)
    kernel_strategy = np.zeros((tree.max_actions, tree.num_decisions, width))
    kernel_strategy[..., : tree.num_hands] = to_kernel_layout(strategy)
    root = np.zeros((2, width))
    root[:, : tree.num_hands] = ranges
    reach = np.zeros((2, tree.num_nodes, width))
    values = np.zeros((2, tree.num_nodes, width))
    for position in range(2):
        _POSITION_VALUES(
            arrays, tree.payoff, kernel_strategy, np.int64(mode), root, reach, values[position], position
        )
    result: npt.NDArray[np.float64] = values[..., : tree.num_hands].copy()
    return result
