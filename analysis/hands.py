"""Hand histories as numpy columns, from ACPC ``.log`` files and msgpack hand records.

A ``.log`` (ours or the reference dealer's; docs/protocol.md, The dealer's rules: Output) holds
one line per hand::

    STATE:<handId>:<betting>:<hole by position, '|'-separated><board>:<values by position>:<names by position>

:func:`read_log` reads it in blocks of lines and turns each block into columns
with ``str`` methods and numpy, without replaying the rules: the values are in
the line, the cards are fixed-width text at places the round fixes, and the
betting only has to use the betting alphabet and reach the round the cards
show. Every line is still checked: six fields, a decimal hand id that fits the
dealer's uint32, one value and one name per position, finite values that sum to
zero (to the 6 printed decimals), cards laid out as the game lays them out for
that round, no card twice in a hand. ``validate=True`` also replays each hand
with :mod:`poker` (every action legal, the values those of the betting and the
cards).

A damaged line raises :class:`HandsError` naming ``file:line`` and what is
wrong; ``skip_damaged=True`` leaves such lines out and lists their numbers in
:attr:`Hands.skipped`.

:func:`read_records` reads ``*.hands.msgpack`` (:mod:`dealer.records`) into the
same columns, with the seed of each run. Each record is checked as a line is
(and a cut or damaged end of the file is damage, not the end of the hands); a
damaged record raises :class:`HandsError` naming ``file: record N``, or is left
out and listed with ``skip_damaged=True``. :func:`read_hands` picks the reader
by file name.

Error lines quote what the file holds through :func:`poker.excerpt.quote`, cut
at a few hundred characters whatever the size of the damage.

Everything per hand is by **position** (relative to the button); ``names``
says who sat where. Card ids are ``rank * 4 + suit`` (:mod:`poker.cards`), ``-1``
for board cards the hand did not reach.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from itertools import chain, count, repeat
from typing import Any, BinaryIO, Final, cast

import msgpack
import numpy as np
import numpy.typing as npt

from dealer.records import HAND_FIELDS, MAX_RECORD_BYTES, UINT32_MAX, MatchHeader, record_unpacker
from poker.excerpt import quote
from poker.cards import NUM_RANKS, NUM_SUITS, RANK_CHARS, SUIT_CHARS, cards_to_text
from poker.hand_rank import hand_values
from poker.gamedef import Game, GameDefError, load_game
from poker.protocol import ProtocolError, format_value, parse_state_line

__all__ = [
    "HandsError",
    "LogHeader",
    "Hands",
    "read_log",
    "read_records",
    "read_hands",
    "hand_files",
    "is_records",
    "iter_log_blocks",
    "concat",
    "game_of_log",
    "read_components",
    "NO_SEED",
]

#: :attr:`Hands.seed` where the seed is not known.
NO_SEED: Final = -1
#: Lines per block of :func:`iter_log_blocks`.
BLOCK_LINES: Final = 200_000
#: The largest hand id (the dealer's hand ids are uint32).
MAX_HAND_ID: Final = UINT32_MAX
#: Values are printed with 6 decimals, so a hand's sum may be off by this much per position.
_SUM_TOLERANCE: Final = 1e-5

Int64Array = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class HandsError(ValueError):
    """A log or records file that cannot be read; the message names ``file:line``."""


@dataclass(frozen=True)
class LogHeader:
    """``# name/game/hands/seed <match> <game> <hands> <seed>`` of a ``.log``
    (or the match header of a records file)."""

    match_name: str
    game_path: str
    num_hands: int
    seed: int


# -- card and betting text ----------------------------------------------------------

_RANK_LUT = np.full(256, -1, dtype=np.int8)
_SUIT_LUT = np.full(256, -1, dtype=np.int8)
for _i, _c in enumerate(RANK_CHARS):
    _RANK_LUT[ord(_c)] = _RANK_LUT[ord(_c.lower())] = _i
for _i, _c in enumerate(SUIT_CHARS):
    _SUIT_LUT[ord(_c)] = _SUIT_LUT[ord(_c.upper())] = _i
#: Every rank and suit letter (either case) becomes "X": what is left is the layout.
_SHAPE = str.maketrans({c: "X" for c in RANK_CHARS + RANK_CHARS.lower() + SUIT_CHARS + SUIT_CHARS.upper()})
#: The betting alphabet is deleted: what is left must be the round separators.
_BETTING = str.maketrans("", "", "fcr0123456789")


@dataclass(frozen=True)
class _Layout:
    """Where the cards of a game's STATE line stand: for each round reached, the
    card text's shape (``XXXX|XXXX/XXXXXX`` …); card slots are the holes by
    position, then the board."""

    players: int
    hole_cards: int
    board_cards: int
    shapes: dict[str, int]  # shape -> round reached
    width: int  # characters of the last round's card text
    slot_pos: npt.NDArray[np.intp]  # character index of each card slot's rank
    shown: npt.NDArray[np.int64]  # per round, card slots shown (holes + board)

    @staticmethod
    def of(game: Game) -> _Layout:
        players, hole = game.num_players, game.num_hole_cards
        text = "|".join("X" * 2 * hole for _ in range(players)) + "X" * 2 * game.num_board_cards[0]
        shapes = {text: 0}
        for round_ in range(1, game.num_rounds):
            text += "/" + "X" * 2 * game.num_board_cards[round_]
            shapes[text] = round_
        positions = [i for i, c in enumerate(text) if c == "X"][::2]
        shown = [players * hole + game.total_board_cards(r) for r in range(game.num_rounds)]
        return _Layout(
            players,
            hole,
            sum(game.num_board_cards),
            shapes,
            len(text),
            np.array(positions, dtype=np.intp),
            np.array(shown, dtype=np.int64),
        )


# -- the columns --------------------------------------------------------------------


@dataclass(frozen=True)
class Hands:
    """Hands of one file (or several, :func:`concat`) as columns; ``n`` hands, ``P`` players.

    ``hand_id`` int64[n]; ``values`` float64[n, P] chips by position;
    ``name_index`` int32[n, P] index into ``names`` by position; ``hole``
    int8[n, P, holeCards]; ``board`` int8[n, boardCards] (``-1`` past the round
    reached); ``betting`` the ACPC betting strings; ``line`` int64[n] the line
    number in the log (the hand's number in a records file); ``seed`` int64[n]
    the run's seed (:data:`NO_SEED` when unknown). ``skipped`` lists the line
    numbers of damaged lines left out (``skip_damaged=True``; record numbers in
    a records file), and ``damaged_ends`` says in a line each where a records
    file's damaged end was left out, with all that followed it. ``components``
    maps the name of a portfolio agent to the component that played each hand
    (``""`` where it did not play or nothing was recorded), from the side files
    :func:`read_components` finds beside the log.
    """

    game: Game
    source: str
    hand_id: Int64Array
    values: FloatArray
    names: tuple[str, ...]
    name_index: npt.NDArray[np.int32]
    hole: npt.NDArray[np.int8]
    board: npt.NDArray[np.int8]
    betting: tuple[str, ...]
    line: Int64Array
    seed: Int64Array
    headers: tuple[LogHeader, ...] = ()
    score: tuple[tuple[float, ...], tuple[str, ...]] | None = None
    skipped: tuple[int, ...] = field(default=())
    damaged_ends: tuple[str, ...] = field(default=())
    components: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.hand_id.size)

    @property
    def players(self) -> int:
        return self.game.num_players

    @property
    def board_shown(self) -> Int64Array:
        """Board cards each hand reached."""
        shown: Int64Array = (self.board >= 0).sum(axis=1, dtype=np.int64)
        return shown

    def where(self, hand: int) -> str:
        """``file:line`` of hand row ``hand``."""
        return f"{self.source}:{int(self.line[hand])}"

    def name_values(self, name: str) -> FloatArray:
        """``name``'s chips in each hand, NaN where it did not play.

        Raises:
            HandsError: ``name`` holds two positions in some hand (repeated seat names).
        """
        if name not in self.names:
            return np.full(len(self), np.nan)
        held = self.name_index == self.names.index(name)
        count = held.sum(axis=1)
        if (count > 1).any():
            row = int(np.argmax(count > 1))
            raise HandsError(f"{self.where(row)}: {quote(name)} holds {int(count[row])} positions in hand {self.hand_id[row]}")
        chips: FloatArray = np.where(count == 1, np.where(held, self.values, 0.0).sum(axis=1), np.nan)
        return chips

    def names_at(self, hand: int) -> tuple[str, ...]:
        """Names by position in hand row ``hand``."""
        return tuple(self.names[int(k)] for k in self.name_index[hand])

    def cards_text(self, hand: int) -> str:
        """The card field of hand row ``hand``'s STATE line."""
        layout = _Layout.of(self.game)
        text = "|".join(cards_to_text(int(c) for c in cards) for cards in self.hole[hand])
        board = [int(c) for c in self.board[hand] if c >= 0]
        shown = len(board) + layout.players * layout.hole_cards
        round_ = int(np.searchsorted(layout.shown, shown))
        text += cards_to_text(board[: self.game.num_board_cards[0]])
        for r in range(1, round_ + 1):
            start = self.game.board_start(r)
            text += "/" + cards_to_text(board[start : start + self.game.num_board_cards[r]])
        return text

    def state_line(self, hand: int) -> str:
        """Hand row ``hand`` as a ``.log`` STATE line."""
        values = "|".join(format_value(float(v)) for v in self.values[hand])
        return (
            f"STATE:{self.hand_id[hand]}:{self.betting[hand]}:{self.cards_text(hand)}:"
            f"{values}:{'|'.join(self.names_at(hand))}"
        )

    def take(self, rows: npt.NDArray[np.bool_] | npt.NDArray[np.intp]) -> Hands:
        """The hands at ``rows`` (a mask or indices), in that order."""
        index = np.arange(len(self))[rows]
        return replace(
            self,
            hand_id=self.hand_id[index],
            values=self.values[index],
            name_index=self.name_index[index],
            hole=self.hole[index],
            board=self.board[index],
            betting=tuple(self.betting[i] for i in index),
            line=self.line[index],
            seed=self.seed[index],
            components={name: tuple(labels[i] for i in index) for name, labels in self.components.items()},
        )

    def with_components(self, components: dict[str, dict[int, str]]) -> Hands:
        """These hands with ``components`` (name -> hand id -> component) joined
        to the rows where that name played."""
        joined = dict(self.components)
        for name, by_hand in components.items():
            if name not in self.names:
                continue
            played = (self.name_index == self.names.index(name)).any(axis=1)
            joined[name] = tuple(
                by_hand.get(int(h), "") if p else "" for h, p in zip(self.hand_id.tolist(), played.tolist())
            )
        return replace(self, components=joined)


def concat(tables: Sequence[Hands]) -> Hands:
    """One table of several (same game); names are merged, sources joined by ``+``.

    Raises:
        HandsError: the tables are of different games.
    """
    if not tables:
        raise HandsError("no hands to join")
    first = tables[0]
    for table in tables[1:]:
        if table.game != first.game:
            raise HandsError(f"{table.source} is not a log of the same game as {first.source}")
    names: list[str] = []
    for table in tables:
        names += [name for name in table.names if name not in names]
    remapped = []
    for table in tables:
        mapping = np.array([names.index(name) for name in table.names] or [0], dtype=np.int32)
        remapped.append(mapping[table.name_index])
    return Hands(
        game=first.game,
        source="+".join(t.source for t in tables),
        hand_id=np.concatenate([t.hand_id for t in tables]),
        values=np.concatenate([t.values for t in tables]),
        names=tuple(names),
        name_index=np.concatenate(remapped),
        hole=np.concatenate([t.hole for t in tables]),
        board=np.concatenate([t.board for t in tables]),
        betting=tuple(b for t in tables for b in t.betting),
        line=np.concatenate([t.line for t in tables]),
        seed=np.concatenate([t.seed for t in tables]),
        headers=tuple(h for t in tables for h in t.headers),
        score=None,
        skipped=tuple(s for t in tables for s in t.skipped),
        damaged_ends=tuple(d for t in tables for d in t.damaged_ends),
        components={
            name: tuple(label for t in tables for label in t.components.get(name, ("",) * len(t)))
            for name in dict.fromkeys(name for t in tables for name in t.components)
        },
    )


# -- reading a .log -----------------------------------------------------------------


def _is_uint32(text: str) -> bool:
    """Whether ``text`` is a uint32 in decimal ASCII digits, as the dealer prints
    hand ids, hand counts and seeds (no sign; a thousand digits are not read)."""
    return text.isascii() and text.isdigit() and len(text) <= len(str(UINT32_MAX)) and int(text) <= UINT32_MAX


def _parse_header(line: str) -> LogHeader | str | None:
    """The ``# name/game/hands/seed`` header on ``line``; what is wrong with it
    when its hand count or seed is not a uint32 (as the dealer takes them); None
    when the line is not such a header (another comment)."""
    parts = line.split()
    if len(parts) != 6 or parts[1] != "name/game/hands/seed":
        return None
    numbers = parts[4:]
    if not all(map(_is_uint32, numbers)):
        return f"the header's hands {quote(numbers[0])} and seed {quote(numbers[1])} are not both numbers from 0 to {UINT32_MAX}"
    return LogHeader(parts[2], parts[3], int(numbers[0]), int(numbers[1]))


def game_of_log(path: Path) -> Game:
    """The game a log's header names: a short name, a path (as given, or from the
    log's folder), or a shipped game's file name.

    Raises:
        HandsError: no header, or a game that cannot be found (give the game instead).
    """
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            first = file.readline()
    except OSError as error:
        raise HandsError(f"{path}: {error.strerror or error}") from None
    header = _parse_header(first.rstrip("\n"))
    if header is None:
        raise HandsError(f"{path}:1: no '# name/game/hands/seed' header to take the game from; name the game")
    if isinstance(header, str):
        raise HandsError(f"{path}:1: {header}")
    for candidate in (header.game_path, str(path.parent / header.game_path), Path(header.game_path).name):
        try:
            return load_game(candidate)
        except GameDefError:
            continue
    raise HandsError(f"{path}:1: the header's game {quote(header.game_path)} is neither a known game nor a file; name the game")


@dataclass
class _Block:
    """Columns of one block of good STATE lines."""

    hand_id: Int64Array
    values: FloatArray
    name_combo: npt.NDArray[np.int32]
    cards: npt.NDArray[np.int8]
    betting: list[str]
    line: Int64Array
    seed: Int64Array


@dataclass
class _Columns:
    """The text fields of a block's STATE lines, the round each reaches and its names' row."""

    ids: list[str]
    betting: list[str]
    cards: list[str]
    values: list[str]
    names: list[str]
    rounds: list[int]
    combos: list[int]


class _Damage:
    """Where a reader is and what it left out: a damaged line or record raises one
    :class:`HandsError` naming the file and the place, or with ``skip_damaged``
    is left out and its number listed in :attr:`skipped`."""

    def __init__(self, path: Path, *, skip_damaged: bool) -> None:
        self.path = path
        self.skip_damaged = skip_damaged
        self.skipped: list[int] = []

    def place(self, number: int) -> str:
        """How an error line names line (or record) ``number`` of the file."""
        return f"{self.path}:{number}"

    def damaged(self, number: int, message: str) -> None:
        if not self.skip_damaged:
            raise HandsError(f"{self.place(number)}: {message}")
        self.skipped.append(number)


class _LogReader(_Damage):
    """The state carried from block to block: names seen, headers, the SCORE line."""

    def __init__(self, path: Path, game: Game, *, skip_damaged: bool, validate: bool) -> None:
        super().__init__(path, skip_damaged=skip_damaged)
        self.game = game
        self.layout = _Layout.of(game)
        self.validate = validate
        self.names: list[str] = []
        self.name_ids: dict[str, int] = {}
        self.combos: dict[str, int] = {}  # names field -> combo row
        self.combo_rows: list[list[int]] = []
        self.headers: list[LogHeader] = []
        self.seed = NO_SEED
        self.score: tuple[tuple[float, ...], tuple[str, ...]] | None = None

    def combo(self, text: str) -> int | None:
        """The row of a names field, or None when it does not name every position."""
        row = self.combos.get(text)
        if row is not None:
            return row
        names = text.split("|")
        if len(names) != self.layout.players or not all(names):
            return None
        ids = []
        for name in names:
            if name not in self.name_ids:
                self.name_ids[name] = len(self.names)
                self.names.append(name)
            ids.append(self.name_ids[name])
        self.combos[text] = len(self.combo_rows)
        self.combo_rows.append(ids)
        return self.combos[text]

    def other_line(self, line: str, number: int) -> None:
        if line.startswith("#"):
            header = _parse_header(line)
            if isinstance(header, str):
                self.damaged(number, header)
            elif header is not None:
                self.headers.append(header)
                self.seed = header.seed
        elif line.startswith("SCORE:"):
            try:
                _, values, names = line.split(":", 2)
                totals = tuple(float(v) for v in values.split("|"))
            except ValueError:
                self.damaged(number, f"unreadable SCORE line {quote(line)}")
            else:
                if all(map(math.isfinite, totals)):
                    self.score = (totals, tuple(names.split("|")))
                else:
                    self.damaged(number, f"a total is not a finite number: {quote(line)}")
        elif line.strip():
            self.damaged(number, f"not a header, STATE or SCORE line: {quote(line)}")

    def block(self, lines: list[str], first_number: int) -> _Block:
        """Columns of the STATE lines among ``lines`` (numbered from ``first_number``)."""
        is_state = list(map(str.startswith, lines, repeat("STATE:")))
        states: list[str] = lines
        numbers: list[int] = list(range(first_number, first_number + len(lines)))
        if not all(is_state):
            states, numbers = [], []
            for number, line, state in zip(count(first_number), lines, is_state):
                if state:
                    states.append(line)
                    numbers.append(number)
                else:
                    self.other_line(line.rstrip("\r"), number)
        columns = self._fast_columns(states)
        if columns is None:  # some line is damaged: find it (them) line by line
            good = self._structure([line.split(":") for line in states], numbers)
            states, numbers = [states[i] for i in good], [numbers[i] for i in good]
            columns = self._fast_columns(states)
            if columns is None:
                raise AssertionError("lines that passed the line-by-line checks failed the block checks")
        return self._columns(columns, numbers)

    def _fast_columns(self, states: list[str]) -> _Columns | None:
        """The fields of ``states`` as columns, or None if any line fails a check
        (then :meth:`_structure` says which and why). Each check runs over the
        whole block in C (``map`` of ``str`` methods, one ``split``)."""
        n, players, shapes = len(states), self.layout.players, self.layout.shapes
        if not n:
            return _Columns([], [], [], [], [], [], [])
        if list(map(str.count, states, repeat(":"))) != [5] * n:
            return None
        flat = ":".join(states).split(":")
        ids, betting, cards, values, names = flat[1::6], flat[2::6], flat[3::6], flat[4::6], flat[5::6]
        digits = "".join(ids)
        if not (digits.isascii() and digits.isdigit()) or min(map(len, ids)) < 1 or max(map(len, ids)) > len(str(MAX_HAND_ID)):
            return None
        rounds = list(map(shapes.get, map(str.translate, cards, repeat(_SHAPE))))
        left = list(map(str.translate, betting, repeat(_BETTING)))
        if list(map(len, left)) != rounds:
            return None
        separators = "".join(left)
        if separators.count("/") != len(separators):
            return None
        if list(map(str.count, values, repeat("|"))) != [players - 1] * n:
            return None
        combos = list(map(self.combos.get, names))
        if None in combos:
            for text in dict.fromkeys(text for text, combo in zip(names, combos) if combo is None):  # first seen first
                if self.combo(text) is None:
                    return None
            combos = list(map(self.combos.get, names))
        return _Columns(ids, betting, cards, values, names, cast(list[int], rounds), cast(list[int], combos))

    def _structure(self, states: list[list[str]], numbers: list[int]) -> list[int]:
        """Indices of the lines whose fields, names and card/betting layout are right."""
        shapes, players = self.layout.shapes, self.layout.players
        good: list[int] = []
        for i, fields in enumerate(states):
            problem = None
            if len(fields) != 6:
                problem = f"{len(fields)} ':'-separated fields, not 6 (STATE, hand, betting, cards, values, names)"
            else:
                _, hand, betting, cards, values, names = fields
                round_ = shapes.get(cards.translate(_SHAPE))
                if not _is_uint32(hand):
                    problem = _hand_id_problem(quote(hand))
                elif round_ is None:
                    problem = f"cards {quote(cards)} are not {players} hands and a board of {self.game_label()}"
                elif (left := betting.translate(_BETTING)) != "/" * round_:
                    if left.strip("/"):
                        problem = f"betting {quote(betting)} holds characters other than f, c, r, digits and /"
                    else:
                        problem = f"betting {quote(betting)} reaches round {len(left) + 1} but the cards show round {round_ + 1}"
                elif values.count("|") != players - 1:
                    problem = f"values {quote(values)} are not one per position ({players})"
                elif self.combo(names) is None:
                    problem = f"names {quote(names)} are not one per position ({players})"
            if problem is None:
                good.append(i)
            else:
                self.damaged(numbers[i], f"{problem}: {quote(':'.join(fields))}")
        return good

    def game_label(self) -> str:
        return f"a {self.layout.players}-player game with {self.layout.hole_cards} hole cards"

    def _columns(self, columns: _Columns, numbers: list[int]) -> _Block:
        layout, n = self.layout, len(numbers)
        ids, betting, cards, values, names = columns.ids, columns.betting, columns.cards, columns.values, columns.names
        hand_id = np.array(ids, dtype=np.int64).reshape(n)
        try:
            chips = np.array("|".join(values).split("|") if n else [], dtype=np.float64).reshape(n, layout.players)
        except ValueError:
            chips = np.array([[_float(v) for v in text.split("|")] for text in values], dtype=np.float64)
        combo = np.array(columns.combos, dtype=np.int32)
        raw = np.frombuffer("".join(map(str.ljust, cards, repeat(layout.width))).encode("ascii"), dtype=np.uint8)
        raw = raw.reshape(n, layout.width)
        ranks = _RANK_LUT[raw[:, layout.slot_pos]]
        suits = _SUIT_LUT[raw[:, layout.slot_pos + 1]]
        slots = layout.slot_pos.size
        shown = np.arange(slots)[None, :] < layout.shown[np.array(columns.rounds, dtype=np.intp)][:, None]
        card_ids = np.where(shown, ranks * 4 + suits, -1).astype(np.int8)
        bad_card = np.asarray((shown & ((ranks < 0) | (suits < 0))).any(axis=1))
        problems = _column_problems(hand_id, chips, card_ids, bad_card, players=layout.players)
        if problems:
            for row, problem in problems:
                line = ":".join(["STATE", ids[row], betting[row], cards[row], values[row], names[row]])
                self.damaged(numbers[row], f"{problem}: {quote(line)}")
            keep = np.ones(n, dtype=bool)
            keep[[row for row, _ in problems]] = False
            hand_id, chips, combo, card_ids = hand_id[keep], chips[keep], combo[keep], card_ids[keep]
            betting = [b for b, k in zip(betting, keep) if k]
            numbers = [m for m, k in zip(numbers, keep) if k]
        block = _Block(
            hand_id, chips, combo, card_ids, betting, np.array(numbers, dtype=np.int64), np.full(len(numbers), self.seed)
        )
        if self.validate:
            self._validate(block)
        return block

    def _validate(self, block: _Block) -> None:
        """Replay every hand with the rules: legal betting, values of the betting and cards."""
        game = self.game
        bad: list[int] = []
        for row in range(block.hand_id.size):
            line = _state_text(self.layout, game, block, row)
            try:
                parsed = parse_state_line(line, game)
            except ProtocolError as error:
                problem = str(error)
            else:
                state, deal = parsed.state, parsed.deal
                if not state.finished:
                    problem = f"the betting {quote(block.betting[row])} does not finish the hand"
                else:
                    expected = hand_values(state, deal.hole, deal.board)
                    wrong = [p for p, v in enumerate(expected) if not math.isclose(float(v), block.values[row, p], abs_tol=1e-6)]
                    if not wrong:
                        continue
                    shown = "|".join(format_value(v) for v in expected)
                    problem = f"values are not those of the betting and cards ({shown})"
            self.damaged(int(block.line[row]), f"{problem}: {quote(line)}")
            bad.append(row)
        if bad:
            keep = np.ones(block.hand_id.size, dtype=bool)
            keep[bad] = False
            block.hand_id, block.values, block.name_combo = block.hand_id[keep], block.values[keep], block.name_combo[keep]
            block.cards, block.line, block.seed = block.cards[keep], block.line[keep], block.seed[keep]
            block.betting = [b for b, k in zip(block.betting, keep) if k]


def _hand_id_problem(shown: str) -> str:
    """What is wrong with a hand id (``shown`` as the file has it) that is not a uint32."""
    return f"hand id {shown} is not a number from 0 to {MAX_HAND_ID}"


def _column_problems(
    hand_id: Int64Array,
    chips: FloatArray,
    card_ids: npt.NDArray[np.int8],
    bad_card: npt.NDArray[np.bool_],
    *,
    players: int,
) -> list[tuple[int, str]]:
    """(row, problem) for the hands whose id, values or cards fail the checks
    both readers share, each run over the whole block at once: hand ids past
    :data:`MAX_HAND_ID`, values that are not finite (NaN, ``inf``: every mean
    and interval after them would be NaN or infinite) or do not sum to zero,
    cards that are not cards (``bad_card``), a card dealt twice. ``card_ids``
    holds ``-1`` for cards not shown."""
    problems: dict[int, str] = {}
    for row in np.flatnonzero(hand_id > MAX_HAND_ID):
        problems[int(row)] = _hand_id_problem(quote(str(hand_id[row])))  # as the log has it
    for row in np.flatnonzero(np.isnan(chips).any(axis=1)):
        problems.setdefault(int(row), "a value is not a number")
    infinite = np.isinf(chips).any(axis=1)
    for row in np.flatnonzero(infinite):
        problems.setdefault(int(row), "a value is not a finite number")
    finite = np.where(np.isfinite(chips), chips, 0.0)
    unbalanced = ~(np.abs(finite.sum(axis=1)) <= _SUM_TOLERANCE * players)
    for row in np.flatnonzero(unbalanced):
        problems.setdefault(int(row), f"values sum to {finite[row].sum():g}, not 0")
    for row in np.flatnonzero(bad_card):
        problems.setdefault(int(row), "a card is not a rank then a suit")
    ordered = np.sort(np.where(card_ids < 0, -np.arange(1, card_ids.shape[1] + 1), card_ids), axis=1)
    repeated = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1) & ~bad_card
    for row in np.flatnonzero(repeated):
        problems.setdefault(int(row), "a card is dealt twice")
    return sorted(problems.items())


