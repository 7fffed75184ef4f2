"""Dealing must reproduce the reference dealer's cards (MT19937 ``init_genrand``
test vectors; docs/protocol.md, The dealer's rules: Cards)."""

import random

import pytest

from poker.cards import cards_to_text
from poker.deal import Dealer, init_genrand_state
from poker.gamedef import load_game


def _generator(seed: int) -> random.Random:
    rng = random.Random()
    rng.setstate((3, init_genrand_state(seed) + (624,), None))
    return rng


def test_init_genrand_matches_the_mt19937_reference_outputs() -> None:
    # MT19937 reference outputs: init_genrand(0) -> 2357136044, 2546248239, 3071714933; 5489 ->
    # 3499211612
    rng = _generator(0)
    assert [rng.getrandbits(32) for _ in range(3)] == [2357136044, 2546248239, 3071714933]
    assert _generator(5489).getrandbits(32) == 3499211612


def _hands(game_name: str, seed: int, count: int) -> list[str]:
    dealer = Dealer(load_game(game_name), seed=seed)
    game = load_game(game_name)
    result = []
    for _ in range(count):
        deal = dealer.next_hand()
        text = "|".join(cards_to_text(h) for h in deal.hole)
        for round_ in range(1, game.num_rounds):
            start = game.board_start(round_)
            text += "/" + cards_to_text(deal.board[start : start + game.num_board_cards[round_]])
        result.append(text)
    return result


@pytest.mark.parametrize(
    ("game", "seed", "expected"),
    [
        (
            "holdem.limit.2p.reverse_blinds",
            0,
            ["5d5c|9hQd/8dAs8s/4h/6d", "6sKs|5dJd/2sTh2h/Qh/8h", "Ah8s|2h4c/Qd7h6c/4s/Jc", "4s8s|6hJd/QhJs9d/Qc/9h"],
        ),
        ("holdem.nolimit.2p.reverse_blinds", 11, ["3c4d|9d6c/6d7hAs/Ks/Td", "5c9c|Qc9h/4h4sJc/Tc/Ad"]),
        ("holdem.limit.3p", 11, ["3c4d|9d6c|6d7h/AsKsTd/8h/3s", "3s5h|6c4s|8sJs/Jh6sTd/Ts/Qs"]),
        ("kuhn.limit.3p", 7, ["As|Qs|Ks", "Ks|Qs|As", "As|Ks|Js", "Qs|As|Ks"]),
        # Reference transcripts 5.6 use no-limit HU with seed 5: 3h7d|6dQc/Ah4s6h/Ts/Ac
        ("holdem.nolimit.2p.reverse_blinds", 5, ["3h7d|6dQc/Ah4s6h/Ts/Ac"]),
    ],
)
def test_deal_reproduces_reference_cards(game: str, seed: int, expected: list[str]) -> None:
    assert _hands(game, seed, len(expected)) == expected


def test_reduced_decks_use_the_highest_suits_and_ranks() -> None:
    assert cards_to_text(load_game("kuhn").deck()) == "QsKsAs"
    assert cards_to_text(load_game("leduc").deck()) == "QhKhAhQsKsAs"
    assert len(load_game("hulhe").deck()) == 52


def test_every_hand_deals_distinct_cards_from_the_deck() -> None:
    game = load_game("holdem.nolimit.6p")
    dealer = Dealer(game, seed=123)
    for _ in range(200):
        deal = dealer.next_hand()
        cards = [c for h in deal.hole for c in h] + list(deal.board)
        assert len(cards) == len(set(cards)) == 6 * 2 + 5


def test_seed_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError, match="not a 32-bit unsigned"):
        Dealer(load_game("kuhn"), seed=2**32)
