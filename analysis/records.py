"""Hands from msgpack hand records (``*.hands.msgpack``, :mod:`dealer.records`)
as a :class:`analysis.hands.Hands` table, with the seed of each run.

Each record is checked as :mod:`analysis.logs` checks a line (and a cut or
damaged end of the file is damage, not the end of the hands); a damaged record
raises :class:`analysis.hands.HandsError` naming ``file: record N``, or is left
out and listed with ``skip_damaged=True``.
"""

from __future__ import annotations

import os
from itertools import chain, repeat
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgpack
import numpy as np

from analysis._hand_checks import MAX_HAND_ID, STRIP_BETTING, CardLayout, Damage, column_problems, hand_id_problem
from analysis.hands import Hands, HandsError, LogHeader
from dealer.records import HAND_FIELDS, MAX_RECORD_BYTES, MatchHeader, record_unpacker
from poker.cards import NUM_RANKS, NUM_SUITS
from poker.excerpt import quote

__all__ = ["read_records", "is_records"]

#: Card ids run from 0 to this minus one (``rank * 4 + suit``).
_DECK_CARDS: Final = NUM_RANKS * NUM_SUITS
#: The Python types of a record's numbers: ``True`` is an ``int`` to ``isinstance``, not here.
_NUMBERS: Final = frozenset((int, float))


def _unpack_reason(error: Exception) -> str:
    """What msgpack found wrong, in words (some of its errors carry no message)."""
    if isinstance(error, msgpack.StackError):
        return "objects nested deeper than msgpack reads"
    if isinstance(error, msgpack.FormatError):
        return "a byte that starts no msgpack object"
    if isinstance(error, msgpack.BufferFull):
        return f"an object longer than {MAX_RECORD_BYTES} bytes"
    if isinstance(error, UnicodeDecodeError):
        return "text that is not UTF-8"
    return str(error) or type(error).__name__


