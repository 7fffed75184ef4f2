"""Card abstraction: hand-strength features and percentile buckets (hold'em and kin).

Reference: Johanson (2016) thesis ch5 §5.2 (seed 000 §7.1-7.2; L1270-1278,
L1402-1408). On the last round a hand's **hand strength** HS is its probability
of beating a uniformly random opponent hand (ties count 1/2). Before that,
**E[HS]** is HS averaged over every run-out of the remaining board cards, and
**E[HS²]** the average of its square, which favours drawing hands. We also offer
the current-board HS (the hand ranked with the board dealt so far).
**Percentile bucketing** splits the (hand, board) pairs of a round into k buckets
of equal probability by the feature. With **perfect recall** the split is nested:
round r's buckets are cut separately inside each bucket sequence of rounds
0..r-1 (5 buckets per round gives 5, 25, 125 and 625 sequences, Johanson's
"5-bucket perfect-recall E[HS²]" abstraction, spec ``ehs2:5:perfect``). With
**imperfect recall** every round is cut on its own.

How it is computed (exact enumeration, no sampling):

1. Strength counts. On a last-round board one radix sort of the hands and one
   sweep with per-card counts give every hand's ``n = 2 * wins + ties`` against
   the opponent hands that fit (ch2 §2.4), so a board costs O(H), not O(H²).
2. Features are exact integers: n on the last round; before it the sums of n
   (E[HS]) or n² (E[HS²]) over the run-outs. The counts of every canonical
   last-round board are computed once into a table (hold'em: 134459 rivers,
   int16, 357 MB while building); a flop's 1176 two-card run-outs (each hand
   sees the 1081 that avoid it) and a turn's 48 rivers are then look-ups, each
   run-out mapped to its canonical board with the hands permuted alike.
   Preflop, each canonical river counts once for its whole suit class and the
   sums are shared across each suit class of hands (exact: the features are
   suit-symmetric). Exact integers also mean suit-isomorphic pairs get equal
   values, never values one rounding apart.
3. Suit isomorphism. Boards are enumerated once per class of suit permutations
   (hold'em: 1755 flops, 16432 turns, 134459 rivers), each weighted by its class
   size. A look-up maps a board to its canonical member and the hands with it.
4. Thresholds. Bucket j of a group takes the values v whose weight strictly
   below v lies in [j/k, (j+1)/k) of the group's weight. Equal values always
   share a bucket, so each bucket's weight is within the largest tie's weight
   of 1/k of the total (within one pair when values are distinct). Perfect-recall
   groups come from every order in which a board's cards could have been dealt
   (a turn's four cards: four choices of the turn card).

Deviations from the thesis: the thesis's nested E[HS²] x E[HS] splits and
k-means features (KE, KO) are not here; one feature per abstraction. Ties
between equal feature values stay together (the thesis does not say how it
breaks them), so a round with few distinct values (a river split into
thousands of buckets) leaves some buckets empty, as the thesis notes for its
IR-PHS rivers (L2678).

Using it: ``load_abstraction("ehs2:5:perfect", game)`` reads or builds a
:class:`CardAbstraction`; ``buckets(r, board)`` maps every private hand (rows of
:func:`strategies.base.private_hands`) to its round-r bucket, -1 where it
clashes with the board; ``bucket_rounds(board)`` does every round for a final
board at once. Boards list the cards in the order dealt (flop, turn, river),
which perfect recall needs. The tables kept are a bucket index per canonical
flop and turn and hand (uint8 for 5 buckets: 24 MB); river buckets come from
the strength counts computed on the fly. Files are cached on disk (msgpack
header + numpy arrays, like strategy files) under :func:`default_cache_dir`,
keyed by the spec and the game. ``none`` gives :class:`NullAbstraction`, every
hand its own bucket. HS is against one opponent whatever the number of players.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import itertools
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import msgpack
import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, format_game, parse_game
from strategies.base import private_hands
from strategies.cfr import _abstraction_kernels as _k

__all__ = [
    "Abstraction",
    "AbstractionError",
    "AbstractionSpec",
    "CardAbstraction",
    "Feature",
    "HandFeatures",
    "NullAbstraction",
    "Recall",
    "default_cache_dir",
    "hand_features",
    "load_abstraction",
    "parse_abstraction_spec",
    "percentile_buckets",
]

FORMAT = "acpc-arena-card-abstraction"
FORMAT_VERSION = 1
NULL_SPEC = "none"
#: ``progress(stage, done, total)`` is called from the calling thread as chunks finish.
Progress = Callable[[str, int, int], None]

_MAX_HANDS = 2048  # strength-count sort keys hold the hand index in 11 bits


class AbstractionError(ValueError):
    """A card abstraction spec, file or game this module cannot use."""


class Feature(enum.StrEnum):
    HS = "hs"  # hand strength on the board dealt so far
    EHS = "ehs"  # E[HS]: mean last-round HS over the run-outs
    EHS2 = "ehs2"  # E[HS²]: mean squared last-round HS over the run-outs


class Recall(enum.StrEnum):
    PERFECT = "perfect"
    IMPERFECT = "imperfect"


@dataclass(frozen=True)
class AbstractionSpec:
    """A parsed spec ``FEATURE:BUCKETS:RECALL``; ``buckets`` has one entry (every
    round) or one per round."""

    feature: Feature
    buckets: tuple[int, ...]
    recall: Recall

    def __str__(self) -> str:
        counts = ",".join(str(k) for k in self.buckets)
        return f"{self.feature}:{counts}:{self.recall}"

    def buckets_per_round(self, game: Game) -> tuple[int, ...]:
        if len(self.buckets) == 1:
            return self.buckets * game.num_rounds
        if len(self.buckets) != game.num_rounds:
            raise AbstractionError(
                f"card abstraction {str(self)!r} lists {len(self.buckets)} bucket counts but the game has "
                f"{game.num_rounds} rounds; give one count for every round or one per round"
            )
        return self.buckets


def parse_abstraction_spec(text: str) -> AbstractionSpec | None:
    """Parse ``FEATURE:BUCKETS:RECALL`` (``ehs2:5:perfect``, ``ehs:8,8,8,8:imperfect``)
    or ``none`` (every private hand its own bucket; returns None).

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
    if not all(c.isdigit() and int(c) >= 1 for c in counts):
        raise AbstractionError(
            f"buckets {buckets!r} in card abstraction spec {text!r} must be a positive whole number "
            "or a comma-separated list of them, one per round"
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


def default_cache_dir() -> Path:
    """``$ACPC_ARENA_CACHE``, else ``$XDG_CACHE_HOME/acpc-arena``, else ``~/.cache/acpc-arena``."""
    explicit = os.environ.get("ACPC_ARENA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acpc-arena"


class _Cards:
    """The game's cards as the kernels want them (hands in :func:`private_hands` order)."""

    def __init__(self, game: Game) -> None:
        if game.num_hole_cards not in (1, 2):
            raise AbstractionError(
                f"card abstraction handles 1 or 2 hole cards; the game deals {game.num_hole_cards}"
            )
        self.game = game
        self.last = game.num_rounds - 1
        self.total_cards = np.array([game.total_board_cards(r) for r in range(game.num_rounds)], np.int64)
        if self.total_cards[-1] + game.num_hole_cards > 7:
            raise AbstractionError("hands are ranked from at most 7 cards: hole cards plus the final board")
        self.deck = np.array(sorted(game.deck()), dtype=np.int64)
        self.deck_bits = sum(1 << int(c) for c in self.deck)
        self.hands = private_hands(game).astype(np.int64)
        if len(self.hands) > _MAX_HANDS:
            raise AbstractionError(
                f"the game has {len(self.hands)} private hands; at most {_MAX_HANDS} are supported"
            )
        self.hand_sets = np.array([_k.cardset_of(h) for h in self.hands], dtype=np.int64)
        suits = sorted({int(c) % 4 for c in self.deck})
        maps = []
        for image in itertools.permutations(suits):
            card_map = np.arange(52, dtype=np.int64)
            for s, t in zip(suits, image):
                card_map[self.deck[self.deck % 4 == s]] = self.deck[self.deck % 4 == s] - s + t
            maps.append(card_map)
        self.perm_maps = np.array(maps, dtype=np.int64)
        index = {tuple(h): i for i, h in enumerate(self.hands.tolist())}
        self.hand_map = np.array(
            [[index[tuple(sorted(card_map[h].tolist()))] for h in self.hands] for card_map in self.perm_maps],
            dtype=np.int32,
        )
        self.digest = hashlib.sha256(format_game(game).encode()).hexdigest()[:16]

    def opponents(self, board_size: int) -> int:
        """Opponent hands that avoid one hand and a board of ``board_size`` cards."""
        h = self.game.num_hole_cards
        return math.comb(len(self.deck) - board_size - h, h)

    def completions(self, board_size: int) -> int:
        """Run-outs to the final board that one hand can see from a board of ``board_size`` cards."""
        left = len(self.deck) - board_size - self.game.num_hole_cards
        return math.comb(left, int(self.total_cards[-1]) - board_size)

    def valid_per_board(self, board_size: int) -> int:
        return math.comb(len(self.deck) - board_size, self.game.num_hole_cards)

    @cached_property
    def canonical(self) -> dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
        """Canonical boards of each board size used by a round: (cards, class sizes),
        ascending by board mask (the order :func:`_k._locate` searches)."""
        out = {}
        for size in sorted({int(t) for t in self.total_cards}):
            cards, orbit = _k.canonical_boards(self.deck, size, self.perm_maps)
            order = np.argsort(self.masks(cards), kind="stable")
            out[size] = (cards[order], orbit[order])
        return out

    @staticmethod
    def masks(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Board mask (bit = card id) of each row."""
        masks: npt.NDArray[np.int64] = np.zeros(len(boards), dtype=np.int64)
        for column in boards.T:
            masks |= np.int64(1) << column
        return masks

    def check_board(self, round: int, board: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """``board`` as int64 card ids, or an error unless it holds round ``round``'s cards."""
        if not 0 <= round <= self.last:
            raise AbstractionError(f"round {round!r} is outside 0..{self.last}")
        cards = np.asarray(board, dtype=np.int64).reshape(-1)
        wanted = int(self.total_cards[round])
        if cards.size != wanted:
            raise AbstractionError(f"round {round} needs {wanted} board cards, got {cards.size}: {cards.tolist()}")
        seen = 0
        for card in cards.tolist():
            bit = 1 << card if 0 <= card < 64 else 0
            if not bit & self.deck_bits or bit & seen:
                raise AbstractionError(f"board {cards.tolist()} repeats a card or holds a card outside the deck")
            seen |= bit
        return cards

    def strength_counts(self, board: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """``2 * wins + ties`` of every hand with ``board`` (-1 for clashes)."""
        out = np.empty((1, len(self.hands)), dtype=np.int64)
        _k.board_strengths(board.reshape(1, -1), self.hand_sets, self.hands, out)
        counts: npt.NDArray[np.int64] = out[0]
        return counts


@functools.lru_cache(maxsize=8)
def _cards_of(game: Game) -> _Cards:
    """The (immutable) card tables of a game, built once: building them takes milliseconds."""
    return _Cards(game)


def _final_counts(
    cards: _Cards, workers: int, progress: Progress | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]]:
    """(board masks, strength counts int16[B, H]) of the canonical final boards
    (hold'em: 134459 rivers, 357 MB)."""
    boards, _ = cards.canonical[int(cards.total_cards[-1])]
    table = np.empty((len(boards), len(cards.hands)), dtype=np.int16)

    def work(start: int, stop: int) -> None:
        _k.count_table(boards[start:stop], cards.hand_sets, cards.hands, table[start:stop])

    _run_chunks(len(boards), 1024, work, workers, "final-round strength", progress)
    return cards.masks(boards), table


def _run_chunks(
    count: int, chunk: int, work: Callable[[int, int], Any], workers: int, stage: str, progress: Progress | None
) -> list[Any]:
    """``work(start, stop)`` over ``range(count)`` in chunks on ``workers`` threads (the kernels release the GIL)."""
    bounds = [(s, min(s + chunk, count)) for s in range(0, count, chunk)]
    results: list[Any] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done, result in enumerate(pool.map(lambda b: work(*b), bounds), start=1):
            results.append(result)
            if progress is not None:
                progress(stage, done, len(bounds))
    return results


def _preflop_sums(
    cards: _Cards, table: npt.NDArray[np.int16], workers: int, progress: Progress | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sums of n and n² over every final board for each hand (no board dealt yet).

    Each canonical final board B counts |class(B)| times; the image boards give
    the hands permuted, so the per-hand totals are summed over each suit class of
    hands and shared equally among its members (exact: a class's members all
    have the same total, and the division leaves no remainder)."""
    _, orbit = cards.canonical[int(cards.total_cards[-1])]
    num_hands = len(cards.hands)

    def work(start: int, stop: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        s1 = np.zeros(num_hands, dtype=np.int64)
        s2 = np.zeros(num_hands, dtype=np.int64)
        _k.table_weighted_sums(table[start:stop], orbit[start:stop], s1, s2)
        return s1, s2

    parts = _run_chunks(len(table), 4096, work, workers, "preflop", progress)
    classes = np.min(cards.hand_map, axis=0)  # smallest hand index in each hand's suit class
    members = np.bincount(classes, minlength=num_hands).astype(np.int64)
    out = []
    for i in range(2):
        class_total = np.zeros(num_hands, dtype=np.int64)
        np.add.at(class_total, classes, np.sum([p[i] for p in parts], axis=0))
        out.append(class_total[classes] // members[classes])
    return out[0], out[1]


def _cached_preflop_sums(
    cards: _Cards,
    cache_dir: Path | None,
    workers: int,
    progress: Progress | None,
    final: Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """:func:`_preflop_sums`, read from ``cache_dir`` if computed before (``final``
    gives the final-round count table when they must be computed)."""
    path = (cache_dir or default_cache_dir()) / f"preflop-sums-{cards.digest}.msgpack"
    if path.exists():
        header, arrays = _read(path)
        if header.get("game") == format_game(cards.game):
            return arrays["sum1"], arrays["sum2"]
    sums = _preflop_sums(cards, final()[1], workers, progress)
    header = {"format": FORMAT + "-preflop", "version": FORMAT_VERSION, "game": format_game(cards.game)}
    _write(path, header, {"sum1": sums[0], "sum2": sums[1]})
    return sums


def _combinations(n: int, m: int) -> npt.NDArray[np.int64]:
    return np.array(list(itertools.combinations(range(n), m)), dtype=np.int64).reshape(-1, m)


@dataclass(frozen=True)
class HandFeatures:
    """Features of every private hand on one board, ``float64[H]`` each (NaN for
    hands that clash with the board): ``hs`` on the board dealt so far, ``ehs``
    and ``ehs2`` over the run-outs to the final board."""

    hs: npt.NDArray[np.float64]
    ehs: npt.NDArray[np.float64]
    ehs2: npt.NDArray[np.float64]


def hand_features(
    game: Game, board: Sequence[int] = (), *, cache_dir: Path | None = None, workers: int | None = None
) -> HandFeatures:
    """HS, E[HS] and E[HS²] of every hand of :func:`private_hands` on ``board``
    (the cards of any round, e.g. a flop or ``()`` preflop), exact.

    Preflop sums come from every final board (hold'em: 134459 canonical rivers,
    a few seconds) and are cached in ``cache_dir`` (default
    :func:`default_cache_dir`); a flop takes tens of milliseconds."""
    cards = _cards_of(game)
    rounds = [r for r in range(game.num_rounds) if cards.total_cards[r] == len(board)]
    if not rounds:
        raise AbstractionError(f"board {list(board)} has a number of cards that no round of the game deals")
    board_cards = cards.check_board(rounds[0], board)
    threads = workers or os.cpu_count() or 1
    size = board_cards.size
    final_opponents = 2 * cards.opponents(int(cards.total_cards[-1]))
    if size == cards.total_cards[-1]:
        sum1 = cards.strength_counts(board_cards)
        sum2 = sum1 * sum1
    elif size == 0:
        sum1, sum2 = _cached_preflop_sums(
            cards, cache_dir, threads, None, lambda: _final_counts(cards, threads, None)
        )
    else:
        combos = _combinations(len(cards.deck) - size, int(cards.total_cards[-1]) - size)
        s1 = np.empty((1, len(cards.hands)), dtype=np.int64)
        s2 = np.empty_like(s1)
        _k.completion_sums(board_cards.reshape(1, -1), cards.deck, combos, cards.hand_sets, cards.hands, s1, s2)
        sum1, sum2 = s1[0], s2[0]
    clash = (cards.hand_sets & _k.cardset_of(board_cards)) != 0
    runs = cards.completions(size)
    hs = cards.strength_counts(board_cards) / (2 * cards.opponents(size))
    ehs = sum1 / (runs * final_opponents)
    ehs2 = sum2 / (runs * final_opponents**2)
    for array in (hs, ehs, ehs2):
        array[clash] = np.nan
    return HandFeatures(hs=hs, ehs=ehs, ehs2=ehs2)


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
class _Tables:
    """The look-up arrays of :mod:`strategies.cfr._abstraction_kernels` (layout there)."""

    key_start: npt.NDArray[np.int64]
    keys: npt.NDArray[np.int64]
    table: npt.NDArray[np.unsignedinteger[Any]]
    merged_start: npt.NDArray[np.int64]
    merged: npt.NDArray[np.int64]
    local_start: npt.NDArray[np.int64]
    local: npt.NDArray[np.int32]
    final_thresholds: npt.NDArray[np.int64]

    ARRAYS = ("key_start", "keys", "table", "merged_start", "merged", "local_start", "local", "final_thresholds")


@dataclass(frozen=True, eq=False)
class CardAbstraction:
    """Percentile buckets of one feature per round (see the module docstring).

    ``buckets(r, board)`` gives round r's bucket of every private hand (rows of
    :func:`strategies.base.private_hands`) for a board listing the cards in the
    order dealt (hold'em: flop, turn, river). With perfect recall the bucket is
    the index of the whole bucket sequence of rounds 0..r, so round r has
    ``k_0 * ... * k_r`` buckets and ``bucket // k_r`` is round r-1's bucket; with
    imperfect recall it is round r's own bucket (``k_r`` of them)."""

    game: Game
    feature: Feature
    buckets_per_round: tuple[int, ...]
    recall: Recall
    tables: _Tables = field(repr=False)

    @property
    def name(self) -> str:
        """The spec, e.g. ``"ehs2:5:perfect"``."""
        return _spec_name(self.feature, self.buckets_per_round, self.recall)

    @cached_property
    def _cards(self) -> _Cards:
        return _cards_of(self.game)

    @cached_property
    def _data(self) -> tuple[Any, ...]:
        cards, t = self._cards, self.tables
        return (
            cards.perm_maps, cards.hand_map, cards.hand_sets, cards.hands, cards.total_cards,
            np.array(self.buckets_per_round, dtype=np.int64), int(self.recall is Recall.PERFECT),
            t.key_start, t.keys, t.table, t.merged_start, t.merged, t.local_start, t.local, t.final_thresholds,
        )  # fmt: skip

    def num_buckets(self, round: int) -> int:
        if not 0 <= round < self.game.num_rounds:
            raise AbstractionError(f"round {round!r} is outside 0..{self.game.num_rounds - 1}")
        if self.recall is Recall.PERFECT:
            return math.prod(self.buckets_per_round[: round + 1])
        return self.buckets_per_round[round]

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        """Round ``round``'s bucket of every private hand, -1 for hands clashing with the board."""
        cards = self._cards.check_board(round, board)
        counts = self._cards.strength_counts(cards) if round == self._cards.last else np.empty(0, np.int64)
        out = np.empty(len(self._cards.hands), dtype=np.int64)
        _k.sequence_buckets(cards, round, self._data, counts, out)
        return out.astype(np.int32)

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        """The buckets of every round for a final board in deal order,
        ``int32[num_rounds, H]``: row r is ``buckets(r, board[:cards of round r])``
        (one call per sampled board in public chance sampling)."""
        cards = self._cards.check_board(self._cards.last, board)
        out = np.empty((self.game.num_rounds, len(self._cards.hands)), dtype=np.int64)
        _k.all_round_buckets(cards, self._data, self._cards.strength_counts(cards), out)
        return out.astype(np.int32)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """The bucket of one hand (hole cards in any order)."""
        return int(self.buckets(round, board)[_hand_index(self._cards, hole, board)])

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
        _write(Path(path), header, {name: getattr(self.tables, name) for name in _Tables.ARRAYS})

    @classmethod
    def load(cls, path: str | Path) -> CardAbstraction:
        """Read a file written by :meth:`save`.

        Raises:
            AbstractionError: not a card abstraction file, another version, or damaged arrays.
        """
        header, arrays = _read(Path(path))
        if header.get("format") != FORMAT:
            raise AbstractionError(f"{path}: not a card abstraction file (no {FORMAT!r} header)")
        if header.get("version") != FORMAT_VERSION:
            raise AbstractionError(
                f"{path}: card abstraction version {header.get('version')!r}; this reader knows {FORMAT_VERSION}"
            )
        missing = [name for name in _Tables.ARRAYS if name not in arrays]
        if missing:
            raise AbstractionError(f"{path}: arrays {missing} are missing")
        return cls(
            game=parse_game(header["game"], source=f"{path} header"),
            feature=Feature(header["feature"]),
            buckets_per_round=tuple(int(k) for k in header["buckets"]),
            recall=Recall(header["recall"]),
            tables=_Tables(**{name: arrays[name] for name in _Tables.ARRAYS}),
        )

    @classmethod
    def build(
        cls, game: Game, spec: AbstractionSpec, *, cache_dir: Path | None = None, workers: int | None = None,
        progress: Progress | None = None,
    ) -> CardAbstraction:  # fmt: skip
        """Compute the abstraction by exact enumeration (hold'em ``ehs2:5:perfect``:
        about 40 s on 2 cores, 1.5 GB at the peak). ``cache_dir`` holds the
        preflop sums; ``workers`` threads (default: every core) share the boards."""
        return _Builder(game, spec, cache_dir, workers or os.cpu_count() or 1, progress).build()


def _spec_name(feature: Feature, buckets: tuple[int, ...], recall: Recall) -> str:
    counts = str(buckets[0]) if len(set(buckets)) == 1 else ",".join(map(str, buckets))
    return f"{feature}:{counts}:{recall}"


def _hand_index(cards: _Cards, hole: Sequence[int], board: Sequence[int]) -> int:
    key = sorted(int(c) for c in hole)
    matches: Sequence[int] = []
    if len(key) == cards.hands.shape[1]:
        matches = np.flatnonzero((cards.hands == np.array(key)).all(axis=1)).tolist()
    if len(matches) != 1:
        raise AbstractionError(f"hole cards {list(hole)} are not a private hand of the game")
    if set(key) & {int(c) for c in board}:
        raise AbstractionError(f"hole cards {list(hole)} share a card with the board {list(board)}")
    return int(matches[0])


class _Builder:
    def __init__(
        self, game: Game, spec: AbstractionSpec, cache_dir: Path | None, workers: int, progress: Progress | None
    ) -> None:
        self.game = game
        self.spec = spec
        self.cards = _cards_of(game)
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
            self._final = _final_counts(self.cards, self.workers, self.progress)
        return self._final

    def groups(self, round: int) -> int:
        return math.prod(self.k[:round]) if self.perfect else 1

    def tables_now(self) -> _Tables:
        width = max([int(m.size) for m in self.merged] + [0])
        dtype = np.uint8 if width < 2**8 else np.uint16 if width < 2**16 else np.uint32
        rows = self.tables or [np.zeros((0, len(self.cards.hands)), dtype=np.int64)]
        table: npt.NDArray[np.unsignedinteger[Any]] = np.concatenate(rows).astype(dtype)
        return _Tables(
            key_start=self.key_start.copy(),
            keys=np.concatenate(self.keys) if self.keys else np.zeros(0, np.int64),
            table=table,
            merged_start=self.merged_start.copy(),
            merged=np.concatenate(self.merged) if self.merged else np.zeros(0, np.int64),
            local_start=self.local_start.copy(),
            local=np.concatenate(self.local) if self.local else np.zeros(0, np.int32),
            final_thresholds=self.final_thresholds,
        )

    def abstraction(self) -> CardAbstraction:
        return CardAbstraction(self.game, self.spec.feature, self.k, self.spec.recall, self.tables_now())

    def build(self) -> CardAbstraction:
        for q in range(self.cards.last):
            self.add_round(q)
        self.add_final_round()
        return self.abstraction()

    def splits(self, round: int) -> npt.NDArray[np.int64]:
        """Deal orders of a round-``round`` board's ascending cards: for each way of
        dealing them over rounds 0..round, the positions round by round."""
        size = int(self.cards.total_cards[round])
        if not self.perfect:
            return np.arange(size, dtype=np.int64).reshape(1, size)
        per_round = [int(self.game.num_board_cards[r]) for r in range(round + 1)]
        orders: list[list[int]] = [[]]
        for count in per_round:
            orders = [
                order + list(chosen)
                for order in orders
                for chosen in itertools.combinations([p for p in range(size) if p not in order], count)
            ]
        return np.array(orders, dtype=np.int64).reshape(len(orders), size)

    def raw_features(self, round: int, boards: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Integer feature of every hand on each canonical board of a round before the last."""
        if self.spec.feature is Feature.HS or boards.shape[1] == self.cards.total_cards[-1]:
            out = np.empty((len(boards), len(self.cards.hands)), dtype=np.int64)
            _k.board_strengths(boards, self.cards.hand_sets, self.cards.hands, out)
            return out
        square = self.spec.feature is Feature.EHS2
        if boards.shape[1] == 0:
            sums = _cached_preflop_sums(self.cards, self.cache_dir, self.workers, self.progress, self.final_counts)
            return (sums[1] if square else sums[0]).reshape(1, -1)
        keys, table = self.final_counts()
        cards = self.cards
        combos = _combinations(len(cards.deck) - boards.shape[1], int(cards.total_cards[-1]) - boards.shape[1])
        out = np.empty((len(boards), len(cards.hands)), dtype=np.int64)

        def work(start: int, stop: int) -> None:
            _k.table_completion_sums(
                boards[start:stop], cards.deck, combos, square, cards.hand_sets, cards.perm_maps, cards.hand_map,
                keys, table, out[start:stop],
            )  # fmt: skip

        stage = f"features ({boards.shape[1]}-card boards)"
        _run_chunks(len(boards), 64, work, self.workers, stage, self.progress)
        return out

    def add_round(self, q: int) -> None:
        boards, orbit = self.cards.canonical[int(self.cards.total_cards[q])]
        values = self.raw_features(q, boards)
        splits = self.splits(q) if q > 0 else np.zeros((1, boards.shape[1]), dtype=np.int64)
        per_board = len(splits) * self.cards.valid_per_board(boards.shape[1])
        value_bits, weight_bits = _bits(int(values.max(initial=0))), _bits(int(orbit.max()))
        num_groups = self.groups(q)
        _check_key_bits(num_groups, value_bits, weight_bits)
        keys = np.empty(len(boards) * per_board, dtype=np.int64)
        data = self.abstraction()._data

        def work(start: int, stop: int) -> None:
            written = _k.round_pair_keys(
                boards[start:stop], orbit[start:stop], values[start:stop], splits, q, data, value_bits, weight_bits,
                keys[start * per_board : stop * per_board],
            )  # fmt: skip
            if written != (stop - start) * per_board:
                raise RuntimeError(f"round {q}: {written} pair keys for {stop - start} boards, not {per_board} each")

        _run_chunks(len(boards), 256, work, self.workers, f"round {q} buckets", self.progress)
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

            parts = _run_chunks(len(table), 4096, direct, self.workers, stage, self.progress)
        else:
            # Every (hand, deal order, run-out): from the round before's canonical
            # boards, their deal orders, and each completion to the final board.
            boards, orbit = self.cards.canonical[int(self.cards.total_cards[last - 1])]
            splits = self.splits(last - 1)
            deck = self.cards.deck
            combos = _combinations(len(deck) - boards.shape[1], int(self.cards.total_cards[last]) - boards.shape[1])
            data = self.abstraction()._data

            def nested(start: int, stop: int) -> npt.NDArray[np.int64]:
                hist = np.zeros((num_groups, width), dtype=np.int64)
                _k.nested_final_histogram(
                    boards[start:stop], orbit[start:stop], splits, deck, combos, data, keys, table, hist
                )
                return hist

            parts = _run_chunks(len(boards), 256, nested, self.workers, stage, self.progress)
        hist = np.sum(parts, axis=0)
        self.final_thresholds = _k.thresholds_from_histogram(hist, self.k[last])


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
        cards = _cards_of(self.game).check_board(round, board)
        out = np.arange(len(self._hands), dtype=np.int32)
        out[np.isin(self._hands, cards).any(axis=1)] = -1
        return out

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        sizes = [self.game.total_board_cards(r) for r in range(self.game.num_rounds)]
        return np.array([self.buckets(r, list(board)[:size]) for r, size in enumerate(sizes)], dtype=np.int32)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        return int(self.buckets(round, board)[_hand_index(_cards_of(self.game), hole, board)])


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
    name = _spec_name(parsed.feature, parsed.buckets_per_round(game), parsed.recall)
    slug = name.replace(":", "-").replace(",", "_")
    path = directory / f"{slug}-{_cards_of(game).digest}.abstraction"
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


def _pack(array: npt.NDArray[Any]) -> dict[str, Any]:
    little = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return {"dtype": little.dtype.str, "shape": list(array.shape), "data": little.tobytes()}


def _write(path: Path, header: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(msgpack.packb({**header, "arrays": sorted(arrays)}, use_bin_type=True))
            out.write(msgpack.packb({name: _pack(a) for name, a in arrays.items()}, use_bin_type=True))
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read(path: Path) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    try:
        with open(path, "rb") as stream:
            unpacker = msgpack.Unpacker(stream, raw=False, max_buffer_size=0)
            header = unpacker.unpack()
            packed = unpacker.unpack()
        if not isinstance(header, dict) or not isinstance(packed, dict):
            raise ValueError("no header")
        arrays = {}
        for name, p in packed.items():
            dtype = np.dtype(p["dtype"])
            arrays[name] = np.frombuffer(p["data"], dtype=dtype).reshape(p["shape"]).astype(dtype.newbyteorder("="))
    except (msgpack.OutOfData, msgpack.UnpackException, ValueError, KeyError, TypeError) as error:
        raise AbstractionError(f"{path}: not a card abstraction file ({error or 'truncated'})") from None
    return header, arrays
