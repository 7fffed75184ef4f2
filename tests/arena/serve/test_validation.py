"""A match request checked before the host takes anything for it
(:mod:`arena.serve.validation`): the API's JSON body and a web table's typed
values pass the same checks, refused in the same words."""

from __future__ import annotations

import pytest

from arena.serve.httpkit import RequestError
from arena.serve.validation import ABOUT, CHUMPS, SEED_LIMIT, MatchRequest, hosted_bots, match_request, table_request
from poker.gamedef import load_game
from strategies.bots import LIBRARY

MAX_HANDS = 100


@pytest.mark.parametrize(
    ("game", "opponent", "hands", "message"),
    [
        ("../../etc/passwd", "always-call", 5, "unknown game '../../etc/passwd': name a shipped game (arena games)"),
        ("kuhn3p", "always-call", 5, "kuhn3p is a 3-player game; hosted matches are heads-up"),
        ("kuhn", "leduc-cfr", 5, "bot leduc-cfr plays leduc, not kuhn"),
        ("kuhn", "always-call", 1, f"'hands' must be a whole number in 2..{MAX_HANDS}, got 1"),
    ],
)
def test_a_table_and_the_api_refuse_alike(game: str, opponent: str, hands: int, message: str) -> None:
    with pytest.raises(RequestError) as table:
        table_request(game, opponent, hands, 1, MAX_HANDS)
    with pytest.raises(RequestError) as api:
        match_request({"game": game, "opponent": opponent, "hands": hands, "seed": 1}, MAX_HANDS)
    assert (table.value.status, str(table.value)) == (api.value.status, str(api.value)) == (400, message)


def test_a_checked_request_carries_the_game_and_a_seed() -> None:
    asked = match_request({"game": "kuhn", "opponent": "always-call", "hands": 5, "seed": 7, "duplicate": True}, MAX_HANDS)
    assert asked == MatchRequest("kuhn", load_game("kuhn"), "always-call", 5, 7, True, chosen=True)
    drawn = table_request("leduc", "always-call", 10, None, MAX_HANDS)
    assert 0 <= drawn.seed < SEED_LIMIT and not drawn.duplicate and drawn.game == load_game("leduc")
    assert not drawn.chosen and table_request("leduc", "always-call", 10, 3, MAX_HANDS).chosen


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"game": "kuhn", "opponent": "always-call", "hands": 5, "colour": 1},
         "unknown field 'colour'; fields: game, opponent, hands, seed, duplicate"),
        ({"game": 3, "opponent": "always-call", "hands": 5}, "'game' and 'opponent' must be strings (GET /api/bots lists the hosted bots)"),
        ({"game": "kuhn", "opponent": "always-call"}, "missing 'hands'"),
        ({"game": "kuhn", "opponent": "always-call", "hands": True}, f"'hands' must be a whole number in 2..{MAX_HANDS}, got True"),
        ({"game": "kuhn", "opponent": "always-call", "hands": 5, "seed": SEED_LIMIT},
         f"'seed' must be a whole number in 0..{SEED_LIMIT - 1}, got {SEED_LIMIT}"),
        ({"game": "kuhn", "opponent": "always-call", "hands": 5, "duplicate": "yes"}, "'duplicate' must be true or false"),
    ],
)
def test_the_api_body_is_refused_in_one_line(document: dict[str, object], message: str) -> None:
    with pytest.raises(RequestError) as refused:
        match_request(document, MAX_HANDS)
    assert (refused.value.status, str(refused.value)) == (400, message)


def test_every_hosted_bot_has_a_line_for_newcomers_and_its_games_name() -> None:
    """Every bot the library could host (its file built or not) and every simple bot has its plain line."""
    heads_up = {name for name, bot in LIBRARY.items() if load_game(bot.game).num_players == 2}
    assert set(ABOUT) == heads_up | set(CHUMPS)
    listed = {bot["name"]: bot for bot in hosted_bots()}
    assert (listed["leduc-cfr"]["game_name"], listed["always-call"]["game_name"]) == ("Leduc hold'em", "any game")
    assert listed["always-fold"]["about"] == "Folds to any bet, checks otherwise: every bet wins the pot."
