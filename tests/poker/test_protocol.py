"""Protocol text: MATCHSTATE, responses and STATE lines, tolerances and round trips."""

from __future__ import annotations

import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poker.deal import Dealer
from poker import protocol
from poker.gamedef import Game, load_game
from poker.protocol import (
    MatchStateReader,
    ProtocolError,
    format_value,
    parse_action,
    parse_betting,
    parse_match_state,
    parse_response,
    view_of,
)
from poker.state import CALL, Action, ActionType, State

HUNL = load_game("hunl")
HULHE = load_game("hulhe")


def test_reader_tolerances_of_the_reference() -> None:
    # lower-case ranks, upper-case suits, legacy letters, missing '|', slashes anywhere.
    text = "MATCHSTATE:0:0:Kb/k/r:3C4D9d6c/6d7has"
    seen, used = parse_match_state(text, HULHE)
    assert used == len(text)
    assert seen.state.betting_string() == "crc/r"  # slashes are recomputed, not read
    assert str(seen) == "MATCHSTATE:0:0:crc/r:3c4d|9d6c/6d7hAs"
    seen, _ = parse_match_state("MATCHSTATE:1:3:r 250:|9d6c", HUNL)  # %d skips blanks
    assert seen.state.actions[0] == (Action.raise_to(250),)


def test_response_parts_are_read_like_the_dealer() -> None:
    response = parse_response("MATCHSTATE:1:0::|9d6c:r250 trailing junk", HUNL)
    assert response.action == Action.raise_to(250) and not response.bad_format
    assert parse_response("MATCHSTATE:0:0:c:3h7d|:r", HUNL).bad_format  # no size
    assert parse_response("MATCHSTATE:0:0:c:3h7d|", HUNL).bad_format  # no ':'
    assert parse_response("MATCHSTATE:0:0:c:3h7d|:x", HUNL).action is None  # unknown letter
    assert parse_response("MATCHSTATE:0:0:c:3h7d|: r400", HUNL).action is None  # leading space
    assert parse_response("MATCHSTATE:0:0:c:3h7d|:", HUNL).action is None  # empty
    assert parse_response("MATCHSTATE:0:0:cc/:3h7d|/Ah4s6h:b300", HUNL).action == Action.raise_to(300)
    assert parse_response("MATCHSTATE:0:0:r:3c4d|:r17218", HULHE).action == Action(ActionType.RAISE)


