import pytest

from poker.cards import card_from_text, card_to_text, cards_from_text, cards_to_text, make_card, rank_of, suit_of


def test_card_ids_follow_the_reference_numbering() -> None:
    # card = rank * 4 + suit, rank 0 = "2", suit order c d h s (the reference's numbering)
    assert card_from_text("2c") == 0
    assert card_from_text("2s") == 3
    assert card_from_text("As") == 51
    assert card_from_text("Td") == make_card(8, 1) == 33
    assert (rank_of(33), suit_of(33)) == (8, 1)


def test_every_card_round_trips() -> None:
    assert [card_from_text(card_to_text(c)) for c in range(52)] == list(range(52))
    assert cards_to_text(cards_from_text("3c4d9d6c")) == "3c4d9d6c"


def test_reading_is_case_insensitive_and_writing_canonical() -> None:
    assert card_to_text(card_from_text("aH")) == "Ah"
    assert cards_from_text("tCjD") == (card_from_text("Tc"), card_from_text("Jd"))


@pytest.mark.parametrize(
    ("text", "message"),
    [("Xh", "is not a rank"), ("Az", "is not a rank"), ("A", "not two characters"), ("", "not two characters")],
)
def test_bad_card_text_is_rejected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        card_from_text(text)


def test_bad_ids_and_odd_text_are_rejected() -> None:
    with pytest.raises(ValueError, match="card id 52 is outside"):
        card_to_text(52)
    with pytest.raises(ValueError, match="odd number of characters"):
        cards_from_text("AhK")
    with pytest.raises(ValueError, match="rank index 13"):
        make_card(13, 0)
