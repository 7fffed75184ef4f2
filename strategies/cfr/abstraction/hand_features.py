"""Hand-strength features of every private hand, exact: HS, E[HS] and E[HS²].

Reference: Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', ch5 §5.2. On the
last round a hand's **hand strength** HS is its probability of beating a
uniformly random opponent hand (ties count 1/2). Before that, **E[HS]** is HS
averaged over every run-out of the remaining board cards, and **E[HS²]** the
average of its square, which favours drawing hands. We also offer the
current-board HS (the hand ranked with the board dealt so far). HS is against
one opponent whatever the number of players.

How it is computed (exact enumeration, no sampling):

1. Strength counts. On a last-round board one radix sort of the hands and one
   sweep with per-card counts give every hand's ``n = 2 * wins + ties`` against
   the opponent hands that fit (ch2 §2.4), so a board costs O(H), not O(H²).
2. Features are exact integers: n on the last round; before it the sums of n
   (E[HS]) or n² (E[HS²]) over the run-outs. The counts of every canonical
   last-round board are computed once into a table (:func:`final_counts`;
   hold'em: 134459 rivers, int16, 357 MB while building); a flop's 1176
   two-card run-outs (each hand sees the 1081 that avoid it) and a turn's 48
   rivers are then look-ups, each run-out mapped to its canonical board
   (:mod:`strategies.cfr.abstraction.card_tables`) with the hands permuted alike.
   Preflop, each canonical river counts once for its whole suit class and the
   sums are shared across each suit class of hands (exact: the features are
   suit-symmetric; :func:`cached_preflop_sums`). Exact integers also mean
   suit-isomorphic pairs get equal values, never values one rounding apart.

The bucketing of :mod:`strategies.cfr.abstraction.bucketing` splits these integers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, format_game
from strategies.cfr.abstraction import _kernels as _k
from strategies.cfr.abstraction.cache_files import (
    CacheFileError,
    default_cache_dir,
    expect_arrays,
    read_arrays,
    write_arrays,
)
from strategies.cfr.abstraction.card_tables import (
    AbstractionError,
    CardTables,
    Progress,
    card_tables,
    combinations_table,
    run_chunks,
)

__all__ = ["HandFeatures", "cached_preflop_sums", "final_counts", "hand_features"]

PREFLOP_FORMAT = "acpc-arena-card-abstraction-preflop"
PREFLOP_VERSION = 1


def final_counts(
    cards: CardTables, workers: int, progress: Progress | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]]:
    """(board masks, strength counts int16[B, H]) of the canonical final boards
    (hold'em: 134459 rivers, 357 MB): the table every earlier round's features
    look their run-outs up in."""
    boards, _ = cards.canonical[int(cards.total_cards[-1])]
    table = np.empty((len(boards), len(cards.hands)), dtype=np.int16)

    def work(start: int, stop: int) -> None:
        _k.count_table(boards[start:stop], cards.hand_sets, cards.hands, table[start:stop])

    run_chunks(len(boards), 1024, work, workers, "final-round strength", progress)
    return cards.masks(boards), table


def _preflop_sums(
    cards: CardTables, table: npt.NDArray[np.int16], workers: int, progress: Progress | None
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

    parts = run_chunks(len(table), 4096, work, workers, "preflop", progress)
    classes = np.min(cards.hand_map, axis=0)  # smallest hand index in each hand's suit class
    members = np.bincount(classes, minlength=num_hands).astype(np.int64)
    out = []
    for i in range(2):
        class_total = np.zeros(num_hands, dtype=np.int64)
        np.add.at(class_total, classes, np.sum([p[i] for p in parts], axis=0))
        out.append(class_total[classes] // members[classes])
    return out[0], out[1]


def cached_preflop_sums(
    cards: CardTables,
    cache_dir: Path | None,
    workers: int,
    progress: Progress | None,
    final: Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.int16]]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each hand's sums of n and n² over every final board (the preflop E[HS] and
    E[HS²] numerators), read from ``cache_dir`` (default
    :func:`~strategies.cfr.abstraction.cache_files.default_cache_dir`) if computed before,
    else computed (``final`` gives :func:`final_counts`, which the caller may
    already hold) and written there."""
    path = (cache_dir or default_cache_dir()) / f"preflop-sums-{cards.digest}.msgpack"
    game_text = format_game(cards.game)
    if path.exists():
        try:
            hands = (len(cards.hands),)
            header, arrays = read_arrays(path, expect=expect_arrays({"sum1": ("<i8", hands), "sum2": ("<i8", hands)}))
        except CacheFileError:  # damaged: computed again below
            header, arrays = {}, {}
        if header.get("game") == game_text and {"sum1", "sum2"} <= set(arrays):
            return arrays["sum1"], arrays["sum2"]
    sums = _preflop_sums(cards, final()[1], workers, progress)
    header = {"format": PREFLOP_FORMAT, "version": PREFLOP_VERSION, "game": game_text}
    write_arrays(path, header, {"sum1": sums[0], "sum2": sums[1]})
    return sums


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
    """HS, E[HS] and E[HS²] of every hand of :func:`poker.deal.private_hands`
    on ``board`` (the cards of any round, e.g. a flop or ``()`` preflop), exact.

    Preflop sums come from every final board (hold'em: 134459 canonical rivers,
    a few seconds) and are cached in ``cache_dir`` (default
    :func:`~strategies.cfr.abstraction.cache_files.default_cache_dir`); a flop takes tens of
    milliseconds."""
    cards = card_tables(game)
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
        sum1, sum2 = cached_preflop_sums(cards, cache_dir, threads, None, lambda: final_counts(cards, threads, None))
    else:
        combos = combinations_table(len(cards.deck) - size, int(cards.total_cards[-1]) - size)
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
