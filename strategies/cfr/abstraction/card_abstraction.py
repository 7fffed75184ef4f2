"""Card abstractions: what solvers see of the cards, per round, as buckets.

``load_abstraction("ehs2:5:perfect", game)`` reads or builds a
:class:`CardAbstraction`: percentile buckets (:mod:`strategies.cfr.abstraction.bucketing`)
of one hand-strength feature (:mod:`strategies.cfr.abstraction.hand_features`; hold'em and
kin, exact enumeration with suit isomorphism). ``buckets(r, board)`` maps every
private hand (rows of :func:`poker.deal.private_hands`) to its round-r
bucket, -1 where it clashes with the board; ``bucket_rounds(board)`` does every
round for a final board at once. Boards list the cards in the order dealt
(flop, turn, river), which perfect recall needs. Abstractions are cached on
disk (:mod:`strategies.cfr.abstraction.cache_files`) under
:func:`~strategies.cfr.abstraction.cache_files.default_cache_dir`, keyed by the spec and the
game; files derived from one (joint bucket tables) are keyed by its
:attr:`CardAbstraction.digest`. Spec ``none`` gives :class:`NullAbstraction`,
every hand its own bucket.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, GameDefError, format_game, parse_game
from strategies.cfr.abstraction import _kernels as _k
from strategies.cfr.abstraction.abstraction_file import ABSTRACTION_FIELDS, check_bucket_tables, expect_bucket_array
from strategies.cfr.abstraction.bucketing import (
    LOSSLESS,
    LOSSLESS_WORD,
    AbstractionSpec,
    BucketTables,
    Feature,
    Recall,
    build_bucket_tables,
    kernel_data,
    spec_name,
)
from strategies.cfr.abstraction.cache_files import CacheFileError, default_cache_dir, read_arrays, write_arrays
from strategies.cfr.abstraction.card_tables import AbstractionError, CardTables, Progress, card_tables

__all__ = [
    "NULL_SPEC",
    "Abstraction",
    "CardAbstraction",
    "NullAbstraction",
    "file_slug",
    "load_abstraction",
    "parse_abstraction_spec",
]

FORMAT = "acpc-arena-card-abstraction"
FORMAT_VERSION = 1
NULL_SPEC = "none"


def parse_abstraction_spec(text: str) -> AbstractionSpec | None:
    """Parse ``FEATURE:BUCKETS:RECALL`` (``ehs2:5:perfect``, ``ehs:8,8,8,8:imperfect``,
    ``ehs2:lossless,50,50,50:imperfect``: round 0 one bucket per class of private
    hands) or ``none`` (every private hand its own bucket; returns None).

    Raises:
        AbstractionError: (a ValueError) naming the part that is wrong.
    """
    cleaned = text.strip().lower()
    if cleaned in (NULL_SPEC, "null"):
        return None
    parts = cleaned.split(":")
    if len(parts) != 3:
        raise AbstractionError(
            f"card abstraction spec {text!r} must be FEATURE:BUCKETS:RECALL (e.g. 'ehs2:5:perfect') or 'none'"
        )
    feature, buckets, recall = parts
    if feature not in set(Feature):
        raise AbstractionError(
            f"unknown feature {feature!r} in card abstraction spec {text!r}; expected one of "
            + ", ".join(f.value for f in Feature)
        )
    counts = buckets.split(",")
    lossless = counts[0] == LOSSLESS_WORD
    if lossless:
        counts[0] = str(LOSSLESS)
    if not all(c.isdigit() and (int(c) >= 1 or (i == 0 and lossless)) for i, c in enumerate(counts)):
        raise AbstractionError(
            f"buckets {buckets!r} in card abstraction spec {text!r} must be a positive whole number "
            f"or a comma-separated list of them, one per round (the first may be {LOSSLESS_WORD!r})"
        )
    if lossless and len(counts) == 1:
        raise AbstractionError(
            f"card abstraction spec {text!r}: {LOSSLESS_WORD!r} is for round 0 only; give a count for every round"
        )
    if recall not in set(Recall):
        raise AbstractionError(f"recall {recall!r} in card abstraction spec {text!r} must be 'perfect' or 'imperfect'")
    return AbstractionSpec(Feature(feature), tuple(int(c) for c in counts), Recall(recall))


class Abstraction(Protocol):
    """What solvers need of a card abstraction: the private dimension per round."""

    @property
    def name(self) -> str: ...

    def num_buckets(self, round: int) -> int: ...

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]: ...

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]: ...

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int: ...


def buckets_by_round(abstraction: Abstraction, game: Game, board: Sequence[int]) -> npt.NDArray[np.int32]:
    """``bucket_rounds`` by one ``buckets`` call per round, for abstractions with no
    faster way: row r is ``buckets(r, board[:cards of round r])``."""
    cards = list(board)
    return np.array(
        [abstraction.buckets(r, cards[: game.total_board_cards(r)]) for r in range(game.num_rounds)], dtype=np.int32
    )


@dataclass(frozen=True, eq=False)
class CardAbstraction:
    """Percentile buckets of one feature per round (see the module docstring).

    ``buckets(r, board)`` gives round r's bucket of every private hand (rows of
    :func:`poker.deal.private_hands`) for a board listing the cards in the
    order dealt (hold'em: flop, turn, river). With perfect recall the bucket is
    the index of the whole bucket sequence of rounds 0..r, so round r has
    ``k_0 * ... * k_r`` buckets and ``bucket // k_r`` is round r-1's bucket; with
    imperfect recall it is round r's own bucket (``k_r`` of them). ``lossless``:
    round 0's buckets are the classes of private hands (``k_0`` of them)."""

    game: Game
    feature: Feature
    buckets_per_round: tuple[int, ...]
    recall: Recall
    tables: BucketTables = field(repr=False)
    lossless: bool = False

    @property
    def name(self) -> str:
        """The spec, e.g. ``"ehs2:5:perfect"``, ``"ehs2:lossless,50,50,50:imperfect"``."""
        return spec_name(self.feature, self.buckets_per_round, self.recall, self.lossless)

    @cached_property
    def cards(self) -> CardTables:
        """The game's :class:`~strategies.cfr.abstraction.card_tables.CardTables`."""
        return card_tables(self.game)

    @cached_property
    def kernel_data(self) -> tuple[Any, ...]:
        """The ``data`` tuple of the bucket look-up kernels
        (:func:`strategies.cfr.abstraction.bucketing.kernel_data`)."""
        return kernel_data(self.cards, self.buckets_per_round, self.recall, self.tables)

    @cached_property
    def digest(self) -> str:
        """SHA-256 (hex, 16 digits) of the game, the spec and every look-up array:
        files derived from the abstraction (joint bucket tables) are keyed by it,
        so a rebuilt or different abstraction of the same name never reuses them."""
        digest = hashlib.sha256(f"{format_game(self.game)}\n{self.name}\n".encode())
        for name in BucketTables.ARRAYS:
            array = np.ascontiguousarray(getattr(self.tables, name))
            digest.update(f"{name} {array.dtype.str} {array.shape}\n".encode())
            digest.update(array.tobytes())
        return digest.hexdigest()[:16]

    def num_buckets(self, round: int) -> int:
        if not 0 <= round < self.game.num_rounds:
            raise AbstractionError(f"round {round!r} is outside 0..{self.game.num_rounds - 1}")
        if self.recall is Recall.PERFECT:
            return math.prod(self.buckets_per_round[: round + 1])
        return self.buckets_per_round[round]

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        """Round ``round``'s bucket of every private hand, -1 for hands clashing with the board."""
        cards = self.cards.check_board(round, board)
        counts = self.cards.strength_counts(cards) if round == self.cards.last else np.empty(0, np.int64)
        out = np.empty(len(self.cards.hands), dtype=np.int64)
        _k.sequence_buckets(cards, round, self.kernel_data, counts, out)
        return out.astype(np.int32)

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        """The buckets of every round for a final board in deal order,
        ``int32[num_rounds, H]``: row r is ``buckets(r, board[:cards of round r])``
        (one call per sampled board in public chance sampling)."""
        cards = self.cards.check_board(self.cards.last, board)
        out = np.empty((self.game.num_rounds, len(self.cards.hands)), dtype=np.int64)
        _k.all_round_buckets(cards, self.kernel_data, self.cards.strength_counts(cards), out)
        return out.astype(np.int32)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """The bucket of one hand (hole cards in any order)."""
        return int(self.buckets(round, board)[_hand_index(self.cards, hole, board)])

    def save(self, path: str | Path) -> None:
        """Write the abstraction to ``path`` atomically (msgpack header + arrays)."""
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "game": format_game(self.game),
            "spec": self.name,
            "feature": str(self.feature),
            "buckets": list(self.buckets_per_round),
            "recall": str(self.recall),
        }
        write_arrays(Path(path), header, {name: getattr(self.tables, name) for name in BucketTables.ARRAYS})

    @classmethod
    def load(cls, path: str | Path) -> CardAbstraction:
        """Read a file written by :meth:`save`.

        Raises:
            AbstractionError: not a card abstraction file, another version, or damaged arrays.
        """
        try:
            header, arrays = read_arrays(Path(path), ABSTRACTION_FIELDS, expect_bucket_array)
        except CacheFileError as error:
            raise AbstractionError(f"not a card abstraction file: {error}") from None
        if header["format"] != FORMAT:
            raise AbstractionError(f"{path}: not a card abstraction file (no {FORMAT!r} header)")
        if header["version"] != FORMAT_VERSION:
            raise AbstractionError(
                f"{path}: card abstraction version {header['version']!r}; this reader knows {FORMAT_VERSION}"
            )
        missing = [name for name in BucketTables.ARRAYS if name not in arrays]
        if missing:
            raise AbstractionError(f"{path}: arrays {missing} are missing")
        try:
            game = parse_game(header["game"], source=f"{path} header")
        except GameDefError as error:
            raise AbstractionError(" ".join(str(error).split())) from None
        buckets = tuple(header["buckets"])
        tables = BucketTables(**{name: arrays[name] for name in BucketTables.ARRAYS})
        problem = (
            f"{len(buckets)} bucket counts for {game.num_rounds} rounds"
            if len(buckets) != game.num_rounds
            else check_bucket_tables(tables, game.num_rounds, len(private_hands(game)), buckets)
        )
        if problem is not None:
            raise AbstractionError(f"{path}: {problem}")
        try:
            spec = parse_abstraction_spec(header["spec"])
        except AbstractionError as error:
            raise AbstractionError(f"{path}: {error}") from None
        lossless = spec is not None and spec.lossless
        return cls(game, Feature(header["feature"]), buckets, Recall(header["recall"]), tables, lossless)

    @classmethod
    def build(
        cls, game: Game, spec: AbstractionSpec, *, cache_dir: Path | None = None, workers: int | None = None,
        progress: Progress | None = None,
    ) -> CardAbstraction:  # fmt: skip
        """Compute the abstraction by exact enumeration (:func:`build_bucket_tables`;
        hold'em ``ehs2:5:perfect``: about 40 s on 2 cores, 1.5 GB at the peak).
        ``cache_dir`` holds the preflop sums; ``workers`` threads (default: every
        core) share the boards."""
        threads = workers or os.cpu_count() or 1
        tables = build_bucket_tables(game, spec, cache_dir=cache_dir, workers=threads, progress=progress)
        return cls(game, spec.feature, spec.buckets_per_round(game), spec.recall, tables, spec.lossless)