def _state_text(layout: _Layout, game: Game, block: _Block, row: int) -> str:
    """A STATE line rebuilt from a block's columns (names left out: the rules do not need them)."""
    cards = block.cards[row]
    hole_end = layout.players * layout.hole_cards
    holes = "|".join(
        cards_to_text(int(c) for c in cards[p * layout.hole_cards : (p + 1) * layout.hole_cards])
        for p in range(layout.players)
    )
    board = [int(c) for c in cards[hole_end:] if c >= 0]
    text = holes + cards_to_text(board[: game.num_board_cards[0]])
    for r in range(1, block.betting[row].count("/") + 1):
        start = game.board_start(r)
        text += "/" + cards_to_text(board[start : start + game.num_board_cards[r]])
    values = "|".join(format_value(float(v)) for v in block.values[row])
    names = "|".join(f"p{p}" for p in range(layout.players))
    return f"STATE:{block.hand_id[row]}:{block.betting[row]}:{text}:{values}:{names}"


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def iter_log_blocks(
    path: Path, game: Game, *, skip_damaged: bool = False, validate: bool = False, block_lines: int = BLOCK_LINES
) -> Iterator[Hands]:
    """The hands of a ``.log`` a block of lines at a time (each block's ``names``
    are those seen so far, so a later block's table holds every earlier name).

    Raises:
        HandsError: a damaged line (unless ``skip_damaged``), or an unreadable file.
    """
    reader = _LogReader(path, game, skip_damaged=skip_damaged, validate=validate)
    layout = reader.layout
    try:
        file = open(path, encoding="utf-8", errors="surrogateescape", newline="")
    except OSError as error:
        raise HandsError(f"{path}: {error.strerror or error}") from None
    with file:
        number, rest = 1, ""
        pending: list[str] = []
        while True:
            chunk = file.read(1 << 22)
            if chunk:
                lines = (rest + chunk).split("\n")
                rest = lines.pop()
                pending += lines
            elif rest:
                pending.append(rest)
            while len(pending) >= block_lines or (pending and not chunk):
                part, pending = pending[:block_lines], pending[block_lines:]
                block = reader.block(part, number)
                number += len(part)
                yield _table(reader, block, layout)
            if not chunk:
                break


