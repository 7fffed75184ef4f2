"""The counterfactual-value network: its file format and its inference, in plain
numpy (no training library is needed to play).

DeepStack-Leduc's value net (github.com/lifrordi/DeepStack-Leduc) sits at the start of the second
street: it reads both players' ranges and the pot and answers both players'
counterfactual values per private hand. Here:

* **inputs**: each player's range over the private hands that survive the
  board (masked, normalised to sum 1), in *strength order* (by rank on the
  board, weakest first, then by card), and the pot (chips each player has
  committed) divided by the stack. The board itself is not an input: in Leduc
  every board is the same game under this relabelling (the lower rank's two
  cards, the higher rank's two, the pair), so every solved situation teaches
  the net all six boards (the trainer accepts only such games: one hole card,
  one board card);
* **outputs**: both players' values per surviving hand, in the same order, as
  fractions of the pot, for those normalised ranges (so a value is in "pots won per unit of opponent range");
* **zero-sum correction** (DeepStack's outer layer), applied after the last
  layer: the error ``e = r_0 . y_0 + r_1 . y_1`` of each row is split evenly,
  ``y_p -= e / 2``, so the two players' range-weighted values always sum to 0;
* hidden layers are ``ReLU(x W + b)``; the last layer is linear.

Counterfactual chips come back by undoing the normalisation: ``v_p = y_p * pot *
(sum of the other player's reach)``, since values are linear in the other
player's reach.

**File** (``.npz``, compressed, read with ``allow_pickle=False``): ``header`` (a JSON string:
``format`` (``resolve-values/2``), ``game`` as a game-definition text, ``round`` (0-based) whose start
the net evaluates, ``layers`` (the widths), the ``command`` that wrote it, and
training figures) and ``w0, b0, w1, b1, ...`` (float64). :func:`load_value_net`
checks every shape against the game and fails with one line naming the file.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, GameDefError, format_game, parse_game
from strategies.cfr.file_io import atomic_output
from strategies.resolve import _kernels

__all__ = [
    "FORMAT",
    "ValueNet",
    "ValueNetError",
    "encode",
    "input_width",
    "load_value_net",
    "save_value_net",
    "strength_order",
    "surviving_hands",
]

FORMAT = "resolve-values/2"

_FORWARD: Callable[..., None] = _kernels.forward_rows


class ValueNetError(ValueError):
    """A value-net file that cannot be read or does not fit the game."""


def strength_order(game: Game, board: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """The private hands that share no card with ``board``, weakest first on it
    (ties by card): the network's hand axis, ``int64[V]``."""
    from poker.evaluate import rank_hands

    hands = private_hands(game).astype(np.int64)
    valid = np.flatnonzero(~(hands[:, :, None] == np.array(board, dtype=np.int64)[None, None, :]).any(axis=(1, 2)))
    ranks = rank_hands(np.concatenate([hands[valid], np.tile(np.array(board, dtype=np.int64), (len(valid), 1))], axis=1))
    order: npt.NDArray[np.int64] = valid[np.lexsort((valid, ranks))]
    return order


def surviving_hands(game: Game) -> int:
    """``V``: the private hands that share no card with a full board."""
    hands = private_hands(game)
    deck = sorted(game.deck())
    board = tuple(deck[: game.total_board_cards(game.num_rounds - 1)])
    return int((~(hands.astype(np.int64)[:, :, None] == np.array(board)[None, None, :]).any(axis=(1, 2))).sum())


def input_width(game: Game) -> int:
    """Inputs of a value net for ``game``: two ranges over the surviving hands and the pot."""
    return 2 * surviving_hands(game) + 1


def encode(
    game: Game, ranges: npt.NDArray[np.float64], pots: npt.NDArray[np.float64], orders: list[npt.NDArray[np.int64]]
) -> npt.NDArray[np.float64]:
    """The network's input rows ``[N, input_width]`` for normalised ``ranges``
    ``[2, N, H]``, ``pots[N]`` (chips each) and each row's :func:`strength_order`."""
    rows = np.arange(len(orders))[:, None]
    order = np.array(orders, dtype=np.int64).reshape(len(orders), -1)
    pot = (np.asarray(pots, dtype=np.float64) / float(game.stack[0]))[:, None]
    inputs: npt.NDArray[np.float64] = np.concatenate([ranges[0][rows, order], ranges[1][rows, order], pot], axis=1)
    return inputs


