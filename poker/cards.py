"""Cards as the ACPC reference numbers them: ``card = rank * 4 + suit``.

Rank 0 is "2" and rank 12 is "A"; suit 0..3 is c, d, h, s (the reference's numbering). Text is
two characters per card, rank then suit ("Ah", "Tc"); reading is case-insensitive
like the reference's ``readCard``, writing is canonical (upper rank, lower suit).

>>> card_from_text("Ah"), card_to_text(50)
(50, 'Ah')
>>> cards_from_text("3c4d")
(4, 9)
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "RANK_CHARS",
    "SUIT_CHARS",
    "NUM_RANKS",
    "NUM_SUITS",
    "make_card",
    "rank_of",
    "suit_of",
    "card_to_text",
    "card_from_text",
    "cards_to_text",
    "cards_from_text",
]

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
NUM_RANKS = 13
NUM_SUITS = 4


def make_card(rank: int, suit: int) -> int:
    """The card id of a rank index (0 = "2") and suit index (0 = clubs)."""
    if not 0 <= rank < NUM_RANKS:
        raise ValueError(f"rank index {rank!r} is outside 0..12")
    if not 0 <= suit < NUM_SUITS:
        raise ValueError(f"suit index {suit!r} is outside 0..3")
    return rank * NUM_SUITS + suit


def rank_of(card: int) -> int:
    """Rank index of a card id (0 = "2" … 12 = "A")."""
    return card // NUM_SUITS


def suit_of(card: int) -> int:
    """Suit index of a card id (0 = c, 1 = d, 2 = h, 3 = s)."""
    return card % NUM_SUITS


def card_to_text(card: int) -> str:
    """Two-character text of a card id, e.g. 50 -> "Ah"."""
    if not 0 <= card < NUM_RANKS * NUM_SUITS:
        raise ValueError(f"card id {card!r} is outside 0..51")
    return RANK_CHARS[card // NUM_SUITS] + SUIT_CHARS[card % NUM_SUITS]


def card_from_text(text: str) -> int:
    """Card id of two-character text; rank and suit letters are case-insensitive."""
    if len(text) != 2:
        raise ValueError(f"card text {text!r} is not two characters (rank then suit)")
    rank = RANK_CHARS.find(text[0].upper())
    suit = SUIT_CHARS.find(text[1].lower())
    if rank < 0 or suit < 0:
        raise ValueError(f"card text {text!r} is not a rank in {RANK_CHARS} and a suit in {SUIT_CHARS}")
    return rank * NUM_SUITS + suit


def cards_to_text(cards: Iterable[int]) -> str:
    """Concatenated text of several cards, without separators ("3c4d")."""
    return "".join(card_to_text(card) for card in cards)


def cards_from_text(text: str) -> tuple[int, ...]:
    """Card ids of concatenated two-character cards ("3c4d" -> (4, 9))."""
    if len(text) % 2:
        raise ValueError(f"card text {text!r} has an odd number of characters")
    return tuple(card_from_text(text[i : i + 2]) for i in range(0, len(text), 2))
