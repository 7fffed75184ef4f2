"""A table of hands: the hands of one file (or several) as numpy columns.

:class:`Hands` is what every reader of hands returns and every estimator takes:
:func:`analysis.logs.read_log` (ACPC ``.log`` files), :func:`analysis.records.read_records`
(msgpack hand records), :func:`analysis.phh.read_phh` (PHH files), and
:func:`analysis.hand_files.read_hands`, which picks among them by file name. The
table itself reads no file, so the readers, the writers (PHH, PokerStars text)
and the estimators all stand on this module and none of them on another.

Everything per hand is by **position** (relative to the button); ``names``
says who sat where. Card ids are ``rank * 4 + suit`` (:mod:`poker.cards`), ``-1``
for board cards the hand did not reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from poker.cards import cards_to_text
from poker.excerpt import quote
from poker.gamedef import Game
from poker.protocol import format_value

__all__ = ["HandsError", "LogHeader", "Hands", "concat", "NO_SEED"]

#: :attr:`Hands.seed` where the seed is not known.
NO_SEED: Final = -1

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
    :func:`analysis.hand_files.read_components` finds beside the log.
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
        text = "|".join(cards_to_text(int(c) for c in cards) for cards in self.hole[hand])
        board = [int(c) for c in self.board[hand] if c >= 0]
        round_ = sum(1 for r in range(self.game.num_rounds) if self.game.total_board_cards(r) < len(board))
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
