"""Machine-readable match output written alongside the ACPC files.

* ``<match>.hands.msgpack``: a stream of msgpack objects. A map opens each run
  of the dealer (the match header: game text, seed, names in seat order, …);
  every finished hand follows as a compact array, in the order of
  :data:`HAND_FIELDS`::

      [hand_id, seats, hole, board, board_shown, betting, values]

  ``seats[p]`` is the seat of position p; ``hole`` is ``bytes`` of card ids,
  ``num_hole_cards`` per position in position order; ``board`` holds every
  board card dealt and ``board_shown`` how many of them the hand reached;
  ``betting`` is the ACPC betting string; ``values`` are chips per position.
  Arrays instead of maps keep the files small and :func:`load_hands` fast.
* ``<match>.events.jsonl``: structlog JSON lines (start, connections, warnings,
  errors, the result), one object per event.

Appending (``-a``) adds a new header and continues the hand stream.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgpack
import numpy as np
import structlog

from poker.deal import Deal
from poker.excerpt import quote
from poker.gamedef import Game, format_game, parse_game
from poker.state import State

__all__ = [
    "FORMAT_VERSION",
    "UINT32_MAX",
    "HAND_FIELDS",
    "MatchHeader",
    "HandRecord",
    "HandTable",
    "RecordWriter",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_ENTRIES",
    "record_unpacker",
    "read_records",
    "load_hands",
    "open_event_log",
]

FORMAT_VERSION = 1
#: The dealer's hand count, seed and hand ids are uint32, as in the reference dealer.
UINT32_MAX = 2**32 - 1
HAND_FIELDS = ("hand_id", "seats", "hole", "board", "board_shown", "betting", "values")
#: The largest msgpack object of a records file: a header (the game's text, the
#: names) or a hand record takes a few KiB. A reader buffers no more than this,
#: so a damaged length (a string declared 4 GiB long) costs at most this much memory.
MAX_RECORD_BYTES = 1 << 20
#: The most entries an array or map of a record may declare (a hand has 7 fields,
#: a position list one per player, a header 10 keys); more is damage, not allocated.
MAX_RECORD_ENTRIES = 1024


@dataclass(frozen=True)
class MatchHeader:
    """What a run of the dealer was asked to play; ``names`` are in seat order."""

    match_name: str
    game: Game
    game_path: str
    num_hands: int
    seed: int
    names: tuple[str, ...]
    fixed_seats: bool

    def to_msgpack(self) -> dict[str, Any]:
        return {
            "kind": "match",
            "format": FORMAT_VERSION,
            "hand_fields": list(HAND_FIELDS),
            "match_name": self.match_name,
            "game": format_game(self.game),
            "game_path": self.game_path,
            "num_hands": self.num_hands,
            "seed": self.seed,
            "names": list(self.names),
            "fixed_seats": self.fixed_seats,
        }

    @staticmethod
    def from_msgpack(data: dict[str, Any]) -> MatchHeader:
        """The header a records file holds, checked against :data:`_HEADER_SCHEMA`
        before anything is built from it (a damaged file can put any value under
        any key).

        Raises:
            ValueError: a missing key, a value of the wrong type or out of range
                (naming the key), a game text that does not parse, or names
                that are not one per player.
        """
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"hand records format {quote(data.get('format'))} is not {FORMAT_VERSION}")
        for key, kind in _HEADER_SCHEMA.items():
            if key not in data:
                raise ValueError(f"no {key!r}")
            value = data[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise ValueError(f"{key!r} is {quote(value)}, not {_KIND_NAMES[kind]}")
        if not all(0 <= data[key] <= UINT32_MAX for key in ("num_hands", "seed")):
            raise ValueError(f"num_hands {data['num_hands']} or seed {data['seed']} is not a uint32")
        names = data["names"]
        if not all(isinstance(name, str) for name in names):
            raise ValueError(f"'names' {quote(names)} are not all text")
        game = parse_game(data["game"], source=f"records of {quote(data['match_name'])}")
        if len(names) != game.num_players:
            raise ValueError(f"'names' {quote(names)} are not one per player of the game ({game.num_players})")
        return MatchHeader(
            match_name=data["match_name"],
            game=game,
            game_path=data["game_path"],
            num_hands=data["num_hands"],
            seed=data["seed"],
            names=tuple(names),
            fixed_seats=data["fixed_seats"],
        )


#: The keys of a match header a reader needs, with the type of each value.
_HEADER_SCHEMA: dict[str, type] = {
    "match_name": str,
    "game": str,
    "game_path": str,
    "num_hands": int,
    "seed": int,
    "names": list,
    "fixed_seats": bool,
}
_KIND_NAMES = {str: "text", int: "a whole number", list: "a list", bool: "true or false"}


@dataclass(frozen=True)
class HandRecord:
    """One finished hand; per-position fields are in position order."""

    hand_id: int
    seats: tuple[int, ...]
    hole: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]
    board_shown: int
    betting: str
    values: tuple[float, ...]

    @staticmethod
    def of(hand_id: int, seats: tuple[int, ...], state: State, deal: Deal, values: tuple[float, ...]) -> HandRecord:
        shown = state.game.total_board_cards(state.round)
        return HandRecord(hand_id, seats, deal.hole, deal.board, shown, state.betting_string(), values)

    def to_msgpack(self) -> list[Any]:
        hole = bytes(card for cards in self.hole for card in cards)
        return [self.hand_id, list(self.seats), hole, bytes(self.board), self.board_shown, self.betting, list(self.values)]

    @staticmethod
    def from_msgpack(data: list[Any], num_hole_cards: int) -> HandRecord:
        hand_id, seats, hole, board, shown, betting, values = data
        per = tuple(tuple(hole[i : i + num_hole_cards]) for i in range(0, len(hole), num_hole_cards))
        return HandRecord(hand_id, tuple(seats), per, tuple(board), shown, betting, tuple(values))


class RecordWriter:
    """Appends msgpack records to ``path``; each is flushed as it is written."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self._file: IO[bytes] = open(path, "ab" if append else "wb")
        self._packer = msgpack.Packer(use_bin_type=True)

    def write(self, record: MatchHeader | HandRecord) -> None:
        self._file.write(self._packer.pack(record.to_msgpack()))
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def record_unpacker(file: IO[bytes]) -> Any:
    """The objects of a records file opened for reading, never more than
    :data:`MAX_RECORD_BYTES` and :data:`MAX_RECORD_ENTRIES` at a time whatever
    a damaged length declares (``msgpack.Unpacker``; its :meth:`tell` is where
    the next object starts, short of the file's size when the file ends inside
    one: read it after each object, not at the end)."""
    return msgpack.Unpacker(
        file, raw=False, max_buffer_size=MAX_RECORD_BYTES, max_array_len=MAX_RECORD_ENTRIES, max_map_len=MAX_RECORD_ENTRIES
    )