def _table(reader: _LogReader, block: _Block, layout: _Layout) -> Hands:
    n = block.hand_id.size
    combos = np.array(reader.combo_rows or [[0] * layout.players], dtype=np.int32)
    hole_end = layout.players * layout.hole_cards
    return Hands(
        game=reader.game,
        source=str(reader.path),
        hand_id=block.hand_id,
        values=block.values,
        names=tuple(reader.names),
        name_index=combos[block.name_combo].reshape(n, layout.players),
        hole=block.cards[:, :hole_end].reshape(n, layout.players, layout.hole_cards),
        board=block.cards[:, hole_end:].reshape(n, layout.board_cards),
        betting=tuple(block.betting),
        line=block.line,
        seed=block.seed,
        headers=tuple(reader.headers),
        score=reader.score,
        skipped=tuple(reader.skipped),
    )


def read_log(path: Path, game: Game | None = None, *, skip_damaged: bool = False, validate: bool = False) -> Hands:
    """Every hand of a ``.log`` (ours or the reference dealer's). ``game`` defaults
    to the one its header names (:func:`game_of_log`).

    Raises:
        HandsError: a damaged line (``file:line: what``; unless ``skip_damaged``),
            an unreadable file, or a game that cannot be found.
    """
    path = Path(path)
    if game is None:
        game = game_of_log(path)
    blocks = list(iter_log_blocks(path, game, skip_damaged=skip_damaged, validate=validate))
    if not blocks:
        return _empty(game, str(path))
    last = blocks[-1]
    if len(blocks) == 1:
        return last
    names = last.names  # a superset of every earlier block's, in the same order
    return replace(
        last,
        hand_id=np.concatenate([b.hand_id for b in blocks]),
        values=np.concatenate([b.values for b in blocks]),
        names=names,
        name_index=np.concatenate([b.name_index for b in blocks]),
        hole=np.concatenate([b.hole for b in blocks]),
        board=np.concatenate([b.board for b in blocks]),
        betting=tuple(s for b in blocks for s in b.betting),
        line=np.concatenate([b.line for b in blocks]),
        seed=np.concatenate([b.seed for b in blocks]),
    )


