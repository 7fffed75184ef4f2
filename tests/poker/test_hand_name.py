"""Hand names: one hand of each class, the small games' hands, and a property
check that the name's class is the evaluator's class for random hands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from poker.cards import cards_from_text
from poker.evaluate import HandClass, hand_class
from poker.hand_name import hand_name
from poker.hand_rank import rank_hand


@pytest.mark.parametrize(
    ("cards", "name"),
    [
        # hold'em: the best five of seven, kickers unnamed
        ("AhKhQhJhTh2c3d", "royal flush"),
        ("9h8h7h6h5h2c3d", "straight flush, nine high"),
        ("5d4d3d2dAdKsKc", "straight flush, five high"),  # the steel wheel, not the ace-high flush
        ("2c2d2h2s3cKdAs", "four twos"),
        ("KsKdKh5c5d5hAs", "full house, kings full of fives"),  # the second trips fill the house
        ("AhJh8h4h2hKsKd", "flush, ace high"),
        ("5c4d3h2sAsKdQd", "straight, five high"),  # the wheel: the ace plays low
        ("TcJdQhKsAs2c2d", "straight, ace high"),
        ("7s7d7h2c9dJcKh", "three sevens"),
        ("KsKd5c5h9d9c3c", "two pair, kings and nines"),  # the best two of three pairs
        ("QsQh9c6d4s2h3d", "pair of queens"),
        ("Kh9c6d4s2hJd3c", "king-jack high"),  # high card: the top two name it
        # Leduc: hole card and board card
        ("QsQh", "pair of queens"),
        ("KhAs", "ace-king high"),
        # Kuhn: one card, no board
        ("Kh", "king high"),
        ("Js", "jack high"),
    ],
)
def test_hand_names(cards: str, name: str) -> None:
    assert hand_name(cards_from_text(cards)) == name


_CLASS_WORDS = {
    HandClass.HIGH_CARD: " high",
    HandClass.PAIR: "pair of ",
    HandClass.TWO_PAIR: "two pair, ",
    HandClass.TRIPS: "three ",
    HandClass.STRAIGHT: "straight, ",
    HandClass.FLUSH: "flush, ",
    HandClass.FULL_HOUSE: "full house, ",
    HandClass.QUADS: "four ",
    HandClass.STRAIGHT_FLUSH: "straight flush, ",
}


@given(st.lists(st.integers(0, 51), min_size=1, max_size=7, unique=True))
def test_the_name_is_the_evaluators_class(cards: list[int]) -> None:
    cls = hand_class(rank_hand(cards))
    name = hand_name(cards)
    if cls is HandClass.STRAIGHT_FLUSH and name == "royal flush":
        return
    assert _CLASS_WORDS[cls] in name
    assert not (cls is HandClass.STRAIGHT and name.startswith("straight flush"))


def test_not_a_hand_is_refused() -> None:
    with pytest.raises(ValueError, match="appears more than once"):
        hand_name([3, 3])