class _RecordsReader(Damage):
    """One pass over a records file: its headers, the hand records (with their
    record numbers, their numbers among the hands and their runs), a damaged
    tail; then the checks of the hands' fields, cards and values."""

    def __init__(self, path: Path, *, skip_damaged: bool) -> None:
        super().__init__(path, skip_damaged=skip_damaged)
        self.headers: list[MatchHeader] = []
        self.items: list[Any] = []
        self.numbers: list[int] = []
        self.hand_numbers: list[int] = []
        self.runs: list[int] = []
        self.tail: tuple[int, str] | None = None  # the record number and the damage of a damaged end

    def place(self, number: int) -> str:
        return f"{self.path}: record {number}"

    def read(self, file: BinaryIO) -> None:
        """Every record of ``file``. The stream cannot be picked up again after
        damage (msgpack has no record marks), so a damaged record ends the read:
        the rest of the file is one damaged tail, kept in :attr:`tail`."""
        size = os.fstat(file.fileno()).st_size
        unpacker = record_unpacker(file)
        number = start = 0
        while True:
            start = unpacker.tell()
            try:
                item = next(unpacker)
            except StopIteration:
                break
            except (msgpack.UnpackException, ValueError) as error:
                self.tail = (number + 1, f"damaged msgpack at byte {start} of {size}: {_unpack_reason(error)}")
                return
            number += 1
            if isinstance(item, dict):
                self.header(number, item)
            elif not self.headers:
                self.damaged(number, f"a hand comes before any match header: {quote(item)}")
            else:
                self.items.append(item)
                self.numbers.append(number)
                self.hand_numbers.append(number - len(self.headers))
                self.runs.append(len(self.headers) - 1)
        if start < size:
            self.tail = (number + 1, f"the file ends inside a record (its last {size - start} bytes, from byte {start})")

    def header(self, number: int, item: dict[str, Any]) -> None:
        """A run's header; a damaged one is an error even with ``skip_damaged``:
        the hands after it could not be placed."""
        try:
            header = MatchHeader.from_msgpack(item)
        except ValueError as error:  # GameDefError too
            raise HandsError(f"{self.place(number)}: bad match header: {error}") from None
        if self.headers and (self.headers[0].game != header.game or self.headers[0].names != header.names):
            raise HandsError(f"{self.place(number)}: a run of another game or other players")
        self.headers.append(header)

    def seats_fit(self, seats: tuple[Any, ...]) -> bool:
        """Whether ``seats`` gives each position its own seat of the header's
        names (a seat past them was an IndexError of every table built after)."""
        players = self.headers[0].game.num_players
        return len(seats) == players and set(map(type, seats)) <= {int} and sorted(seats) == list(range(players))

    def fields_fit(self) -> bool:
        """Whether every hand record passes :meth:`hand_problem`, checked a field
        at a time over all records (``map`` and ``set`` in C): a record at a time
        costs more than reading it."""
        items, game = self.items, self.headers[0].game
        if not items:
            return True
        if set(map(type, items)) != {list} or set(map(len, items)) != {len(HAND_FIELDS)}:
            return False
        ids, seats, holes, boards, shown, betting, values = zip(*items)
        totals = [game.total_board_cards(r) for r in range(game.num_rounds)]
        rounds = list(map(str.count, betting, repeat("/"))) if set(map(type, betting)) == {str} else [game.num_rounds]
        return (
            set(map(type, ids)) == {int}
            and 0 <= min(ids)
            and max(ids) <= MAX_HAND_ID
            and set(map(type, seats)) == {list}
            and all(map(self.seats_fit, set(map(tuple, seats))))
            and set(map(type, holes)) == {bytes}
            and set(map(len, holes)) == {game.num_players * game.num_hole_cards}
            and set(map(type, boards)) == {bytes}
            and set(map(len, boards)) == {sum(game.num_board_cards)}
            and max(rounds) < game.num_rounds
            and not "".join(betting).translate(STRIP_BETTING).strip("/")
            and set(map(type, shown)) == {int}
            and list(map(totals.__getitem__, rounds)) == list(shown)
            and set(map(type, values)) == {list}
            and set(map(len, values)) == {game.num_players}
            and set(map(type, chain.from_iterable(values))) <= _NUMBERS
        )

    def hand_problem(self, item: Any) -> str | None:
        """What is wrong with the fields of a hand record (:data:`dealer.records.HAND_FIELDS`),
        None when each has its type and size; cards and values are checked for
        every hand at once afterwards (:func:`analysis._hand_checks.column_problems`)."""
        game = self.headers[0].game
        players, holes, boards = game.num_players, game.num_players * game.num_hole_cards, sum(game.num_board_cards)
        if type(item) is not list or len(item) != len(HAND_FIELDS):
            return f"not a hand record ({len(HAND_FIELDS)} fields)"
        hand_id, seats, hole, board, shown, betting, values = item
        if type(hand_id) is not int or not 0 <= hand_id <= MAX_HAND_ID:
            return hand_id_problem(quote(hand_id))
        if type(seats) is not list or not self.seats_fit(tuple(seats)):
            return f"seats {quote(seats)} are not the seats 0 to {players - 1}, one per position"
        if type(hole) is not bytes or len(hole) != holes:
            return f"hole cards {quote(hole)} are not {holes} card bytes"
        if type(board) is not bytes or len(board) != boards:
            return f"board {quote(board)} is not {boards} card bytes"
        if type(betting) is not str or betting.translate(STRIP_BETTING).strip("/"):
            return f"betting {quote(betting)} is not text of f, c, r, digits and /"
        round_ = betting.count("/")
        if round_ >= game.num_rounds:
            return f"betting {quote(betting)} reaches round {round_ + 1} of a game of {game.num_rounds}"
        if type(shown) is not int or shown != game.total_board_cards(round_):
            return f"board_shown {quote(shown)} is not the {game.total_board_cards(round_)} board cards of round {round_ + 1}"
        if type(values) is not list or len(values) != players or not set(map(type, values)) <= _NUMBERS:
            return f"values {quote(values)} are not one number per position ({players})"
        return None

    def hands(self) -> Hands:
        """The hands read, after the checks of their fields (:meth:`fields_fit`,
        else record by record), then of every hand's cards and values at once
        (:func:`analysis._hand_checks.column_problems`), then the damaged end."""
        if not self.headers:
            if self.tail is not None:
                self.damaged(*self.tail)
            raise HandsError(f"{self.path}: no match header")
        keep = list(range(len(self.items)))
        if not self.fields_fit():
            keep = []
            for row, item in enumerate(self.items):
                problem = self.hand_problem(item)
                if problem is None:
                    keep.append(row)
                else:
                    self.damaged(self.numbers[row], f"{problem}: {quote(item)}")
        rows = [self.items[i] for i in keep]
        numbers = [self.numbers[i] for i in keep]
        game = self.headers[0].game
        layout = CardLayout.of(game)
        n = len(rows)
        cards = np.frombuffer(b"".join(r[2] + r[3] for r in rows), dtype=np.uint8).reshape(n, layout.slot_pos.size)
        board_shown = np.array([r[4] for r in rows], dtype=np.int64).reshape(n, 1)
        shown = np.arange(layout.slot_pos.size)[None, :] < layout.players * layout.hole_cards + board_shown
        card_ids = np.where(shown & (cards < _DECK_CARDS), cards, -1).astype(np.int8)
        hand_id = np.array([r[0] for r in rows], dtype=np.int64).reshape(n)
        values = np.array([r[6] for r in rows], dtype=np.float64).reshape(n, layout.players)
        bad_card = np.asarray((shown & (cards >= _DECK_CARDS)).any(axis=1))
        good = np.ones(n, dtype=bool)
        for row, problem in column_problems(hand_id, values, card_ids, bad_card, players=layout.players):
            self.damaged(numbers[row], f"{problem}: {quote(rows[row])}")
            good[row] = False
        damaged_ends: tuple[str, ...] = ()
        if self.tail is not None:
            self.damaged(*self.tail)
            number, message = self.tail
            damaged_ends = (f"{self.place(number)}: {message}; it and the rest of the file are left out",)
        hole_end = layout.players * layout.hole_cards
        return Hands(
            game=game,
            source=str(self.path),
            hand_id=hand_id[good],
            values=values[good],
            names=self.headers[0].names,
            name_index=np.array([r[1] for r in rows], dtype=np.int32).reshape(n, layout.players)[good],
            hole=card_ids[good, :hole_end].reshape(-1, layout.players, layout.hole_cards),
            board=card_ids[good, hole_end:],
            betting=tuple(r[5] for r, g in zip(rows, good) if g),
            line=np.array([self.hand_numbers[i] for i in keep], dtype=np.int64)[good],
            seed=np.array([self.headers[self.runs[i]].seed for i in keep], dtype=np.int64)[good],
            headers=tuple(LogHeader(h.match_name, h.game_path, h.num_hands, h.seed) for h in self.headers),
            skipped=tuple(sorted(self.skipped)),
            damaged_ends=damaged_ends,
        )