@pytest.mark.parametrize(
    ("game_name", "text", "message"),
    [
        ("hulhe", "garbage", "not a MATCHSTATE message"),
        ("hulhe", "MATCHSTATE:2:0::3c4d|", "position 2 .* is not below numPlayers 2"),
        ("hulhe", "MATCHSTATE:0:0:cf:3c4d|", "illegal action 'f'.*fold is not legal when a check is free"),
        ("hulhe", "MATCHSTATE:0:0:cc:3c4d|", "round 1 needs 3 board cards"),
        ("hulhe", "MATCHSTATE:0:0::3c4|", "position 0 has 1 hole cards"),
        ("hunl", "MATCHSTATE:0:0:r:3c4d|", "not followed by ':'"),  # no-limit r without size
    ],
)
def test_malformed_match_states_are_rejected_with_the_reason(game_name: str, text: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_match_state(text, load_game(game_name))


def test_header_numbers_are_read_like_scanf_unsigned() -> None:
    seen, _ = parse_match_state("MATCHSTATE: 1:+7::|9d6c", HULHE)
    assert (seen.viewer, seen.hand_id) == (1, 7)
    seen, _ = parse_match_state(f"MATCHSTATE:0:{2**32 + 5}::3c4d|", HULHE)
    assert seen.hand_id == 5  # uint32 wraps


def test_action_tokens() -> None:
    assert parse_action("F", HUNL) == (Action(ActionType.FOLD), 1)
    assert parse_action("k", HUNL) == (CALL, 1)
    assert parse_action("r-5", HUNL) == (Action.raise_to(-5), 3)  # clamped later by the dealer
    assert parse_action("?", HUNL) == (None, 0)
    with pytest.raises(ProtocolError, match="does not fit a 32-bit integer"):
        parse_action("r99999999999", HUNL)


@pytest.mark.parametrize(
    ("value", "text"),
    [(10, "10"), (-20000, "-20000"), (2.5, "2.5"), (10 / 3, "3.333333"), (-10 / 3, "-3.333333"), (0.0, "0"), (-0.0000001, "0")],
)
def test_values_print_like_the_reference(value: float, text: str) -> None:
    assert format_value(value) == text


def test_folded_cards_are_never_shown_and_showdown_cards_are() -> None:
    game = load_game("holdem.limit.3p")
    deal = Dealer(game, seed=11).next_hand()
    state = parse_betting("rcc/crfc/cc/rc", game)
    views = [str(view_of(state, deal, hand_id=0, viewer=p)) for p in range(3)]
    assert views == [
        "MATCHSTATE:0:0:rcc/crfc/cc/rc:3c4d|9d6c|/AsKsTd/8h/3s",
        "MATCHSTATE:1:0:rcc/crfc/cc/rc:3c4d|9d6c|/AsKsTd/8h/3s",
        "MATCHSTATE:2:0:rcc/crfc/cc/rc:3c4d|9d6c|6d7h/AsKsTd/8h/3s",
    ]


def _random_playout(game_name: str, seed: int) -> list[str]:
    """Every view of one random hand, to round-trip through the parser."""
    import random

    game = load_game(game_name)
    rng = random.Random(seed)
    deal = Dealer(game, seed=seed).next_hand()
    state = State(game)
    texts = []
    while True:
        texts += [str(view_of(state, deal, hand_id=seed, viewer=p)) for p in range(game.num_players)]
        if state.finished:
            return texts
        bounds = state.raise_bounds()
        choices = state.legal_actions(
            raise_sizes=() if bounds is None else (rng.randint(*bounds),) if not game.is_limit else ()
        )
        state = state.apply(rng.choice(choices))


_PLAYOUT_GAMES = st.sampled_from(["hulhe", "hunl", "holdem.limit.3p", "holdem.nolimit.6p", "leduc", "kuhn3p"])
_SEEDS = st.integers(0, 2**32 - 3)  # a few consecutive hands from each


@settings(max_examples=300, deadline=None)
@given(game_name=_PLAYOUT_GAMES, seed=_SEEDS)
def test_every_view_round_trips(game_name: str, seed: int) -> None:
    game = load_game(game_name)
    for text in _random_playout(game_name, seed):
        seen, used = parse_match_state(text, game)
        assert used == len(text)
        assert str(seen) == text
        response = parse_response(f"{text}:c", game)
        assert response.match_state.same_as(seen)


def _hands_of_one_connection(game_name: str, seed: int, hands: int) -> list[str]:
    """The views position 0 and position 1 would get over ``hands`` random hands."""
    texts = [t for k in range(hands) for t in _random_playout(game_name, seed + k)]
    return [t for t in texts if t.startswith("MATCHSTATE:0:")] + [t for t in texts if t.startswith("MATCHSTATE:1:")]


@settings(max_examples=100, deadline=None)
@given(game_name=_PLAYOUT_GAMES, seed=_SEEDS)
def test_incremental_reader_gives_the_views_of_a_full_parse(game_name: str, seed: int) -> None:
    game = load_game(game_name)
    one_seat, every_message = MatchStateReader(game), MatchStateReader(game)
    texts = _hands_of_one_connection(game_name, seed, 3)
    for text in texts:  # each seat's messages in order: a resume, or a new hand
        assert one_seat.parse(text) == parse_match_state(text, game)
    for text in sorted(texts):  # betting that seldom extends the last: the fallback
        assert every_message.parse(text) == parse_match_state(text, game)


def test_incremental_reader_falls_back_when_the_betting_does_not_extend() -> None:
    reader = MatchStateReader(HUNL)
    steps = [
        "MATCHSTATE:0:0:r250:3c4d|",
        "MATCHSTATE:0:0:r2500c/:3c4d|/Ah4s6h",  # starts with "r250" but is not r250 + more
        "MATCHSTATE:0:0:r2500c/r5000:3c4d|/Ah4s6h",
        "MATCHSTATE:0:1::|9d6c",  # a new hand
        "MATCHSTATE:0:1:C/:|9d6c",  # extends "": upper case and a stray '/'
        "MATCHSTATE:0:0:r2500C/R5000:3c4d|/Ah4s6h",  # case changes: not the known text
        "MATCHSTATE:0:0:r2500C/R5000 r9000:3c4d|/Ah4s6h",  # blanks before a size
    ]
    for text in steps:
        try:
            expected: object = parse_match_state(text, HUNL)
        except ProtocolError as error:
            with pytest.raises(ProtocolError, match=re.escape(str(error))):
                reader.parse(text)
        else:
            assert reader.parse(text) == expected


def test_incremental_reader_reports_errors_like_a_full_parse() -> None:
    reader = MatchStateReader(HULHE)
    assert reader.parse("MATCHSTATE:0:0:rr:3c4d|")[0].state.betting_string() == "rr"
    for text, message in [
        ("MATCHSTATE:0:0:rrf:3c4d|", None),
        ("MATCHSTATE:0:0:rrc:3c4d|", "round 1 needs 3 board cards"),
        ("MATCHSTATE:0:0:rrcf:3c4d|/2c3c4c", "illegal action 'f'.*fold is not legal when a check is free"),
        ("MATCHSTATE:0:0:rrc/rrrrr:3c4d|/2c3c4c", "illegal action 'r'.*cap of 4 raises"),
        ("MATCHSTATE:0:0:rrc/rrrr:3c4d|/2c3c4c", None),  # the reader goes on after errors
    ]:
        if message is None:
            assert reader.parse(text) == parse_match_state(text, HULHE)
            continue
        with pytest.raises(ProtocolError, match=message):
            parse_match_state(text, HULHE)
        with pytest.raises(ProtocolError, match=message):
            reader.parse(text)


def test_prefix_cache_is_bounded_by_bytes_under_hostile_betting(monkeypatch: pytest.MonkeyPatch) -> None:
    # An agent's responses are parsed by the dealer; distinct long betting strings
    # (sizes padded with zeros are legal) must not grow the cache past its budget.
    cache = protocol._PREFIX_CACHE
    monkeypatch.setattr(cache, "max_bytes", 256 * 1024)
    cache.clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(1500):
            betting = f"r{'0' * (1000 + i)}200c/r{'0' * 1000}300"
            parse_match_state(f"MATCHSTATE:0:0:{betting}:3c4d|/Ah4s6h", HUNL)
            assert cache.nbytes <= cache.max_bytes
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        cache.clear()
    assert grown < 2 * cache.max_bytes
    # An honest hand still resumes from the cache.
    parse_match_state("MATCHSTATE:0:0:r300:3c4d|", HUNL)
    cached = cache.get(HUNL, "r300")
    assert cached is not None and cached.betting_string() == "r300"


def test_long_hostile_betting_looks_up_only_the_longest_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each lookup slices and hashes the text: one per token made a 4000-call
    # betting cost 12 ms; a few of the longest prefixes, else a replay, suffice.
    lookups: list[str] = []
    real_get = protocol._PrefixCache.get

    def get(cache: protocol._PrefixCache, game: Game, betting: str) -> State | None:
        lookups.append(betting)
        return real_get(cache, game, betting)

    monkeypatch.setattr(protocol._PrefixCache, "get", get)
    with pytest.raises(ProtocolError, match="illegal action 'c'"):
        parse_match_state("MATCHSTATE:0:0:" + "c" * 4000 + ":3c4d|", HUNL)
    assert 0 < len(lookups) <= 16


def test_huge_padded_raise_sizes() -> None:
    assert parse_action("r" + "0" * 5000 + "200", HUNL)[0] == Action.raise_to(200)
    with pytest.raises(ProtocolError, match="does not fit a 32-bit integer"):
        parse_action("r" + "9" * 5000, HUNL)  # int() alone would raise a plain ValueError
