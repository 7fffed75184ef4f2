"""Duplicate matches (docs/protocol.md, The dealer's rules: Cards): logs of one seed played with
the seats permuted.

Cards go to positions, so the logs of a duplicate match hold, hand for hand,
the same cards by position while the seat names rotate: heads-up, two logs with
the seats swapped; three-handed, the six seatings. :func:`pair` checks exactly
that — the same hand ids, the same hole cards per position and the same board
cards wherever both hands reached them, and in every hand each player in each
position once over the logs — and refuses anything else naming the first hand
that differs. A player's duplicate value for a hand is its result averaged over
the seatings, as ``arena match --duplicate`` scores it; the estimate is the mean
and 95% interval over hands.

:func:`find_duplicates` sorts a heap of logs into duplicate sets (same game,
same players, same seed in the header, as many logs as seatings, each in
another seating) and the logs left over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import numpy.typing as npt

from analysis.breakdown import estimate
from analysis.hands import Hands
from poker.cards import cards_to_text
from poker.stats import Estimate

__all__ = ["DuplicateError", "DuplicateSet", "pair", "seating_means", "find_duplicates", "seat_order", "combined_estimates"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class DuplicateError(ValueError):
    """Logs that are not the seatings of one duplicate match; the message names
    the first hand (file, hand id) that differs and what differs."""


@dataclass(frozen=True)
class DuplicateSet:
    """The seatings of one duplicate match. ``values[h, j]`` is ``names[j]``'s
    chips in hand ``hand_id[h]`` averaged over the seatings."""

    tables: tuple[Hands, ...]
    names: tuple[str, ...]
    hand_id: IntArray
    values: FloatArray

    def estimates(self) -> dict[str, Estimate]:
        """Each player's duplicate mean per hand and its 95% interval (chips)."""
        return {name: estimate(self.values[:, j]) for j, name in enumerate(self.names)}


def seat_order(hands: Hands) -> tuple[str, ...]:
    """The names in seat order: the SCORE line's, or the first hand's names
    turned back by its hand id (the dealer seats position p in seat (p + h) mod N)."""
    if hands.score is not None and len(hands.score[1]) == hands.players:
        return hands.score[1]
    if not len(hands):
        return ()
    first, n = int(hands.hand_id[0]), hands.players
    by_position = hands.names_at(0)
    return tuple(by_position[(s - first) % n] for s in range(n))


def _sorted(hands: Hands) -> Hands:
    order = np.argsort(hands.hand_id, kind="stable")
    table = hands.take(order)
    repeated = np.flatnonzero(np.diff(table.hand_id) == 0)
    if repeated.size:
        row = int(repeated[0]) + 1
        raise DuplicateError(f"{table.where(row)}: hand {table.hand_id[row]} appears twice in {table.source}")
    return table


def _cards(cards: npt.NDArray[np.int8]) -> str:
    return cards_to_text(int(c) for c in cards if c >= 0) or "none"


def _check_hands(first: Hands, other: Hands) -> None:
    """Same hand ids and cards as ``first``, else a :class:`DuplicateError` for the first hand that differs."""
    if not np.array_equal(first.hand_id, other.hand_id):
        missing = np.setxor1d(first.hand_id, other.hand_id)
        hand = int(missing[0])
        has, lacks = (first, other) if hand in set(first.hand_id.tolist()) else (other, first)
        raise DuplicateError(f"hand {hand} is in {has.source} but not in {lacks.source}: the logs are not one duplicate match")
    hole = (first.hole != other.hole).any(axis=2)  # [n, P]
    board = (first.board >= 0) & (other.board >= 0) & (first.board != other.board)
    rows = np.flatnonzero(hole.any(axis=1) | board.any(axis=1))
    if not rows.size:
        return
    row = int(rows[0])
    hand = int(first.hand_id[row])
    if hole[row].any():
        p = int(np.argmax(hole[row]))
        what = f"position {p}'s hole cards are {_cards(first.hole[row, p])} in {first.where(row)} but {_cards(other.hole[row, p])} in {other.where(row)}"
    else:
        what = f"the board is {_cards(first.board[row])} in {first.where(row)} but {_cards(other.board[row])} in {other.where(row)}"
    raise DuplicateError(f"hand {hand}: {what}: the logs are not one duplicate match")


