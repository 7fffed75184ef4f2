"""``arena train-values``: train the counterfactual-value network that continual
re-solving asks at the end of the first street (DeepStack-Leduc's set-up; seed
002 §5.2, §7).

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
training mean). The loop runs in numba with plain loops (no BLAS), and every
random draw comes from one numpy generator seeded by ``--seed``, so the
command writes the same file bit
for bit wherever it runs; the file's header records the command.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from poker.gamedef import Game, load_game
from poker.state import CALL, Action, State
from strategies.cfr.cli_dbr import _positive  # the one positive-integer option parser
from strategies.resolve import _kernels

__all__ = ["Dataset", "generate", "main", "train"]

_EPOCH: Callable[..., int] = _kernels.train_epoch

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
    from poker.evaluate import rank_hands
    from strategies.base import private_hands
    from strategies.cfr.solvers.solver import Solver
    from strategies.cfr.tree.public import NO_LIMIT_DEFAULT, build_tree
    from strategies.resolve.resolver import profile_values
    from strategies.resolve.values import encode, strength_order

    check_game(game)
    hands = private_hands(game).astype(np.int64)
    deck = np.array(sorted(game.deck()), dtype=np.int64)
    n_board = game.total_board_cards(game.num_rounds - 1)
    low = State(game).raise_bounds()
    first_raise = low[0] if low is not None else game.stack[0]
    checked = max(game.blind)
    xs, ys = [], []
    for _ in range(situations):
        board = tuple(int(c) for c in np.sort(rng.choice(deck, n_board, replace=False)))
        pot = checked if rng.random() < 0.125 else int(rng.integers(first_raise, game.stack[0]))
        valid = ~(hands[:, :, None] == np.array(board)[None, None, :]).any(axis=(1, 2))
        strength = np.full(len(hands), -1, dtype=np.int32)
        strength[valid] = rank_hands(np.concatenate([hands[valid], np.tile(np.array(board), (int(valid.sum()), 1))], axis=1))
        ranges = np.stack([_random_range(strength, valid, rng), _random_range(strength, valid, rng)])
        tree = build_tree(game, NO_LIMIT_DEFAULT, root=_round_start(game, pot), board=board)
        solver = Solver(tree, ranges=ranges)
        solver.run(iterations)
        values = profile_values(tree, solver.average_strategy(), ranges)[:, 0]
        order = strength_order(game, board)
        xs.append(encode(game, ranges[:, None, :], np.array([float(pot)]), [order])[0])
        ys.append(np.concatenate([values[0, order], values[1, order]]) / pot)
        if progress is not None:
            progress(1)
    y = np.array(ys)
    return Dataset(np.array(xs), y, np.ones_like(y))


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
    ``nets`` > 1, that many networks are fitted one after the other (each
    from the next draws of ``rng``) and averaged (:func:`average_nets`):
    exploitability moves a lot between nets of the same error, and their
    mean is steadier."""
    n = len(data.x)
    cut = max(1, n - n // 10)
    fit = Dataset(data.x[:cut], data.y[:cut], data.m[:cut])
    held = Dataset(data.x[cut:], data.y[cut:], data.m[cut:]) if cut < n else fit
    sizes = [data.x.shape[1], hidden, hidden, data.y.shape[1]]
    fitted = []
    for _ in range(nets):
        params: list[npt.NDArray[np.float64]] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            params.append(rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in))
            params.append(np.zeros(fan_out))
        packed = tuple(params)
        weights, biases = (packed[0], packed[2], packed[4]), (packed[1], packed[3], packed[5])
        moments = (tuple(np.zeros_like(w) for w in weights), tuple(np.zeros_like(b) for b in biases))
        squares = (tuple(np.zeros_like(w) for w in weights), tuple(np.zeros_like(b) for b in biases))
        step = 0
        for epoch in range(epochs):
            order = rng.permutation(cut).astype(np.int64)
            rate = LEARNING_RATE if epoch < DECAY_AT * epochs else LEARNING_RATE / 10  # a last, finer quarter
            step = _EPOCH(fit.x, fit.y, fit.m, order, weights, biases, moments, squares, step, rate, BATCH, zero_sum)
            if progress is not None:
                progress(1)
        fitted.append(packed)
    packed = fitted[0] if nets == 1 else average_nets(fitted)
    mean = (fit.y * fit.m).sum(axis=0) / np.maximum(fit.m.sum(axis=0), 1.0)
    figures = {
        "validation_mse": masked_mse(_predict(packed, held.x, zero_sum), held),
        "constant_mse": masked_mse(np.broadcast_to(mean, held.y.shape), held),
        "training_mse": masked_mse(_predict(packed, fit.x, zero_sum), fit),
    }
    return packed, figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="arena train-values", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", help="a two-player no-limit game with few private hands (leduc.nolimit)")
    parser.add_argument("--situations", type=_positive, default=20000, help="random situations solved (default 20000)")
    parser.add_argument("--epochs", type=_positive, default=100, help="passes over the training situations (100)")
    parser.add_argument("--iterations", type=_positive, default=300, help="CFR+ iterations per situation (300)")
    parser.add_argument("--hidden", type=_positive, default=128, help="units per hidden layer (128)")
    parser.add_argument("--nets", type=_positive, default=1, help="networks fitted and averaged into one (1)")
    parser.add_argument("--seed", type=int, default=0, help="seeds every random draw (0)")
    parser.add_argument("-o", "--output", required=True, help="the model file (.npz) to write")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    from strategies.resolve.values import save_value_net

    try:
        game = load_game(args.game)
        check_game(game)
    except (OSError, ValueError) as error:
        print(f"arena train-values: {error}", file=sys.stderr)
        return 2
    output = Path(args.output)
    if not output.parent.is_dir():
        print(f"arena train-values: cannot write {str(output)!r}: no such directory", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    with tqdm(total=args.situations, desc="solving situations", unit="situation", disable=args.no_progress) as bar:
        data = generate(game, args.situations, iterations=args.iterations, rng=rng, progress=bar.update)
    with tqdm(total=args.epochs * args.nets, desc="training", unit="epoch", disable=args.no_progress) as bar:
        params, figures = train(data, hidden=args.hidden, epochs=args.epochs, rng=rng, nets=args.nets, progress=bar.update)
    command = shlex.join(
        ["arena", "train-values", args.game, "--situations", str(args.situations), "--epochs", str(args.epochs),
         "--iterations", str(args.iterations), "--hidden", str(args.hidden), "--nets", str(args.nets), "--seed", str(args.seed), "-o", output.name]
    )
    extra = {"command": command, "situations": args.situations, "epochs": args.epochs, "seed": args.seed,
             "iterations": args.iterations, "nets": args.nets, **{k: round(v, 8) for k, v in figures.items()}}
    try:
        save_value_net(output, game, game.num_rounds - 1, list(params[0::2]), list(params[1::2]), extra)
    except OSError as error:
        print(f"arena train-values: cannot write {str(output)!r}: {error.strerror}", file=sys.stderr)
        return 1
    print(
        f"value net for {args.game}: {args.situations} situations, {args.epochs} epochs;"
        f" validation MSE {figures['validation_mse']:.6f} (pot fractions²) vs constant predictor"
        f" {figures['constant_mse']:.6f}; {time.perf_counter() - started:.1f} s -> {output}"
    )
    return 0