def read_records(path: Path, *, skip_damaged: bool = False) -> Hands:
    """Every hand of a ``*.hands.msgpack`` file (:mod:`dealer.records`), with its
    run's seed; :attr:`Hands.line` is each hand's number among the file's hands.

    Every record is checked as :func:`analysis.logs.read_log` checks a line: a header against
    its schema, each hand's fields for type and size, hand ids as uint32 and
    seats one per position, then every hand's cards and values at once (cards
    of the deck, none twice, values finite and summing to zero). A damaged end
    of the file (cut short, or an object that does not unpack) is damage too,
    never the silent end of the hands; nothing a damaged length declares is
    allocated (:data:`dealer.records.MAX_RECORD_BYTES`, :data:`dealer.records.MAX_RECORD_ENTRIES`).

    Raises:
        HandsError: naming the file and the record (numbered from 1, headers
            too): an unreadable file, a bad header or one of another game, and
            unless ``skip_damaged`` (which leaves them out and lists their
            numbers in :attr:`Hands.skipped`; a damaged end counts as one, and
            :attr:`Hands.damaged_ends` says what it cost) a damaged hand record
            or a damaged end.
    """
    path = Path(path)
    reader = _RecordsReader(path, skip_damaged=skip_damaged)
    try:
        with open(path, "rb") as file:
            reader.read(file)
    except OSError as error:
        raise HandsError(f"{path}: {error.strerror or error}") from None
    return reader.hands()


def is_records(path: Path | str) -> bool:
    """Whether ``path`` names msgpack hand records (:func:`read_records`), not a ``.log``."""
    return str(path).endswith(".msgpack")
