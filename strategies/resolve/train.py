"""Training the counterfactual-value network that continual re-solving asks at
the end of the first street (``arena train-values``; DeepStack-Leduc's set-up;
github.com/lifrordi/DeepStack-Leduc).

**Situations.** Each is a public state at the start of the game's last round:
a random board, a random pot (the chips each player has committed: with
probability 1/8 the checked-through minimum, else uniform over the raises the
first round allows, up to one chip short of all-in) and two random ranges from
DeepStack's recursive generator (the hands that survive the board sorted by
strength, the mass split at a uniform random fraction between the weaker and
the stronger half, recursively). The rest of the hand is solved exactly with
the engine's CFR+ (``--iterations``, fold / call / pot / all-in as the
re-solving agent bets) from those ranges, and the targets are both players'
counterfactual values of the average strategy, per hand, divided by the pot
(:mod:`strategies.resolve.values` gives the input and output layout: hands in
strength order on the board, which makes every Leduc board the same game).

**Training.** A two-hidden-layer ReLU network (``--hidden`` units each) fitted
by Adam (learning rate 1e-3, batches of 128) to the squared error on the
hands that can be held, ``--epochs`` passes (the last quarter at a tenth of
the learning rate). The error is that of the *zero-sum corrected* outputs
(DeepStack trains its outer layer with the net, and play reads only corrected
values): on the same situations and seeds this took the re-solving agent from
3.00 and 2.56 to 1.63 and 1.92 DSL units of exploitability
(``benchmarks/resolve_leduc.py``'s measure) at the same validation error, and
the mean over nets from 2.54 to 1.90 (README, "Continual re-solving"). The
last tenth of the situations is held out, and the validation error is written
into the file beside the error of the best constant predictor (each output's
training mean). ``--nets K`` fits K networks side by side and averages them.

**Refinement** (``--refine R``, default 2 rounds): the network is then asked
what play asks it. Each round plays the continual re-solving agent with the
current network through every first-street decision of its own betting tree
(:func:`agent_questions`), draws ``--refine-situations`` of the questions its
re-solves put to the network, solves them exactly as above, adds them to the
situations and trains afresh. CFR+ asks about the ranges of its *current*
strategies, which put exactly 0 on many hands and concentrate where the
generator's ranges never do; a hand a player does not hold carries no error
in those situations (its value is left to the network's extrapolation, as
before). Measured with ``benchmarks/resolve_leduc.py``'s like-for-like figure
on the nets of seeds 0-2 (4 nets each): 1.48, 2.01, 1.28 DSL units without
refinement, 1.16, 0.87, 0.86 after one round, 0.51, 0.70, 0.66 after two (the
default; a third, seed 0: 0.66).

The training loop runs in numba with plain loops (no BLAS), the refinement's
agent asks its network in plain loops too (:attr:`ValueNet.portable`), and
every random draw comes from numpy generators seeded by ``--seed``, so the
command writes the same file bit for bit wherever it runs; the file's header
records the command.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, load_game
from poker.state import CALL, Action, State
from strategies.resolve import _kernels
from strategies.resolve.evaluators import NetEvaluator

if TYPE_CHECKING:
    from strategies.cfr.tree.public import Tree
    from strategies.resolve.values import ValueNet

__all__ = ["Dataset", "generate", "train", "agent_questions", "agent_situations", "merge", "check_game", "TrainError"]

_EPOCH: Callable[..., int] = _kernels.train_epoch

#: Refinement rounds and situations per round by default (``--refine``, ``--refine-situations``).
REFINE_ROUNDS = 2
REFINE_SITUATIONS = 10000

LEARNING_RATE = 1e-3
#: From this fraction of the epochs on, the learning rate is a tenth.
DECAY_AT = 0.75
BATCH = 128


class TrainError(ValueError):
    """A game or option the trainer cannot use."""


def check_game(game: Game) -> None:
    """Refuse what the trainer cannot solve: it needs a two-player no-limit game
    whose last round can be solved exactly over every private hand."""
    if game.num_players != 2 or game.is_limit or game.num_rounds < 2:
        raise TrainError("train-values trains two-player no-limit games of two or more rounds (e.g. leduc.nolimit)")
    if game.num_hole_cards != 1 or game.total_board_cards(game.num_rounds - 1) != 1:
        raise TrainError(
            "train-values needs one hole card and one board card (Leduc-like: every board is then the same game in"
            " strength order); hold'em needs bucketed ranges, not built"
        )


def _round_start(game: Game, pot: int) -> State:
    """The state at the start of the last round with ``pot`` chips committed
    by each player: a raise to ``pot`` and a call (or checks) in the first
    round, checks in the others."""
    state = State(game)
    if pot > max(state.spent):
        state = state.apply(Action.raise_to(pot)).apply(CALL)
    while state.round < game.num_rounds - 1:
        state = state.apply(CALL)
    return state


def _random_range(strength: npt.NDArray[np.int32], valid: npt.NDArray[np.bool_], rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """DeepStack's recursive range generator over the ``valid`` hands sorted by
    ``strength``: each segment's mass is split between its weaker and stronger
    halves at a uniform random fraction. Normalised to sum 1."""
    order = np.flatnonzero(valid)[np.argsort(strength[valid], kind="stable")]
    mass = np.zeros(len(strength))
    stack: list[tuple[int, int, float]] = [(0, len(order), 1.0)]
    while stack:
        low, high, share = stack.pop()
        if high - low == 1:
            mass[order[low]] = share
            continue
        middle = (low + high) // 2
        u = float(rng.random())
        stack.append((low, middle, share * u))
        stack.append((middle, high, share * (1.0 - u)))
    return mass


class Dataset:
    """Inputs ``x [N, in]``, targets ``y [N, 2V]`` and output weights ``m [N, 2V]``."""

    def __init__(self, x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], m: npt.NDArray[np.float64]):
        self.x, self.y, self.m = x, y, m


def generate(
    game: Game, situations: int, *, iterations: int, rng: np.random.Generator, progress: Callable[[int], object] | None = None
) -> Dataset:
    """``situations`` random situations solved exactly (module docstring)."""
    from poker.deal import private_hands
    from poker.evaluate import rank_hands

    check_game(game)
    hands = private_hands(game).astype(np.int64)
    deck = np.array(sorted(game.deck()), dtype=np.int64)
    n_board = game.total_board_cards(game.num_rounds - 1)
    low = State(game).raise_bounds()
    first_raise = low[0] if low is not None else game.stack[0]
    checked = max(game.blind)
    solver = _SituationSolver(game, iterations)
    for _ in range(situations):
        board = tuple(int(c) for c in np.sort(rng.choice(deck, n_board, replace=False)))
        pot = checked if rng.random() < 0.125 else int(rng.integers(first_raise, game.stack[0]))
        valid = ~(hands[:, :, None] == np.array(board)[None, None, :]).any(axis=(1, 2))
        strength = np.full(len(hands), -1, dtype=np.int32)
        strength[valid] = rank_hands(np.concatenate([hands[valid], np.tile(np.array(board), (int(valid.sum()), 1))], axis=1))
        ranges = np.stack([_random_range(strength, valid, rng), _random_range(strength, valid, rng)])
        solver.add(board, pot, ranges)
        if progress is not None:
            progress(1)
    return solver.dataset()


class _SituationSolver:
    """Solves situations at the start of the last round exactly and keeps them
    as training rows (the module docstring's inputs and targets)."""

    def __init__(self, game: Game, iterations: int, *, keep_trees: bool = False) -> None:
        """``keep_trees``: keep each (board, pot)'s tree for the next situation
        on it (the agent's questions sit on a few pots; the generator's pots
        rarely repeat, and thousands of trees would fill memory)."""
        self.game = game
        self.iterations = iterations
        self._trees: dict[tuple[tuple[int, ...], int], Tree] | None = {} if keep_trees else None
        self.x: list[npt.NDArray[np.float64]] = []
        self.y: list[npt.NDArray[np.float64]] = []
        self.m: list[npt.NDArray[np.float64]] = []

    def add(self, board: tuple[int, ...], pot: int, ranges: npt.NDArray[np.float64], *, held_only: bool = False) -> None:
        """Solve ``ranges`` (``[2, H]``, each summing to 1 over the hands that
        survive ``board``) with ``pot`` chips committed by each player. With
        ``held_only`` the error is counted only on the hands a player holds
        with positive probability (a hand outside a range has no average
        strategy of its own: its value says nothing)."""
        from strategies.cfr.solvers.solver import Solver
        from strategies.cfr.tree.public import NO_LIMIT_DEFAULT, build_tree
        from strategies.resolve.resolver import profile_values
        from strategies.resolve.values import encode, strength_order

        tree = None if self._trees is None else self._trees.get((board, pot))
        if tree is None:
            tree = build_tree(self.game, NO_LIMIT_DEFAULT, root=_round_start(self.game, pot), board=board)
            if self._trees is not None:
                self._trees[(board, pot)] = tree
        solver = Solver(tree, ranges=ranges)
        solver.run(self.iterations)
        values = profile_values(tree, solver.average_strategy(), ranges)[:, 0]
        order = strength_order(self.game, board)
        self.x.append(encode(self.game, ranges[:, None, :], np.array([float(pot)]), [order])[0])
        self.y.append(np.concatenate([values[0, order], values[1, order]]) / pot)
        held = (ranges > 0).astype(np.float64) if held_only else np.ones_like(ranges)
        self.m.append(np.concatenate([held[0, order], held[1, order]]))

    def dataset(self) -> Dataset:
        return Dataset(np.array(self.x), np.array(self.y), np.array(self.m))


class _RecordingEvaluator(NetEvaluator):
    """The value net as the agent asks it, keeping every question: the board,
    the leaves' pots and both players' reach ``[2, L, H]`` at them."""

    def __init__(self, game: Game, net: ValueNet) -> None:
        super().__init__(game, net)
        self.asked: list[tuple[tuple[int, ...], npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []

    def values_by_deal(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], list[tuple[int, ...]], npt.NDArray[np.float64]]:
        self.asked.append((board, pots.copy(), reach.copy()))
        return super().values_by_deal(board, pots, reach)


def agent_questions(
    game: Game, net: ValueNet, *, iterations: int = 1000, progress: Callable[[int], object] | None = None
) -> list[tuple[tuple[int, ...], int, npt.NDArray[np.float64]]]:
    """Every question the continual re-solving agent puts to ``net`` in play:
    ``(board, pot, ranges [2, H])`` at the start of the next street, the ranges
    normalised (both players hold some hand).

    The agent (``resolve:evaluator=net`` with ``iterations`` per re-solve,
    default its own 1000, and its fold/call/pot/all-in) re-solves at every first-street decision of its own
    betting tree, both positions, as in play (``progress(1)`` after each);
    each of its first-street re-solves asks the net, at every CFR iteration,
    about each deal of the next card at each depth-limit leaf. Those ranges are
    the ones CFR+ plays through (its current strategies put exactly 0 on many
    hands), not the recursive generator's: a network trained on the generator
    alone is asked mostly far from what it saw. The network runs in plain
    loops here (:attr:`ValueNet.portable`), so the questions are the same on
    every machine."""
    from strategies.resolve.agent import ResolvingStrategy

    evaluator = _RecordingEvaluator(game, net.as_portable())
    agent = ResolvingStrategy(game, iterations=iterations, seed=0, evaluator=evaluator)
    frontier = [State(game)]
    while frontier:
        state = frontier.pop()
        if state.finished or state.round > 0:
            continue
        agent.resolution(state, ())
        if progress is not None:
            progress(1)
        frontier.extend(state.apply(action) for action in reversed(agent.actions(state)))
    questions = []
    masks: dict[tuple[int, ...], npt.NDArray[np.float64]] = {}
    for board, pots, reach in evaluator.asked:
        for deal in evaluator.deals(board):
            mask = masks.get(deal)
            if mask is None:
                mask = masks[deal] = evaluator.table.board_mask(deal)
            held = reach * mask[None, None, :]
            totals = held.sum(axis=2)
            for leaf in np.flatnonzero((totals > 0).all(axis=0)):
                questions.append((deal, int(pots[leaf]), held[:, leaf] / totals[:, leaf, None]))
    return questions


def agent_situations(
    game: Game,
    questions: list[tuple[tuple[int, ...], int, npt.NDArray[np.float64]]],
    count: int,
    *,
    iterations: int,
    rng: np.random.Generator,
    progress: Callable[[int], object] | None = None,
) -> Dataset:
    """``count`` of the agent's ``questions`` (:func:`agent_questions`), drawn
    uniformly by ``rng`` and solved exactly (``iterations`` CFR+ iterations
    each). A hand a player does not hold at all carries no error
    (:meth:`_SituationSolver.add`): its value there is the network's to
    extrapolate, as before."""
    chosen = np.sort(rng.choice(len(questions), size=min(count, len(questions)), replace=False))
    solver = _SituationSolver(game, iterations, keep_trees=True)
    for index in chosen:
        board, pot, ranges = questions[index]
        solver.add(board, pot, ranges, held_only=True)
        if progress is not None:
            progress(1)
    return solver.dataset()


def merge(first: Dataset, second: Dataset, rng: np.random.Generator) -> Dataset:
    """Both sets' rows in an order drawn by ``rng`` (the last tenth is held out)."""
    order = rng.permutation(len(first.x) + len(second.x))
    return Dataset(*(np.concatenate([a, b])[order] for a, b in ((first.x, second.x), (first.y, second.y), (first.m, second.m))))


def _predict(params: tuple[npt.NDArray[np.float64], ...], x: npt.NDArray[np.float64], zero_sum: bool) -> npt.NDArray[np.float64]:
    w0, b0, w1, b1, w2, b2 = params
    out: npt.NDArray[np.float64] = np.maximum(np.maximum(x @ w0 + b0, 0.0) @ w1 + b1, 0.0) @ w2 + b2
    if zero_sum:  # the correction play applies (strategies.resolve.values)
        ranges = x[:, : out.shape[1]]
        out = out - 0.5 * (ranges * out).sum(axis=1, keepdims=True)
    return out


def masked_mse(prediction: npt.NDArray[np.float64], data: Dataset) -> float:
    """Mean squared error over the outputs of hands that can be held."""
    return float((((prediction - data.y) ** 2) * data.m).sum() / data.m.sum())


def average_nets(nets: list[tuple[npt.NDArray[np.float64], ...]]) -> tuple[npt.NDArray[np.float64], ...]:
    """One two-hidden-layer network whose output is the mean of ``nets``' outputs:
    the first layers side by side, the second block-diagonal, the last stacked
    over the count. The file format and inference stay those of one network
    (the zero-sum correction is linear, so it commutes with the mean)."""
    def block_diagonal(blocks: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
        out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
        row = col = 0
        for b in blocks:
            out[row : row + b.shape[0], col : col + b.shape[1]] = b
            row, col = row + b.shape[0], col + b.shape[1]
        return out

    k = float(len(nets))
    return (
        np.concatenate([n[0] for n in nets], axis=1),
        np.concatenate([n[1] for n in nets]),
        block_diagonal([n[2] for n in nets]),
        np.concatenate([n[3] for n in nets]),
        np.concatenate([n[4] for n in nets]) / k,
        np.mean([n[5] for n in nets], axis=0),
    )


def train(
    data: Dataset,
    *,
    hidden: int,
    epochs: int,
    rng: np.random.Generator,
    zero_sum: bool = True,
    nets: int = 1,
    progress: Callable[[int], object] | None = None,
) -> tuple[tuple[npt.NDArray[np.float64], ...], dict[str, float]]:
    """Fit the network to the first 90 % of ``data``'s situations (on the zero-sum
    corrected outputs unless ``zero_sum`` is False); returns its parameters
    ``(w0, b0, w1, b1, w2, b2)`` and the validation errors on the rest
    (``validation_mse`` and ``constant_mse``, the best constant's). With
    ``nets`` > 1, that many networks are fitted (each from its own generator
    seeded by ``rng``; side by side on the machine's cores) and averaged
    (:func:`average_nets`):
    exploitability moves a lot between nets of the same error, and their
    mean is steadier."""
    n = len(data.x)
    cut = max(1, n - n // 10)
    fit = Dataset(data.x[:cut], data.y[:cut], data.m[:cut])
    held = Dataset(data.x[cut:], data.y[cut:], data.m[cut:]) if cut < n else fit
    sizes = [data.x.shape[1], hidden, hidden, data.y.shape[1]]

    def fit_one(seed: int) -> tuple[npt.NDArray[np.float64], ...]:
        own = np.random.default_rng(seed)
        params: list[npt.NDArray[np.float64]] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            params.append(own.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in))
            params.append(np.zeros(fan_out))
        packed = tuple(params)
        weights, biases = (packed[0], packed[2], packed[4]), (packed[1], packed[3], packed[5])
        moments = (tuple(np.zeros_like(w) for w in weights), tuple(np.zeros_like(b) for b in biases))
        squares = (tuple(np.zeros_like(w) for w in weights), tuple(np.zeros_like(b) for b in biases))
        step = 0
        try:
            for epoch in range(epochs):
                if stop.is_set():
                    break
                order = own.permutation(cut).astype(np.int64)
                rate = LEARNING_RATE if epoch < DECAY_AT * epochs else LEARNING_RATE / 10  # a last, finer quarter
                step = _EPOCH(fit.x, fit.y, fit.m, order, weights, biases, moments, squares, step, rate, BATCH, zero_sum)
                if progress is not None:
                    progress(1)
        except BaseException:
            stop.set()  # the others stop too, whichever network the main thread is waiting for
            raise
        return packed

    # Each network draws from its own generator, seeded in turn by ``rng``, so
    # they train side by side (the epoch kernel releases the GIL) to the same
    # bits. A Ctrl-C (in the main thread) or an error in any network stops the
    # others after their current epoch.
    seeds = [int(seed) for seed in rng.integers(0, 2**63, size=nets)]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, min(nets, os.cpu_count() or 1))) as pool:
        try:
            fitted = list(pool.map(fit_one, seeds))
        except BaseException:
            stop.set()
            raise
    packed = fitted[0] if nets == 1 else average_nets(fitted)
    mean = (fit.y * fit.m).sum(axis=0) / np.maximum(fit.m.sum(axis=0), 1.0)
    figures = {
        "validation_mse": masked_mse(_predict(packed, held.x, zero_sum), held),
        "constant_mse": masked_mse(np.broadcast_to(mean, held.y.shape), held),
        "training_mse": masked_mse(_predict(packed, fit.x, zero_sum), fit),
    }
    return packed, figures