def pair(tables: Sequence[Hands]) -> DuplicateSet:
    """The duplicate set of ``tables`` (one per seating, in the order given: the
    per-hand averages add the seatings in that order, as ``arena match`` does).

    Raises:
        DuplicateError: other games, other players, not one log per seating,
            hands or cards that differ, or seatings that do not cover every order.
    """
    if not tables:
        raise DuplicateError("no logs to pair")
    game, players = tables[0].game, tables[0].players
    needed = math.factorial(players)
    if len(tables) != needed:
        raise DuplicateError(
            f"a duplicate match of {players} players has {needed} seatings, got {len(tables)} logs: "
            + ", ".join(t.source for t in tables)
        )
    for table in tables[1:]:
        if table.game != game:
            raise DuplicateError(f"{table.source} is not a log of the same game as {tables[0].source}")
    names = seat_order(tables[0])
    for table in tables:
        if set(seat_order(table)) != set(names) or len(set(names)) != players:
            raise DuplicateError(
                f"{table.source} seats {'|'.join(seat_order(table))}, not the {players} players "
                f"{'|'.join(names)} of {tables[0].source}"
            )
    ordered = [_sorted(t) for t in tables]
    for table in ordered[1:]:
        _check_hands(ordered[0], table)
    n = len(ordered[0])
    ids = []  # per log: [n, P] index into names by position
    for table in ordered:
        mapping = np.array([names.index(name) if name in names else -1 for name in table.names], dtype=np.int64)
        ids.append(mapping[table.name_index])
    weights = players ** np.arange(players)
    codes = np.sort(np.stack([(i * weights).sum(axis=1) for i in ids]), axis=0)  # [K, n]
    every = np.sort(np.array([sum(j * w for j, w in zip(perm, weights)) for perm in permutations(range(players))]))
    wrong = np.flatnonzero((codes != every[:, None]).any(axis=0) | np.stack([(i < 0).any(axis=1) for i in ids]).any(axis=0))
    if wrong.size:
        row = int(wrong[0])
        seatings = "; ".join(f"{t.where(row)} {'|'.join(t.names_at(row))}" for t in ordered)
        raise DuplicateError(
            f"hand {ordered[0].hand_id[row]}: the logs do not put every player in every position once ({seatings})"
        )
    every_id = np.concatenate([table.hand_id for table in ordered])
    values = np.empty((n, players))
    for j, name in enumerate(names):
        _, values[:, j] = seating_means(every_id, np.concatenate([table.name_values(name) for table in ordered]))
    return DuplicateSet(tuple(ordered), names, ordered[0].hand_id.copy(), values)


def seating_means(
    hand_id: IntArray, values: FloatArray, kept: IntArray | None = None
) -> tuple[IntArray, FloatArray]:
    """Each hand's values averaged over the rows (the seatings) that hold it:
    the hands, ascending, and their means. ``values`` NaN (a player not in the
    hand) are left out; ``kept``: only those hands. The seatings are added in
    the order of the rows, so the same seatings in the same order give the
    same means to the last bit wherever a duplicate value is needed."""
    played = ~np.isnan(values)
    ids, column = hand_id[played], values[played]
    if kept is not None:
        inside = np.isin(ids, kept)
        ids, column = ids[inside], column[inside]
    unique, index = np.unique(ids, return_inverse=True)
    means: FloatArray = np.bincount(index, weights=column, minlength=unique.size) / np.bincount(index, minlength=unique.size)
    return unique.astype(np.int64), means


def find_duplicates(tables: Sequence[Hands]) -> tuple[list[DuplicateSet], list[Hands]]:
    """Duplicate sets among ``tables`` and the tables in none. Logs are grouped
    by game, players and the seed of their first hand; a group of as many logs
    as seatings, each in a different seating, must pair (:func:`pair`).

    Raises:
        DuplicateError: a group that looks like a duplicate match does not pair.
    """
    groups: dict[tuple[object, ...], list[Hands]] = {}
    for table in tables:
        if not len(table):
            groups.setdefault(("empty", id(table)), []).append(table)
            continue
        key = (table.game, frozenset(seat_order(table)), int(table.seed[0]))
        groups.setdefault(key, []).append(table)
    sets, rest = [], []
    for group in groups.values():
        players = group[0].players
        seatings = {seat_order(t) for t in group}
        if len(group) == math.factorial(players) and len(seatings) == len(group) and len(group) > 1:
            sets.append(pair(group))
        else:
            rest += group
    return sets, rest


def combined_estimates(sets: Sequence[DuplicateSet]) -> dict[str, Estimate]:
    """Each player's duplicate estimate over the hands of every set it plays in."""
    names: list[str] = []
    for duplicate in sets:
        names += [name for name in duplicate.names if name not in names]
    result = {}
    for name in names:
        values = [d.values[:, d.names.index(name)] for d in sets if name in d.names]
        result[name] = estimate(np.concatenate(values))
    return result
