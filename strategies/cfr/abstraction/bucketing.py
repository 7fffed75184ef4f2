"""Percentile bucketing of hand features into the look-up tables of a card abstraction.

Reference: Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', ch5 §5.2.
**Percentile bucketing** splits the (hand, board) pairs of a round into k buckets
of equal probability by a feature of :mod:`strategies.cfr.abstraction.hand_features`. With
**perfect recall** the split is nested: round r's buckets are cut separately
inside each bucket sequence of rounds 0..r-1 (5 buckets per round gives 5, 25,
125 and 625 sequences, Johanson's "5-bucket perfect-recall E[HS²]" abstraction,
spec ``ehs2:5:perfect``). With **imperfect recall** every round is cut on its own.

Thresholds: bucket j of a group takes the values v whose weight strictly below v
lies in [j/k, (j+1)/k) of the group's weight. Equal values always share a
bucket, so each bucket's weight is within the largest tie's weight of 1/k of
the total (within one pair when values are distinct). Pairs are weighted by
their suit-isomorphism class size (:mod:`strategies.cfr.abstraction.card_tables`), and
perfect-recall groups come from every order in which a board's cards could have
been dealt (a turn's four cards: four choices of the turn card).

Deviations from the thesis: the thesis's nested E[HS²] x E[HS] splits and
k-means features (KE, KO) are not here; one feature per abstraction. Ties
between equal feature values stay together (the thesis does not say how it
breaks them), so a round with few distinct values (a river split into
thousands of buckets) leaves some buckets empty, as the thesis notes for its
IR-PHS rivers (L2678).

What :func:`build_bucket_tables` keeps (:class:`BucketTables`) is a bucket index
per canonical board of every round but the last and hand (hold'em, 5 buckets:
uint8 per canonical flop and turn, 24 MB), plus the thresholds; last-round
buckets come from the strength counts computed on the fly. The array layout is
in :mod:`strategies.cfr.abstraction._kernels`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from strategies.cfr.abstraction import _kernels as _k
from strategies.cfr.abstraction.card_tables import (
    AbstractionError,
    CardTables,
    Progress,
    card_tables,
    combinations_table,
    deal_orders,
    run_chunks,
)
from strategies.cfr.abstraction.hand_features import cached_preflop_sums, final_counts

__all__ = [
    "AbstractionSpec",
    "BucketTables",
    "Feature",
    "Recall",
    "build_bucket_tables",
    "hand_classes",
    "kernel_data",
    "percentile_buckets",
    "spec_name",
]


class Feature(enum.StrEnum):
    HS = "hs"  # hand strength on the board dealt so far
    EHS = "ehs"  # E[HS]: mean last-round HS over the run-outs
    EHS2 = "ehs2"  # E[HS²]: mean squared last-round HS over the run-outs


class Recall(enum.StrEnum):
    PERFECT = "perfect"
    IMPERFECT = "imperfect"


#: The bucket count of a round-0 ``lossless`` entry in :attr:`AbstractionSpec.buckets`
#: (resolved to the game's number of hand classes by :meth:`AbstractionSpec.buckets_per_round`).
LOSSLESS = 0
#: How a lossless first round is spelt in a spec (``ehs2:lossless,50,50,50:imperfect``).
LOSSLESS_WORD = "lossless"


@dataclass(frozen=True)
class AbstractionSpec:
    """A parsed spec ``FEATURE:BUCKETS:RECALL``; ``buckets`` has one entry (every
    round) or one per round. A first entry :data:`LOSSLESS` (spelt ``lossless``)
    makes round 0 lossless: one bucket per suit-isomorphism class of private
    hands (hold'em: the 169 classes), numbered by the feature (weakest first)."""

    feature: Feature
    buckets: tuple[int, ...]
    recall: Recall

    @property
    def lossless(self) -> bool:
        """Round 0 has one bucket per class of private hands."""
        return self.buckets[0] == LOSSLESS

    def __str__(self) -> str:
        return spec_name(self.feature, self.buckets, self.recall, self.lossless)

    def buckets_per_round(self, game: Game) -> tuple[int, ...]:
        """The bucket count of every round (a lossless round 0: the game's number of hand classes)."""
        if len(self.buckets) == 1 and not self.lossless:
            return self.buckets * game.num_rounds
        if len(self.buckets) != game.num_rounds:
            raise AbstractionError(
                f"card abstraction {str(self)!r} lists {len(self.buckets)} bucket counts but the game has "
                f"{game.num_rounds} rounds; give one count for every round or one per round"
                + (" (lossless is round 0's only)" if self.lossless else "")
            )
        if self.lossless and game.num_rounds < 2:
            raise AbstractionError(
                f"card abstraction {str(self)!r}: a lossless round 0 needs a game of 2 rounds or more"
            )
        if self.lossless:
            return (len(hand_classes(card_tables(game))[1]), *self.buckets[1:])
        return self.buckets


def spec_name(feature: Feature, buckets: Sequence[int], recall: Recall, lossless: bool = False) -> str:
    """The spec's text: ``ehs2:5:perfect`` (one count when every round has it),
    ``ehs2:lossless,50,50,50:imperfect`` (``lossless`` for round 0's count when ``lossless``)."""
    words = [str(k) for k in buckets]
    if lossless:
        words[0] = LOSSLESS_WORD
    counts = words[0] if len(set(words)) == 1 and not lossless else ",".join(words)
    return f"{feature}:{counts}:{recall}"


def hand_classes(cards: CardTables) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(class of every private hand, the class's representative): hands one suit
    permutation maps onto each other share a class (hold'em: 13 pairs of 6
    hands, 78 suited of 4, 78 offsuit of 12); the representative is the
    smallest hand index of the class, and classes are numbered by it."""
    smallest = cards.hand_map.min(axis=0).astype(np.int64)
    representatives, classes = np.unique(smallest, return_inverse=True)
    return classes.astype(np.int64), representatives


def percentile_buckets(values: npt.ArrayLike, weights: npt.ArrayLike, k: int) -> npt.NDArray[np.int32]:
    """Percentile bucket (0..k-1) of each of n items with non-negative integer
    ``values`` and positive integer ``weights``: bucket j takes the values whose
    weight strictly below them is in [j/k, (j+1)/k) of the total; equal values
    share a bucket. The rule the abstractions use within each group."""
    vals = np.asarray(values, dtype=np.int64)
    wts = np.asarray(weights, dtype=np.int64)
    if vals.shape != wts.shape or vals.ndim != 1:
        raise AbstractionError(f"values and weights must be 1-D of one length; got {vals.shape} and {wts.shape}")
    if k < 1 or (vals < 0).any() or (wts <= 0).any():
        raise AbstractionError("k must be positive, values non-negative and weights positive")
    value_bits, weight_bits = _bits(int(vals.max(initial=0))), _bits(int(wts.max(initial=0)))
    _check_key_bits(1, value_bits, weight_bits)
    keys = np.sort((vals << weight_bits) | wts)
    thresholds = _k.thresholds_from_keys(keys, value_bits, weight_bits, 1, k)
    buckets: npt.NDArray[np.int32] = np.searchsorted(thresholds[0, : k - 1], vals, side="right").astype(np.int32)
    return buckets


def _bits(value: int) -> int:
    return max(1, int(value).bit_length())


def _check_key_bits(num_groups: int, value_bits: int, weight_bits: int) -> None:
    if _bits(num_groups - 1) + value_bits + weight_bits > 63:
        raise AbstractionError(
            f"{num_groups} bucket groups of {value_bits}-bit feature values do not fit one 63-bit sort key; "
            "use fewer perfect-recall buckets"
        )


@dataclass(frozen=True, eq=False)
class BucketTables:
    """The look-up arrays of :mod:`strategies.cfr.abstraction._kernels` (layout there)."""

    key_start: npt.NDArray[np.int64]
    keys: npt.NDArray[np.int64]
    table: npt.NDArray[np.unsignedinteger[Any]]
    merged_start: npt.NDArray[np.int64]
    merged: npt.NDArray[np.int64]
    local_start: npt.NDArray[np.int64]
    local: npt.NDArray[np.int32]
    final_thresholds: npt.NDArray[np.int64]

    #: The field names, in the order of the kernels' data tuple (and of cache files).
    ARRAYS = ("key_start", "keys", "table", "merged_start", "merged", "local_start", "local", "final_thresholds")


def kernel_data(
    cards: CardTables, buckets_per_round: tuple[int, ...], recall: Recall, tables: BucketTables
) -> tuple[Any, ...]:
    """The tuple the bucket look-up kernels take (``data`` in
    :mod:`strategies.cfr.abstraction._kernels` and
    :func:`strategies.cfr.solvers._abstract_kernels.joint_counts`): the card tables, the
    buckets per round, the recall flag and the look-up arrays."""
    return (
        cards.perm_maps, cards.hand_map, cards.hand_sets, cards.hands, cards.total_cards,
        np.array(buckets_per_round, dtype=np.int64), int(recall is Recall.PERFECT),
        *(getattr(tables, name) for name in BucketTables.ARRAYS),
    )  # fmt: skip


def build_bucket_tables(
    game: Game, spec: AbstractionSpec, *, cache_dir: Path | None, workers: int, progress: Progress | None
) -> BucketTables:
    """The look-up tables of ``spec`` for ``game`` by exact enumeration (hold'em
    ``ehs2:5:perfect``: about 40 s on 2 cores, 1.5 GB at the peak). ``cache_dir``
    holds the preflop sums; ``workers`` threads share the boards."""
    return _Builder(game, spec, cache_dir, workers, progress).build()


class _Builder:
    """The bucket tables of one spec, round by round (state between the rounds)."""

    def __init__(
        self, game: Game, spec: AbstractionSpec, cache_dir: Path | None, workers: int, progress: Progress | None
    ) -> None:
        self.game = game
        self.spec = spec
        self.cards = card_tables(game)
        self._final: tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]] | None = None
        self.k = spec.buckets_per_round(game)
        self.perfect = spec.recall is Recall.PERFECT
        self.cache_dir = cache_dir
        self.workers = workers
        self.progress = progress
        last = self.cards.last
        self.key_start = np.zeros(last + 1, dtype=np.int64)
        self.merged_start = np.zeros(last + 1, dtype=np.int64)
        self.local_start = np.zeros(max(last, 1), dtype=np.int64)
        self.keys: list[npt.NDArray[np.int64]] = []
        self.tables: list[npt.NDArray[np.int64]] = []
        self.merged: list[npt.NDArray[np.int64]] = []
        self.local: list[npt.NDArray[np.int32]] = []
        self.final_thresholds = np.zeros((1, 1), dtype=np.int64)

    def final_counts(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]]:
        if self._final is None:
            self._final = final_counts(self.cards, self.workers, self.progress)
        return self._final

    def groups(self, round: int) -> int:
        return math.prod(self.k[:round]) if self.perfect else 1

    def tables_now(self) -> BucketTables:
        width = max([int(m.size) for m in self.merged] + [0])
        dtype = np.uint8 if width < 2**8 else np.uint16 if width < 2**16 else np.uint32
        rows = self.tables or [np.zeros((0, len(self.cards.hands)), dtype=np.int64)]
        table: npt.NDArray[np.unsignedinteger[Any]] = np.concatenate(rows).astype(dtype)
        return BucketTables(
            key_start=self.key_start.copy(),
            keys=np.concatenate(self.keys) if self.keys else np.zeros(0, np.int64),
            table=table,
            merged_start=self.merged_start.copy(),
            merged=np.concatenate(self.merged) if self.merged else np.zeros(0, np.int64),
            local_start=self.local_start.copy(),
            local=np.concatenate(self.local) if self.local else np.zeros(0, np.int32),
            final_thresholds=self.final_thresholds,
        )

    def kernel_data(self) -> tuple[Any, ...]:
        """:func:`kernel_data` of the rounds built so far."""
        return kernel_data(self.cards, self.k, self.spec.recall, self.tables_now())

    def build(self) -> BucketTables:
        for q in range(self.cards.last):
            self.add_round(q)
        self.add_final_round()
        return self.tables_now()

    def splits(self, round: int) -> npt.NDArray[np.int64]:
        """Deal orders of a round-``round`` board's ascending cards (perfect recall:
        every way of dealing them over rounds 0..round; else the one sorted order)."""
        if not self.perfect:
            size = int(self.cards.total_cards[round])
            return np.arange(size, dtype=np.int64).reshape(1, size)
        return deal_orders(self.game, round)

    def raw_features(self, round: int, boards: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Integer feature of every hand on each canonical board of a round before the last."""
        if self.spec.feature is Feature.HS or boards.shape[1] == self.cards.total_cards[-1]:
            out = np.empty((len(boards), len(self.cards.hands)), dtype=np.int64)
            _k.board_strengths(boards, self.cards.hand_sets, self.cards.hands, out)
            return out
        square = self.spec.feature is Feature.EHS2
        if boards.shape[1] == 0:
            sums = cached_preflop_sums(self.cards, self.cache_dir, self.workers, self.progress, self.final_counts)
            return (sums[1] if square else sums[0]).reshape(1, -1)
        keys, table = self.final_counts()
        cards = self.cards
        combos = combinations_table(len(cards.deck) - boards.shape[1], int(cards.total_cards[-1]) - boards.shape[1])
        out = np.empty((len(boards), len(cards.hands)), dtype=np.int64)

        def work(start: int, stop: int) -> None:
            _k.table_completion_sums(
                boards[start:stop], cards.deck, combos, square, cards.hand_sets, cards.perm_maps, cards.hand_map,
                keys, table, out[start:stop],
            )  # fmt: skip

        stage = f"features ({boards.shape[1]}-card boards)"
        run_chunks(len(boards), 64, work, self.workers, stage, self.progress)
        return out

    def add_round(self, q: int) -> None:
        boards, orbit = self.cards.canonical[int(self.cards.total_cards[q])]
        values = self.raw_features(q, boards)
        if q == 0 and self.spec.lossless:
            self.add_lossless_round(values[0])
            return
        splits = self.splits(q) if q > 0 else np.zeros((1, boards.shape[1]), dtype=np.int64)
        per_board = len(splits) * self.cards.valid_per_board(boards.shape[1])
        value_bits, weight_bits = _bits(int(values.max(initial=0))), _bits(int(orbit.max()))
        num_groups = self.groups(q)
        _check_key_bits(num_groups, value_bits, weight_bits)
        keys = np.empty(len(boards) * per_board, dtype=np.int64)
        data = self.kernel_data()

        def work(start: int, stop: int) -> None:
            written = _k.round_pair_keys(
                boards[start:stop], orbit[start:stop], values[start:stop], splits, q, data, value_bits, weight_bits,
                keys[start * per_board : stop * per_board],
            )  # fmt: skip
            if written != (stop - start) * per_board:
                raise RuntimeError(f"round {q}: {written} pair keys for {stop - start} boards, not {per_board} each")

        run_chunks(len(boards), 256, work, self.workers, f"round {q} buckets", self.progress)
        keys.sort()
        thresholds = _k.thresholds_from_keys(keys, value_bits, weight_bits, num_groups, self.k[q])
        merged = np.unique(thresholds[thresholds != _k.NEVER]) if self.k[q] > 1 else np.zeros(0, np.int64)
        local = np.zeros((num_groups, merged.size + 1), dtype=np.int32)
        for g in range(num_groups):
            local[g, 1:] = np.searchsorted(thresholds[g, : self.k[q] - 1], merged, side="right")
        valid = values >= 0
        table = np.where(valid, np.searchsorted(merged, np.where(valid, values, 0), side="right"), 0)
        self.keys.append(self.cards.masks(boards))
        self.tables.append(table)
        self.key_start[q + 1 :] = self.key_start[q] + len(boards)
        self.merged.append(merged)
        self.merged_start[q + 1 :] = self.merged_start[q] + merged.size
        self.local.append(local.reshape(-1))
        if q + 1 < len(self.local_start):
            self.local_start[q + 1 :] = self.local_start[q] + local.size

    def add_lossless_round(self, feature: npt.NDArray[np.int64]) -> None:
        """Round 0 with one bucket per hand class: the classes ranked by ``feature``
        (ties by class number), a threshold between every two, so the look-up
        gives each hand its class's rank. The feature is equal within a class
        (suit symmetry), so it never splits one."""
        classes, representatives = hand_classes(self.cards)
        rank = np.empty(len(representatives), dtype=np.int64)
        rank[np.lexsort((np.arange(len(representatives)), feature[representatives]))] = np.arange(len(rank))
        values = rank[classes]
        merged = np.arange(1, len(rank), dtype=np.int64)
        local = np.arange(len(rank), dtype=np.int32)
        self.keys.append(self.cards.masks(np.zeros((1, 0), dtype=np.int64)))
        self.tables.append(values.reshape(1, -1))
        self.key_start[1:] = self.key_start[0] + 1
        self.merged.append(merged)
        self.merged_start[1:] = self.merged_start[0] + merged.size
        self.local.append(local)
        if len(self.local_start) > 1:
            self.local_start[1:] = self.local_start[0] + local.size

    def add_final_round(self) -> None:
        last = self.cards.last
        num_groups = self.groups(last)
        width = 2 * self.cards.opponents(int(self.cards.total_cards[last])) + 1
        keys, table = self.final_counts()
        stage = f"round {last} buckets"
        if not self.perfect or last == 0:
            _, orbit = self.cards.canonical[int(self.cards.total_cards[last])]

            def direct(start: int, stop: int) -> npt.NDArray[np.int64]:
                hist = np.zeros((1, width), dtype=np.int64)
                _k.table_histogram(table[start:stop], orbit[start:stop], hist)
                return hist

            parts = run_chunks(len(table), 4096, direct, self.workers, stage, self.progress)
        else:
            # Every (hand, deal order, run-out): from the round before's canonical
            # boards, their deal orders, and each completion to the final board.
            boards, orbit = self.cards.canonical[int(self.cards.total_cards[last - 1])]
            splits = self.splits(last - 1)
            deck = self.cards.deck
            combos = combinations_table(
                len(deck) - boards.shape[1], int(self.cards.total_cards[last]) - boards.shape[1]
            )
            data = self.kernel_data()

            def nested(start: int, stop: int) -> npt.NDArray[np.int64]:
                hist = np.zeros((num_groups, width), dtype=np.int64)
                _k.nested_final_histogram(
                    boards[start:stop], orbit[start:stop], splits, deck, combos, data, keys, table, hist
                )
                return hist

            parts = run_chunks(len(boards), 256, nested, self.workers, stage, self.progress)
        hist = np.sum(parts, axis=0)
        self.final_thresholds = _k.thresholds_from_histogram(hist, self.k[last])
