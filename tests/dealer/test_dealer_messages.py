"""The dealer's fast MATCHSTATE texts equal poker.protocol's views in every state."""

from __future__ import annotations

import random

import pytest

from dealer.messages import HandTexts
from poker.deal import Dealer
from poker.gamedef import game_names, load_game
from poker.protocol import view_of
from poker.state import Action, State


@pytest.mark.parametrize("name", sorted(set(game_names().values())))
def test_texts_equal_protocol_views_along_random_hands(name: str) -> None:
    game = load_game(name)
    rng = random.Random(name)
    dealer = Dealer(game, seed=3)
    for hand_id in range(60):
        deal = dealer.next_hand()
        texts = HandTexts(game, deal, hand_id)
        state = State(game)
        while True:
            expected = [str(view_of(state, deal, hand_id=hand_id, viewer=p)) for p in range(game.num_players)]
            assert texts.views(state) == expected
            if state.finished:
                break
            actions = state.legal_actions()
            bounds = state.raise_bounds()
            if bounds is not None and not game.is_limit:
                actions.append(Action.raise_to(rng.randint(*bounds)))
            state = state.apply(rng.choice(actions))