def _empty(game: Game, source: str) -> Hands:
    players = game.num_players
    return Hands(
        game=game,
        source=source,
        hand_id=np.zeros(0, dtype=np.int64),
        values=np.zeros((0, players)),
        names=(),
        name_index=np.zeros((0, players), dtype=np.int32),
        hole=np.zeros((0, players, game.num_hole_cards), dtype=np.int8),
        board=np.zeros((0, sum(game.num_board_cards)), dtype=np.int8),
        betting=(),
        line=np.zeros(0, dtype=np.int64),
        seed=np.zeros(0, dtype=np.int64),
    )


# -- reading msgpack records --------------------------------------------------------


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


class _RecordsReader(_Damage):
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
            and not "".join(betting).translate(_BETTING).strip("/")
            and set(map(type, shown)) == {int}
            and list(map(totals.__getitem__, rounds)) == list(shown)
            and set(map(type, values)) == {list}
            and set(map(len, values)) == {game.num_players}
            and set(map(type, chain.from_iterable(values))) <= _NUMBERS
        )

    def hand_problem(self, item: Any) -> str | None:
        """What is wrong with the fields of a hand record (:data:`dealer.records.HAND_FIELDS`),
        None when each has its type and size; cards and values are checked for
        every hand at once afterwards (:func:`_column_problems`)."""
        game = self.headers[0].game
        players, holes, boards = game.num_players, game.num_players * game.num_hole_cards, sum(game.num_board_cards)
        if type(item) is not list or len(item) != len(HAND_FIELDS):
            return f"not a hand record ({len(HAND_FIELDS)} fields)"
        hand_id, seats, hole, board, shown, betting, values = item
        if type(hand_id) is not int or not 0 <= hand_id <= MAX_HAND_ID:
            return _hand_id_problem(quote(hand_id))
        if type(seats) is not list or not self.seats_fit(tuple(seats)):
            return f"seats {quote(seats)} are not the seats 0 to {players - 1}, one per position"
        if type(hole) is not bytes or len(hole) != holes:
            return f"hole cards {quote(hole)} are not {holes} card bytes"
        if type(board) is not bytes or len(board) != boards:
            return f"board {quote(board)} is not {boards} card bytes"
        if type(betting) is not str or betting.translate(_BETTING).strip("/"):
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
        (:func:`_column_problems`), then the damaged end."""
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
        layout = _Layout.of(game)
        n = len(rows)
        cards = np.frombuffer(b"".join(r[2] + r[3] for r in rows), dtype=np.uint8).reshape(n, layout.slot_pos.size)
        board_shown = np.array([r[4] for r in rows], dtype=np.int64).reshape(n, 1)
        shown = np.arange(layout.slot_pos.size)[None, :] < layout.players * layout.hole_cards + board_shown
        card_ids = np.where(shown & (cards < _DECK_CARDS), cards, -1).astype(np.int8)
        hand_id = np.array([r[0] for r in rows], dtype=np.int64).reshape(n)
        values = np.array([r[6] for r in rows], dtype=np.float64).reshape(n, layout.players)
        bad_card = np.asarray((shown & (cards >= _DECK_CARDS)).any(axis=1))
        good = np.ones(n, dtype=bool)
        for row, problem in _column_problems(hand_id, values, card_ids, bad_card, players=layout.players):
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

    Every record is checked as :func:`read_log` checks a line: a header against
    its schema, each hand's fields for type and size, hand ids as uint32 and
    seats one per position, then every hand's cards and values at once (cards
    of the deck, none twice, values finite and summing to zero). A damaged end
    of the file (cut short, or an object that does not unpack) is damage too,
    never the silent end of the hands; nothing a damaged length declares is
    allocated (:data:`MAX_RECORD_BYTES`, :data:`MAX_RECORD_ENTRIES`).

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


def read_hands(
    path: Path, game: Game | None = None, *, skip_damaged: bool = False, validate: bool = False
) -> Hands:
    """:func:`read_records` for ``*.msgpack``, :func:`analysis.phh.read_phh` for
    ``.phh``/``.phhs`` (hands from other sources: PokerKit's datasets, say; every
    hand replayed), :func:`read_log` otherwise (``validate`` replays the hands of
    logs only)."""
    from analysis.phh import is_phh, read_phh  # here: analysis.phh builds on this module

    path = Path(path)
    if is_phh(path):
        hands = read_phh(path, game, skip_damaged=skip_damaged)
    elif is_records(path):
        hands = read_records(path, skip_damaged=skip_damaged)
        if game is not None and hands.game != game:
            raise HandsError(f"{path}: records of another game than the one named")
    else:
        hands = read_log(path, game, skip_damaged=skip_damaged, validate=validate)
    components = read_components(path)
    return hands.with_components(components) if components else hands


#: What :func:`hand_files` takes from a folder, in this order of preference.
HAND_FILE_PATTERNS: Final = ("*.log", "*.hands.msgpack", "*.phhs", "*.phh")


def hand_files(arguments: Sequence[Path]) -> list[Path]:
    """The files of hands named on a command line: files as given, and for a
    folder (a run folder, say) its ``.log`` files, else its records, else its
    PHH files.

    Raises:
        HandsError: a folder with none of them.
    """
    paths: list[Path] = []
    for path in arguments:
        if path.is_dir():
            found = next((files for pattern in HAND_FILE_PATTERNS if (files := sorted(path.glob(pattern)))), [])
            if not found:
                raise HandsError(f"{path}: no .log, .hands.msgpack, .phhs or .phh files in this folder")
            paths += found
        else:
            paths.append(path)
    return paths


#: Side files of a seating: ``<match>.<name>.components.csv`` (``arena.match.components_path``).
COMPONENTS_SUFFIX: Final = ".components.csv"


def read_components(path: Path) -> dict[str, dict[int, str]]:
    """Which component each portfolio agent played each hand with, from the
    side files beside a seating's log or records (``match.1.log`` and
    ``match.1.hands.msgpack`` both have ``match.1.<name>.components.csv``, one
    ``hand_id,component`` line per hand, written by the agent: the dealer's
    records cannot carry it, the ACPC protocol has no channel for it). A hand
    listed twice (a resumed seating replays its unfinished hand) keeps its last
    line. ``{}`` when there are none.

    Raises:
        HandsError: a side file that is not ``hand_id,component`` lines (naming ``file:line``).
    """
    path = Path(path)
    stem = path.name.removesuffix(".hands.msgpack").removesuffix(".log")
    found: dict[str, dict[int, str]] = {}
    for side in sorted(path.parent.glob(f"{stem}.*{COMPONENTS_SUFFIX}")):
        name = side.name[len(stem) + 1 : -len(COMPONENTS_SUFFIX)]
        by_hand: dict[int, str] = {}
        try:
            text = side.read_text(encoding="utf-8")
        except OSError as error:
            raise HandsError(f"{side}: {error.strerror or error}") from None
        for number, line in enumerate(text.splitlines(), start=1):
            hand, comma, label = line.partition(",")
            if not comma or not (hand.isascii() and hand.isdigit()) or not label:
                raise HandsError(f"{side}:{number}: not a 'hand_id,component' line: {quote(line)}")
            if not _is_uint32(hand):
                raise HandsError(f"{side}:{number}: {_hand_id_problem(quote(hand))}")
            by_hand[int(hand)] = label
        found[name] = by_hand
    return found
