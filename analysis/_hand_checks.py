"""What every reader of hands checks, whatever the file: the card text's layout of
a game, hand ids as the dealer's uint32, finite values that sum to zero, cards of
the deck dealt once, and the bookkeeping of damage (raise, or leave out and list).

:mod:`analysis.logs`, :mod:`analysis.records` and :mod:`analysis.hand_files`
share these so that a hand is refused for the same reasons, in the same words,
whichever file it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from analysis.hands import FloatArray, HandsError, Int64Array
from dealer.records import UINT32_MAX
from poker.excerpt import quote
from poker.gamedef import Game

__all__ = ["MAX_HAND_ID", "STRIP_BETTING", "CardLayout", "Damage", "is_uint32", "hand_id_problem", "column_problems"]

#: The largest hand id (the dealer's hand ids are uint32).
MAX_HAND_ID: Final = UINT32_MAX
#: Values are printed with 6 decimals, so a hand's sum may be off by this much per position.
_SUM_TOLERANCE: Final = 1e-5
#: The betting alphabet is deleted: what is left must be the round separators.
STRIP_BETTING: Final = str.maketrans("", "", "fcr0123456789")


@dataclass(frozen=True)
class CardLayout:
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
    def of(game: Game) -> CardLayout:
        players, hole = game.num_players, game.num_hole_cards
        text = "|".join("X" * 2 * hole for _ in range(players)) + "X" * 2 * game.num_board_cards[0]
        shapes = {text: 0}
        for round_ in range(1, game.num_rounds):
            text += "/" + "X" * 2 * game.num_board_cards[round_]
            shapes[text] = round_
        positions = [i for i, c in enumerate(text) if c == "X"][::2]
        shown = [players * hole + game.total_board_cards(r) for r in range(game.num_rounds)]
        return CardLayout(
            players,
            hole,
            sum(game.num_board_cards),
            shapes,
            len(text),
            np.array(positions, dtype=np.intp),
            np.array(shown, dtype=np.int64),
        )


class Damage:
    """Where a reader is and what it left out: a damaged line or record raises one
    :class:`analysis.hands.HandsError` naming the file and the place, or with ``skip_damaged``
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


def is_uint32(text: str) -> bool:
    """Whether ``text`` is a uint32 in decimal ASCII digits, as the dealer prints
    hand ids, hand counts and seeds (no sign; a thousand digits are not read)."""
    return text.isascii() and text.isdigit() and len(text) <= len(str(UINT32_MAX)) and int(text) <= UINT32_MAX


def hand_id_problem(shown: str) -> str:
    """What is wrong with a hand id (``shown`` as the file has it) that is not a uint32."""
    return f"hand id {shown} is not a number from 0 to {MAX_HAND_ID}"


def column_problems(
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
        problems[int(row)] = hand_id_problem(quote(str(hand_id[row])))  # as the log has it
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
