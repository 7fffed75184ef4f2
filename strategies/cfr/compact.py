"""Compact playing files: what the equilibrium agent plays of a solve, and nothing else.

A strategy file (:mod:`strategies.cfr.strategy_file`) is also its solve's
checkpoint: the average strategy in float64 (or float32) beside the regrets and
the cumulative strategy, and a bucket table's card abstraction lives in the
user's cache, built on first use. A compact file (``.compact``) holds only what
:mod:`strategies.equilibrium` needs to play:

* the **average strategy, quantized**: every information set's
  probabilities ``p`` (normalised to sum 1) become whole numbers ``q`` summing
  to ``levels`` by largest remainders: ``floor(levels p)``, then one more to
  the entries with the largest fractional parts (ties to the first action);
  an all-zero information set stays all zero (the agent plays it uniformly,
  as it does the float file's). ``levels`` is 255 (``uint8``, the default:
  a quarter of float32) or 65535 (``uint16``; :data:`QUANTIZATIONS`). The
  agent plays ``q / levels`` exactly, so every probability moves by less than
  ``1 / levels`` (0.0039 for uint8), an action the float file never plays
  stays unplayed, and the largest difference the writer saw is in the header
  (``max_difference``);
* a bucket table's **card abstraction** (its look-up arrays,
  :class:`~strategies.cfr.abstraction.bucketing.BucketTables`), so a fresh
  checkout with an empty cache seats the bot at once;
* the strategy file's header (game, betting and card abstraction, layout,
  algorithm, settings, iterations, exploitability, tree digest), so a compact
  file is checked exactly as a strategy file is.

The layouts are the two-player ones and three-player public trees
(``public-tree``, ``buckets``, ``three-player``); three-player bucket tables
are not compacted. On disk it is the header-and-arrays file of
:mod:`strategies.cfr.file_io` with ``format`` :data:`FORMAT` and each array
deflated (zlib): the arrays map holds ``uint8`` blobs and the header's
``stored`` map says each one's dtype and shape once inflated.

Reading treats the file as untrusted, as :func:`~strategies.cfr.strategy_file.load_strategy`
does and with its checks (:func:`~strategies.cfr.strategy_file.header_tree`:
the header's schema, the tree sized before it is built, its digest), then: the
claimed dtype and shape of every stored array against the tree and the card
abstraction (``[D, A, H]`` on a public tree, ``[A, columns]`` of
:func:`~strategies.cfr.solvers.pcs.row_layout` for a bucket table), each
inflated size at most :data:`MAX_RATIO` times its blob (deflate's own
limit: a small file cannot claim a big array) and all of them at most
:data:`MAX_INFLATED` bytes; inflating stops at the claimed size, which must be
met exactly; the card abstraction's arrays pass
:func:`~strategies.cfr.abstraction.abstraction_file.check_bucket_tables`
before any kernel sees them; the strategy's dtype is its ``levels``' and
every information set sums to 0 or ``levels``. Every failure is a :class:`CompactFileError` (a
:class:`~strategies.cfr.strategy_file.StrategyFileError`) on one line naming
the file.

The API: :func:`write_compact` (a strategy file in, a compact file out),
:func:`compact_of` and :func:`save_compact` (the same from a
:class:`~strategies.cfr.strategy_file.StrategyFile` in memory, e.g. a
blueprint just solved), :func:`load_compact`, and :func:`load_playing`, which
reads either kind of file as a ``StrategyFile`` that
:class:`strategies.equilibrium.StrategyTable` plays (a compact one has
``levels``, the quantized strategy and its ``cards``).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from strategies.cfr.abstraction.abstraction_file import check_bucket_tables, expect_bucket_array
from strategies.cfr.abstraction.bucketing import BucketTables
from strategies.cfr.abstraction.card_abstraction import CardAbstraction, load_abstraction, parse_abstraction_spec
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.file_io import ARRAY_DTYPES, MAX_DIMS, Field, FileFormatError, HeaderFile, show, write_file
from strategies.cfr.solvers.pcs import exact_buckets, row_layout
from strategies.cfr.strategy_file import (
    BUCKETS,
    HEADER_FIELDS,
    THREE_PLAYER_BUCKETS,
    StrategyFile,
    StrategyFileError,
    checked_header,
    header_tree,
    layout_tree,
    load_strategy,
    solve_record,
    strategy_header,
)
from strategies.cfr.tree.betting import BettingTree

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "DEFAULT_LEVELS",
    "MAX_INFLATED",
    "MAX_RATIO",
    "QUANTIZATIONS",
    "CompactFileError",
    "CompactReport",
    "compact_of",
    "is_compact",
    "load_compact",
    "load_playing",
    "plays_alike",
    "quantize",
    "save_compact",
    "write_compact",
]

FORMAT: Final = "acpc-arena-compact"
FORMAT_VERSION: Final = 1
#: What every played information set's quantized probabilities may sum to, and
#: the dtype that holds them.
QUANTIZATIONS: Final[dict[int, np.dtype[Any]]] = {255: np.dtype(np.uint8), 65535: np.dtype(np.uint16)}
#: The quantization of :func:`compact_of` unless asked otherwise.
DEFAULT_LEVELS: Final = 255
#: Deflate never inflates more than 1032 bytes from one byte of its stream.
MAX_RATIO: Final = 1032
#: The most bytes a compact file's arrays may inflate to, all together (a HUNL
#: bucket table of 3 perfect-recall buckets, 5 actions: about 80 MB).
MAX_INFLATED: Final = 1 << 30
#: The prefix of the card abstraction's arrays in the file.
CARDS: Final = "cards."
#: Information sets quantized at a time (bounds the writer's scratch memory).
_CHUNK: Final = 1 << 20


class CompactFileError(StrategyFileError):
    """A file that is not a compact playing file we read, or one that does not fit its tree."""


def quantize(
    strategy: npt.NDArray[Any], axis: int, levels: int = DEFAULT_LEVELS
) -> tuple[npt.NDArray[np.unsignedinteger[Any]], float]:
    """``strategy`` (probabilities along ``axis``, one information set per
    position of the other axes) as counts summing to ``levels`` per information
    set (largest remainders; all-zero sets stay zero) in its dtype of
    :data:`QUANTIZATIONS`, and the largest ``|q / levels - p|`` over every
    entry, ``p`` normalised.

    Raises:
        ValueError: a negative or non-finite probability.
    """
    moved = np.moveaxis(strategy, axis, -1)
    actions = moved.shape[-1]
    flat = moved.reshape(-1, actions)
    out = np.empty(flat.shape, dtype=QUANTIZATIONS[levels])
    largest = 0.0
    for start in range(0, len(flat), _CHUNK):
        p = flat[start : start + _CHUNK].astype(np.float64)
        if not np.isfinite(p).all() or (p < 0).any():
            raise ValueError("a strategy with a negative or non-finite probability")
        total = p.sum(axis=1, keepdims=True)
        p = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
        scaled = p * levels
        q = np.floor(scaled)
        left = np.where(total[:, 0] > 0, levels - q.sum(axis=1), 0)
        order = np.argsort(q - scaled, axis=1, kind="stable")  # largest fractional part first
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(actions), order.shape), axis=1)
        q += rank < left[:, None]
        out[start : start + _CHUNK] = q
        if len(q):
            largest = max(largest, float(np.abs(q / levels - p).max()))
    return np.ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, axis)), largest


def _action_axis(layout: str) -> int:
    """The axis of actions: ``[A, columns]`` bucket tables, else ``[D, A, H]``."""
    return 0 if layout == BUCKETS else 1


def compact_of(saved: StrategyFile, levels: int = DEFAULT_LEVELS) -> tuple[StrategyFile, float]:
    """``saved`` as a compact file holds it (``levels``, the quantized strategy,
    no checkpoint arrays, a bucket table's card abstraction loaded or built
    through the cache), and the largest probability difference.

    Raises:
        CompactFileError: a three-player bucket table, or a strategy that is not probabilities.
        AbstractionError: the card abstraction cannot be built.
    """
    if saved.layout == THREE_PLAYER_BUCKETS:
        raise CompactFileError(f"a {THREE_PLAYER_BUCKETS!r} strategy has no compact form")
    if saved.levels:
        return saved, 0.0
    try:
        q, largest = quantize(saved.arrays["strategy"], _action_axis(saved.layout), levels)
    except ValueError as error:
        raise CompactFileError(str(error)) from None
    cards = saved.cards
    if saved.layout == BUCKETS and cards is None and saved.card_abstraction != "none":
        built = load_abstraction(saved.card_abstraction, saved.game)
        cards = built if isinstance(built, CardAbstraction) else None
    return replace(saved, arrays={"strategy": q}, levels=levels, cards=cards), largest


def save_compact(path: str | Path, compact: StrategyFile, *, max_difference: float) -> None:
    """Write ``compact`` (from :func:`compact_of`) to ``path`` atomically;
    ``max_difference`` is recorded in the header."""
    if compact.levels not in QUANTIZATIONS:
        raise CompactFileError("save_compact takes a quantized strategy (compact_of)")
    arrays = {"strategy": compact.arrays["strategy"]}
    if compact.cards is not None:
        arrays.update({CARDS + name: getattr(compact.cards.tables, name) for name in BucketTables.ARRAYS})
    tree = layout_tree(compact.game, compact.abstraction, compact.layout, compact.isomorphism)
    header = {
        **strategy_header(compact, tree),
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "levels": compact.levels,
        "max_difference": float(max_difference),
        "stored": {name: {"dtype": a.dtype.str, "shape": list(a.shape)} for name, a in arrays.items()},
    }
    deflated = {name: np.frombuffer(zlib.compress(np.ascontiguousarray(a).tobytes(), 9), np.uint8) for name, a in arrays.items()}
    write_file(Path(path), header, deflated)


@dataclass(frozen=True)
class CompactReport:
    """What :func:`write_compact` did: the sizes of both files in bytes and the
    largest probability difference between what they play."""

    source_bytes: int
    compact_bytes: int
    max_difference: float


def write_compact(source: str | Path, output: str | Path, *, levels: int = DEFAULT_LEVELS) -> CompactReport:
    """Write the compact file of the strategy file ``source`` to ``output``
    (quantized to ``levels``, a key of :data:`QUANTIZATIONS`).

    Raises:
        StrategyFileError: ``source`` is not a strategy file we compact.
        AbstractionError: its card abstraction cannot be built.
        OSError: a file cannot be read or written.
    """
    compact, largest = compact_of(load_strategy(source), levels)
    save_compact(output, compact, max_difference=largest)
    return CompactReport(Path(source).stat().st_size, Path(output).stat().st_size, largest)


def plays_alike(a: StrategyFile, b: StrategyFile) -> bool:
    """Whether two compact files play exactly alike: the same game, trees and
    quantized strategy, and card abstractions with the same look-up arrays."""
    same_cards = (a.cards is None) == (b.cards is None) and (
        a.cards is None or b.cards is None or a.cards.digest == b.cards.digest
    )
    return (
        (a.game, a.abstraction, a.layout, a.isomorphism, a.levels) == (b.game, b.abstraction, b.layout, b.isomorphism, b.levels)
        and same_cards
        and np.array_equal(a.arrays["strategy"], b.arrays["strategy"])
    )


# -- reading ------------------------------------------------------------------------


def _probability(value: float) -> str | None:
    return None if 0 <= value <= 1 else f"is {value!r}, not a probability difference in [0, 1]"


def _stored(value: dict[str, Any]) -> str | None:
    if len(value) > 1 + len(BucketTables.ARRAYS):
        return f"lists {len(value)} arrays, over the {1 + len(BucketTables.ARRAYS)} a compact file holds"
    for name, claim in value.items():
        if not isinstance(name, str):
            return f"names an array {show(name)}, not a text"
        if not isinstance(claim, dict) or set(claim) != {"dtype", "shape"}:
            return f"{show(name)} is {show(claim)}, not a {{dtype, shape}} map"
        dtype, shape = claim["dtype"], claim["shape"]
        if not isinstance(dtype, str) or dtype not in ARRAY_DTYPES:
            return f"{show(name)} has dtype {show(dtype)}, not one of {', '.join(sorted(ARRAY_DTYPES))}"
        if not isinstance(shape, list) or len(shape) > MAX_DIMS:
            return f"{show(name)} has shape {show(shape)}, not a list of at most {MAX_DIMS} sizes"
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            return f"{show(name)} has shape {show(shape)}, not non-negative whole numbers"
    return None


#: The header of a compact file: a strategy file's, and the quantization and the stored arrays.
COMPACT_FIELDS: Final[dict[str, Field]] = {
    **HEADER_FIELDS,
    "levels": Field((int,), check=lambda v: None if v in QUANTIZATIONS else f"is {show(v)}, not 255 or 65535"),
    "max_difference": Field((float,), check=_probability),
    "stored": Field((dict,), check=_stored),
}


def is_compact(path: str | Path) -> bool:
    """Whether the file at ``path`` says it is a compact file (its header alone
    is read; a file that cannot be read is not)."""
    try:
        with HeaderFile(path, CompactFileError, "compact strategy file") as file:
            return isinstance(file.header, dict) and file.header.get("format") == FORMAT
    except (FileFormatError, OSError):
        return False


def load_playing(path: str | Path) -> StrategyFile:
    """The strategy file or compact file at ``path`` (by its header's format).

    Raises:
        StrategyFileError: neither, or not one we read (one line naming the file).
        OSError: it cannot be read.
    """
    return load_compact(path) if is_compact(path) else load_strategy(path)


def load_compact(path: str | Path) -> StrategyFile:
    """Read and check the compact file at ``path`` (see the module docstring)
    as a :class:`StrategyFile` with ``levels`` set, the quantized strategy
    and the card abstraction in ``cards``.

    Raises:
        CompactFileError: one line naming the file and what is wrong.
        OSError: it cannot be read.
    """
    with HeaderFile(path, CompactFileError, "compact strategy file") as file:
        header = checked_header(file, FORMAT, FORMAT_VERSION, COMPACT_FIELDS)
        if header.get("layout") == THREE_PLAYER_BUCKETS:
            raise file.fail(f"a {THREE_PLAYER_BUCKETS!r} compact file; they are not made")
        checked = header_tree(file, header, entry_bytes=1 / MAX_RATIO)
        stored: dict[str, dict[str, Any]] = header["stored"]
        spec = header["card_abstraction"]
        card_names = [CARDS + name for name in BucketTables.ARRAYS] if checked.layout == BUCKETS and spec != "none" else []
        if sorted(stored) != sorted(["strategy", *card_names]) or sorted(header["arrays"]) != sorted(stored):
            raise file.fail(f"the arrays are {show(sorted(stored), 80)}; a {checked.layout} file holds strategy"
                            + (" and the card abstraction's" if card_names else ""))  # fmt: skip
        claims = {name: (np.dtype(c["dtype"]), tuple(c["shape"])) for name, c in stored.items()}
        inflated = sum(math.prod(shape) * dtype.itemsize for dtype, shape in claims.values())
        if inflated > MAX_INFLATED:
            raise file.fail(f"the arrays claim {inflated:,} bytes, over the limit of {MAX_INFLATED:,}")
        for name in card_names:
            problem = expect_bucket_array(name.removeprefix(CARDS), *claims[name])
            if problem is not None:
                raise file.fail(f"array {name!r}: {problem}")

        def expect(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str | None:
            if dtype != np.dtype(np.uint8) or len(shape) != 1:
                return f"dtype {dtype.name} with {len(shape)} dimensions; stored arrays are uint8 blobs"
            needed = math.prod(claims[name][1]) * claims[name][0].itemsize
            if needed > shape[0] * MAX_RATIO:
                return f"{shape[0]:,} deflated bytes cannot hold the {needed:,} claimed"
            return None

        blobs = file.arrays(header["arrays"], expect)
        cards = _cards(file, header, checked.game, {n: _inflate(file, n, blobs[n], *claims[n]) for n in card_names})
        tree = checked.tree
        needed: tuple[int, ...]
        if isinstance(tree, BettingTree):
            needed = (tree.max_actions, int(row_layout(tree, exact_buckets(checked.game, cards))[-1]))
        else:
            needed = (tree.num_decisions, tree.max_actions, len(tree.hands))
        levels: int = header["levels"]
        if claims["strategy"] != (QUANTIZATIONS[levels], needed):
            dtype, shape = claims["strategy"]
            wanted = QUANTIZATIONS[levels].name
            raise file.fail(f"array 'strategy' is {dtype.name}{list(shape)}; {levels} levels on the tree need {wanted}{list(needed)}")
        strategy = _inflate(file, "strategy", blobs["strategy"], *claims["strategy"])
        sums = strategy.sum(axis=_action_axis(checked.layout), dtype=np.int64)
        if not np.isin(sums, (0, levels)).all():
            raise file.fail(f"an information set's quantized probabilities sum to neither 0 nor {levels}")
    gains = header.get("best_response_gains")
    return StrategyFile(
        game=checked.game,
        abstraction=checked.abstraction,
        **solve_record(header),
        arrays={"strategy": strategy},
        settings=dict(header.get("settings") or {}),
        card_abstraction=spec,
        isomorphism=checked.isomorphism,
        layout=checked.layout,
        gains=None if gains is None else tuple(gains),
        levels=levels,
        cards=cards,
    )


def _inflate(
    file: HeaderFile, name: str, blob: npt.NDArray[np.uint8], dtype: np.dtype[Any], shape: tuple[int, ...]
) -> npt.NDArray[Any]:
    """The array ``name`` inflated from ``blob``: exactly its claimed bytes, no more read."""
    needed = math.prod(shape) * dtype.itemsize
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(blob.tobytes(), needed)
        # Only the stream's end may be left: one more byte read is one too many.
        extra = b"" if inflater.eof else inflater.decompress(inflater.unconsumed_tail, 1)
    except zlib.error as error:
        raise file.fail(f"array {name!r} is damaged ({error})") from None
    if len(data) != needed or extra or not inflater.eof or inflater.unused_data:
        raise file.fail(f"array {name!r} does not inflate to exactly the {needed:,} bytes its shape claims")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def _cards(
    file: HeaderFile, header: dict[str, Any], game: Game, arrays: dict[str, npt.NDArray[Any]]
) -> CardAbstraction | None:
    """The card abstraction of a bucket table's file, its look-up arrays checked."""
    if not arrays:
        return None
    spec = parse_abstraction_spec(header["card_abstraction"])
    if spec is None:  # header_tree read it; "none" carries no arrays
        return None
    try:
        buckets = spec.buckets_per_round(game)
    except AbstractionError as error:
        raise file.fail(str(error)) from None
    tables = BucketTables(**{name.removeprefix(CARDS): array for name, array in arrays.items()})
    problem = check_bucket_tables(tables, game.num_rounds, math.comb(len(game.deck()), game.num_hole_cards), buckets)
    if problem is not None:
        raise file.fail(f"the card abstraction: {problem}")
    return CardAbstraction(game, spec.feature, buckets, spec.recall, tables, spec.lossless)