def file_slug(name: str) -> str:
    """A spec name as part of a cache file name (``ehs2:5,5:perfect`` -> ``ehs2-5_5-perfect``)."""
    return name.replace(":", "-").replace(",", "_")


def _hand_index(cards: CardTables, hole: Sequence[int], board: Sequence[int]) -> int:
    key = sorted(int(c) for c in hole)
    matches: Sequence[int] = []
    if len(key) == cards.hands.shape[1]:
        matches = np.flatnonzero((cards.hands == np.array(key)).all(axis=1)).tolist()
    if len(matches) != 1:
        raise AbstractionError(f"hole cards {list(hole)} are not a private hand of the game")
    if set(key) & {int(c) for c in board}:
        raise AbstractionError(f"hole cards {list(hole)} share a card with the board {list(board)}")
    return int(matches[0])


class NullAbstraction:
    """No abstraction: every private hand is its own bucket (spec ``none``), so
    small games go through the same interface."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self._hands = private_hands(game)

    @property
    def name(self) -> str:
        return NULL_SPEC

    def num_buckets(self, round: int) -> int:
        return len(self._hands)

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        cards = card_tables(self.game).check_board(round, board)
        out = np.arange(len(self._hands), dtype=np.int32)
        out[np.isin(self._hands, cards).any(axis=1)] = -1
        return out

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        return buckets_by_round(self, self.game, board)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        return int(self.buckets(round, board)[_hand_index(card_tables(self.game), hole, board)])


def load_abstraction(
    spec: str,
    game: Game,
    *,
    cache_dir: Path | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> CardAbstraction | NullAbstraction:
    """The abstraction named by ``spec`` for ``game``: read from the cache
    directory (default :func:`default_cache_dir`) if built before, else built
    and written there (an unreadable cache file is rebuilt).

    Raises:
        AbstractionError: a bad spec or a game the abstraction cannot handle.
    """
    parsed = parse_abstraction_spec(spec)
    if parsed is None:
        return NullAbstraction(game)
    directory = cache_dir or default_cache_dir()
    name = spec_name(parsed.feature, parsed.buckets_per_round(game), parsed.recall, parsed.lossless)
    path = directory / f"{file_slug(name)}-{card_tables(game).digest}.abstraction"
    if path.exists():
        try:
            loaded = CardAbstraction.load(path)
        except AbstractionError:
            loaded = None
        if loaded is not None and loaded.game == game and loaded.name == name:
            return loaded
    built = CardAbstraction.build(game, parsed, cache_dir=directory, workers=workers, progress=progress)
    built.save(path)
    return built