@dataclass(frozen=True, eq=False)
class ValueNet:
    """A loaded value network (see the module docstring)."""

    game: Game
    round: int
    weights: tuple[npt.NDArray[np.float64], ...]
    biases: tuple[npt.NDArray[np.float64], ...]
    header: dict[str, Any] = field(default_factory=dict)
    #: Inference in plain loops (:func:`strategies.resolve._kernels.forward_rows`):
    #: the same bits on every machine, about 3 times slower than numpy's BLAS
    #: product. ``arena train-values --refine`` plays the agent this way so that
    #: the file it writes does not depend on the CPU.
    portable: bool = False
    _orders: dict[tuple[int, ...], npt.NDArray[np.int64]] = field(default_factory=dict)
    _block_cache: list[npt.NDArray[np.float64] | None] = field(default_factory=list)

    def as_portable(self) -> ValueNet:
        """This network with :attr:`portable` inference."""
        return ValueNet(self.game, self.round, self.weights, self.biases, self.header, portable=True)

    def forward(self, inputs: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The raw outputs ``[N, 2H]`` (pot fractions, before the zero-sum correction)."""
        if self.portable:
            out = np.empty((len(inputs), self.weights[-1].shape[1]))
            _FORWARD(np.ascontiguousarray(inputs, dtype=np.float64), self.weights, self.biases, out)
            return out
        x = inputs
        last = len(self.weights) - 1
        blocks = self._blocks()
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            block = blocks[i] if 0 < i < last else None
            if block is not None:  # [N, K*n] as K products of [N, n] by [n, n]
                x = np.matmul(x.reshape(len(x), block.shape[0], -1).transpose(1, 0, 2), block).transpose(1, 0, 2).reshape(len(x), -1) + b
            else:
                x = x @ w + b
            if i < last:
                x = np.maximum(x, 0.0)
        return x

    def _blocks(self) -> list[npt.NDArray[np.float64] | None]:
        """The hidden layers of an averaged file (``nets`` > 1 in the header,
        :func:`strategies.resolve.train.average_nets`) as their diagonal
        blocks ``[K, n, n]`` where every weight off the blocks is 0, so
        inference multiplies K small matrices instead of one K times the
        work (the zeros it skips add nothing); None for other layers."""
        known = self._block_cache
        if known:
            return known
        k = self.header.get("nets", 1)
        for w in self.weights:
            block: npt.NDArray[np.float64] | None = None
            if isinstance(k, int) and k > 1 and w.shape[0] == w.shape[1] and w.shape[0] % k == 0:
                n = w.shape[0] // k
                diagonal = np.stack([w[j * n : (j + 1) * n, j * n : (j + 1) * n] for j in range(k)])
                off = w.copy()
                for j in range(k):
                    off[j * n : (j + 1) * n, j * n : (j + 1) * n] = 0.0
                block = diagonal if not off.any() else None
            known.append(block)
        return known

    def pot_fractions(
        self, ranges: npt.NDArray[np.float64], pots: npt.NDArray[np.float64], boards: list[tuple[int, ...]]
    ) -> npt.NDArray[np.float64]:
        """Zero-sum corrected values ``[2, N, H]`` as pot fractions for normalised
        ``ranges`` ``[2, N, H]``; 0 on hands that clash with the row's board."""
        n_rows, n_hands = ranges.shape[1], ranges.shape[2]
        orders = [self._order(board) for board in boards]
        raw = self.forward(encode(self.game, ranges, pots, orders))
        surviving = raw.shape[1] // 2
        y = np.zeros((2, n_rows, n_hands))
        rows = np.arange(n_rows)[:, None]
        order = np.array(orders, dtype=np.int64).reshape(n_rows, surviving)
        y[0, rows, order] = raw[:, :surviving]
        y[1, rows, order] = raw[:, surviving:]
        error = (ranges * y).sum(axis=(0, 2))
        y[:, rows, order] -= error[None, :, None] / 2.0
        return y

    def _clash(self, board: tuple[int, ...]) -> npt.NDArray[np.bool_]:
        hands = private_hands(self.game).astype(np.int64)
        clash: npt.NDArray[np.bool_] = (hands[:, :, None] == np.array(board, dtype=np.int64)[None, None, :]).any(axis=(1, 2))
        return clash

    def _order(self, board: tuple[int, ...]) -> npt.NDArray[np.int64]:
        known = self._orders.get(board)
        if known is None:
            known = self._orders[board] = strength_order(self.game, board)
        return known

    def values(
        self, reach: npt.NDArray[np.float64], pots: npt.NDArray[np.float64], boards: list[tuple[int, ...]]
    ) -> npt.NDArray[np.float64]:
        """Counterfactual values ``[2, N, H]`` (chips) for the unnormalised
        ``reach[2, N, H]`` (zero on hands that clash with each row's board)."""
        totals = reach.sum(axis=2)  # [2, N]
        safe = np.where(totals > 0, totals, 1.0)
        ranges = reach / safe[:, :, None]
        # A player with no reach at all is asked as if it held every hand
        # equally (its values then only say what entering would be worth).
        empty = totals <= 0
        if empty.any():
            for p, row in zip(*np.nonzero(empty), strict=True):
                valid = np.ones(ranges.shape[2])
                valid[self._clash(boards[row])] = 0.0
                ranges[p, row] = valid / valid.sum()
        y = self.pot_fractions(ranges, pots, boards)
        scale = np.asarray(pots, dtype=np.float64)[None, :] * totals[::-1]  # the other player's total
        out: npt.NDArray[np.float64] = y * scale[:, :, None]
        return out


def save_value_net(
    path: str | Path,
    game: Game,
    round_: int,
    weights: list[npt.NDArray[np.float64]],
    biases: list[npt.NDArray[np.float64]],
    extra: dict[str, Any],
) -> None:
    """Write a value-net file (the module docstring's format) to exactly ``path``,
    atomically: a Ctrl-C at the end of a long training run leaves the previous
    file whole, not a truncated archive."""
    header = {
        "format": FORMAT,
        "game": format_game(game),
        "round": round_,
        "layers": [int(weights[0].shape[0])] + [int(w.shape[1]) for w in weights],
        **extra,
    }
    arrays: dict[str, npt.NDArray[Any]] = {"header": np.array(json.dumps(header, sort_keys=True))}
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        arrays[f"w{i}"] = np.ascontiguousarray(w, dtype=np.float64)
        arrays[f"b{i}"] = np.ascontiguousarray(b, dtype=np.float64)
    with atomic_output(Path(path)) as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]  # an averaged file is mostly zeros


