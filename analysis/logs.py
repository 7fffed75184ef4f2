"""Hands from ACPC ``.log`` files (ours or the reference dealer's) as a :class:`analysis.hands.Hands` table.

A ``.log`` (docs/protocol.md, The dealer's rules: Output) holds one line per hand::

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

A damaged line raises :class:`analysis.hands.HandsError` naming ``file:line`` and what is
wrong; ``skip_damaged=True`` leaves such lines out and lists their numbers in
:attr:`analysis.hands.Hands.skipped`.

Error lines quote what the file holds through :func:`poker.excerpt.quote`, cut
at a few hundred characters whatever the size of the damage.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import count, repeat
from pathlib import Path
from typing import Final, cast

import numpy as np
import numpy.typing as npt

from analysis._hand_checks import MAX_HAND_ID, STRIP_BETTING, CardLayout, Damage, column_problems, hand_id_problem, is_uint32
from analysis.hands import NO_SEED, FloatArray, Hands, HandsError, Int64Array, LogHeader
from dealer.records import UINT32_MAX
from poker.cards import RANK_CHARS, SUIT_CHARS, cards_to_text
from poker.excerpt import quote
from poker.gamedef import Game, GameDefError, load_game
from poker.hand_rank import hand_values
from poker.protocol import ProtocolError, format_value, parse_state_line

__all__ = ["read_log", "iter_log_blocks", "game_of_log", "BLOCK_LINES"]

#: Lines per block of :func:`iter_log_blocks`.
BLOCK_LINES: Final = 200_000

# -- card and betting text ----------------------------------------------------------

_RANK_LUT = np.full(256, -1, dtype=np.int8)
_SUIT_LUT = np.full(256, -1, dtype=np.int8)
for _i, _c in enumerate(RANK_CHARS):
    _RANK_LUT[ord(_c)] = _RANK_LUT[ord(_c.lower())] = _i
for _i, _c in enumerate(SUIT_CHARS):
    _SUIT_LUT[ord(_c)] = _SUIT_LUT[ord(_c.upper())] = _i
#: Every rank and suit letter (either case) becomes "X": what is left is the layout.
_SHAPE = str.maketrans({c: "X" for c in RANK_CHARS + RANK_CHARS.lower() + SUIT_CHARS + SUIT_CHARS.upper()})


def _parse_header(line: str) -> LogHeader | str | None:
    """The ``# name/game/hands/seed`` header on ``line``; what is wrong with it
    when its hand count or seed is not a uint32 (as the dealer takes them); None
    when the line is not such a header (another comment)."""
    parts = line.split()
    if len(parts) != 6 or parts[1] != "name/game/hands/seed":
        return None
    numbers = parts[4:]
    if not all(map(is_uint32, numbers)):
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


class _LogReader(Damage):
    """The state carried from block to block: names seen, headers, the SCORE line."""

    def __init__(self, path: Path, game: Game, *, skip_damaged: bool, validate: bool) -> None:
        super().__init__(path, skip_damaged=skip_damaged)
        self.game = game
        self.layout = CardLayout.of(game)
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
        left = list(map(str.translate, betting, repeat(STRIP_BETTING)))
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
                if not is_uint32(hand):
                    problem = hand_id_problem(quote(hand))
                elif round_ is None:
                    problem = f"cards {quote(cards)} are not {players} hands and a board of {self.game_label()}"
                elif (left := betting.translate(STRIP_BETTING)) != "/" * round_:
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
        problems = column_problems(hand_id, chips, card_ids, bad_card, players=layout.players)
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


def _state_text(layout: CardLayout, game: Game, block: _Block, row: int) -> str:
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


def _table(reader: _LogReader, block: _Block, layout: CardLayout) -> Hands:
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