def read_records(path: Path) -> Iterator[MatchHeader | HandRecord]:
    """Every header and hand of a records file, in order (unchecked beyond the
    header: :func:`analysis.records.read_records` checks every hand).

    Raises:
        ValueError: a bad header, a hand before any header, or a file that ends
            inside a record.
    """
    num_hole_cards = 0
    with open(path, "rb") as file:
        unpacker = record_unpacker(file)
        end = 0  # where the last whole object ends
        for item in unpacker:
            end = unpacker.tell()
            if isinstance(item, dict):
                header = MatchHeader.from_msgpack(item)
                num_hole_cards = header.game.num_hole_cards
                yield header
            elif num_hole_cards == 0:
                raise ValueError(f"{path}: a hand record comes before any match header")
            else:
                yield HandRecord.from_msgpack(item, num_hole_cards)
        if end < os.fstat(file.fileno()).st_size:
            raise ValueError(f"{path}: the file ends inside a record (from byte {end})")


@dataclass(frozen=True)
class HandTable:
    """All hands of a records file as arrays (``n`` hands, ``N`` players):
    ``hand_id`` int64[n], ``seats`` int8[n, N], ``hole`` uint8[n, N, holeCards],
    ``board`` uint8[n, boardCards], ``board_shown`` int8[n], ``values``
    float64[n, N] by position, ``seat_values`` float64[n, N] by seat, and the
    betting strings. ``header`` is the first run's header."""

    header: MatchHeader
    hand_id: np.ndarray
    seats: np.ndarray
    hole: np.ndarray
    board: np.ndarray
    board_shown: np.ndarray
    values: np.ndarray
    seat_values: np.ndarray
    betting: tuple[str, ...]


def load_hands(path: Path) -> HandTable:
    """Read a records file into numpy arrays."""
    header: MatchHeader | None = None
    hands: list[HandRecord] = []
    for record in read_records(path):
        if isinstance(record, MatchHeader):
            header = header or record
        else:
            hands.append(record)
    if header is None:
        raise ValueError(f"{path}: no match header")
    game = header.game
    n, players = len(hands), game.num_players
    seats = np.array([h.seats for h in hands], dtype=np.int8).reshape(n, players)
    values = np.array([h.values for h in hands], dtype=np.float64).reshape(n, players)
    seat_values = np.zeros_like(values)
    np.put_along_axis(seat_values, seats.astype(np.int64), values, axis=1)
    return HandTable(
        header=header,
        hand_id=np.array([h.hand_id for h in hands], dtype=np.int64),
        seats=seats,
        hole=np.array([h.hole for h in hands], dtype=np.uint8).reshape(n, players, game.num_hole_cards),
        board=np.array([h.board for h in hands], dtype=np.uint8).reshape(n, sum(game.num_board_cards)),
        board_shown=np.array([h.board_shown for h in hands], dtype=np.int8),
        values=values,
        seat_values=seat_values,
        betting=tuple(h.betting for h in hands),
    )


def open_event_log(path: Path, *, append: bool, match_name: str) -> tuple[Any, IO[str]]:
    """A structlog logger writing JSON lines to ``path``, bound to the match name,
    and the file to close afterwards. Configured per logger, not globally, so
    concurrent matches keep separate files."""
    file = open(path, "a" if append else "w", encoding="utf-8", errors="surrogateescape")
    logger = structlog.wrap_logger(
        structlog.WriteLogger(file),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ],
        context_class=dict,
    )
    return logger.bind(match=match_name), file