def load_value_net(path: str | Path, game: Game) -> ValueNet:
    """Read a value-net file for ``game``.

    Raises:
        ValueNetError: one line naming the file: unreadable, not a value net,
            another game, or arrays whose shapes do not chain.
    """
    where = f"value net {str(path)!r}"
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise ValueNetError(f"{where}: no such file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise ValueNetError(f"{where}: not a numpy .npz file ({type(error).__name__})") from None
    if "header" not in arrays or arrays["header"].dtype.kind != "U" or arrays["header"].shape != ():
        raise ValueNetError(f"{where}: no JSON header (not written by arena train-values)")
    try:
        header = json.loads(str(arrays["header"]))
    except json.JSONDecodeError:
        raise ValueNetError(f"{where}: the header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueNetError(f"{where}: format is not {FORMAT!r}")
    try:
        stored = parse_game(str(header.get("game", "")), source=where)
    except GameDefError as error:
        raise ValueNetError(f"{where}: its game does not parse ({error})") from None
    if stored != game:
        raise ValueNetError(f"{where}: trained for another game ({stored.betting.value}, stack {stored.stack[0]})")
    round_ = header.get("round")
    if not isinstance(round_, int) or not 1 <= round_ < game.num_rounds:
        raise ValueNetError(f"{where}: round {round_!r} is not a later round of the game")
    n_layers = sum(1 for name in arrays if name.startswith("w"))
    weights, biases = [], []
    width = input_width(game)
    for i in range(n_layers):
        w, b = arrays.get(f"w{i}"), arrays.get(f"b{i}")
        if w is None or b is None or w.ndim != 2 or b.shape != (w.shape[1],) or w.shape[0] != width:
            raise ValueNetError(f"{where}: layer {i} has no weights of shape ({width}, n) with n biases")
        if w.dtype != np.float64 or b.dtype != np.float64 or not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueNetError(f"{where}: layer {i} is not finite float64")
        weights.append(w)
        biases.append(b)
        width = w.shape[1]
    if not weights or width != 2 * surviving_hands(game):
        raise ValueNetError(f"{where}: the last layer must give {2 * surviving_hands(game)} values (two per hand)")
    return ValueNet(game, round_, tuple(weights), tuple(biases), header)
