"""The card-blind strategies: exact choices, the random player's frequencies, the registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poker.deal import private_hands
from poker.gamedef import Game, load_game
from poker.protocol import MatchState, parse_match_state
from poker.state import CALL, FOLD, Action, ActionType
from strategies import PublicState, StrategyError, make_strategy, strategy_names
from strategies.base import Spec

KUHN = load_game("kuhn")
HULHE = load_game("hulhe")
HUNL = load_game("hunl")
LIMIT_RAISE = Action(ActionType.RAISE)


def view(text: str, game: Game) -> MatchState:
    return parse_match_state(text, game)[0]


# Kuhn: antes of 1, one raise of 1 allowed; position 0 acts first.
KUHN_OPEN = "MATCHSTATE:0:0::Ks|"  # check or bet, no fold
KUHN_FACING_BET = "MATCHSTATE:1:0:r:|Qs"  # fold or call, the one raise is used
KUHN_AFTER_CHECK = "MATCHSTATE:1:0:c:|Qs"  # check or bet


@pytest.mark.parametrize(
    ("spec", "state", "expected"),
    [
        ("always-call", KUHN_OPEN, CALL),
        ("always-call", KUHN_FACING_BET, CALL),
        ("always-raise", KUHN_OPEN, LIMIT_RAISE),
        ("always-raise", KUHN_AFTER_CHECK, LIMIT_RAISE),
        ("always-raise", KUHN_FACING_BET, CALL),  # cap reached: call
        ("always-fold", KUHN_OPEN, CALL),  # a free check is never folded
        ("always-fold", KUHN_FACING_BET, FOLD),
        ("probe", KUHN_FACING_BET, CALL),  # never folds; no raise left
    ],
)
def test_deterministic_choices_in_kuhn(spec: str, state: str, expected: Action) -> None:
    assert make_strategy(spec, KUHN).act(view(state, KUHN)) == expected


# HUNL pre-flop: the button (position 1, small blind 50) faces the big blind of 100.
HUNL_OPEN = "MATCHSTATE:1:0::|9d6c"


@pytest.mark.parametrize(
    ("spec", "raise_to"),
    [
        ("always-raise", 200),  # min raise-to = 2 * big blind
        ("always-raise:size=min", 200),
        ("always-raise:size=max", 20000),  # all-in
        # pot after calling = 100 + 50 + 50 = 200; raise by it: 100 + 200 = 300
        ("always-raise:size=pot", 300),
        ("probe:size=max", 20000),
    ],
)
def test_nolimit_raise_sizes(spec: str, raise_to: int) -> None:
    strategy = make_strategy(spec, HUNL, seed=0)
    actions = {strategy.act(view(HUNL_OPEN, HUNL)) for _ in range(40)}
    assert actions <= {Action.raise_to(raise_to), CALL}
    assert Action.raise_to(raise_to) in actions


def test_pot_raise_clamped_to_all_in() -> None:
    # Facing a raise to 15000: pot after calling = 15000 + 15000 = 30000 -> to 45000 > stack 20000.
    facing = view("MATCHSTATE:0:0:r15000:3c4d|", HUNL)
    assert make_strategy("always-raise:size=pot", HUNL).act(facing) == Action.raise_to(20000)


def counts(spec: str, text: str, game: Game, draws: int, seed: int = 7) -> dict[str, int]:
    strategy = make_strategy(spec, game, seed=seed)
    state = view(text, game)
    result: dict[str, int] = {}
    for _ in range(draws):
        letter = str(strategy.act(state))[0]
        result[letter] = result.get(letter, 0) + 1
    return result


def within_five_sigma(count: int, draws: int, p: float) -> bool:
    """Binomial count within 5 standard deviations of draws*p (a false alarm
    has probability below 1e-6 for a fair generator)."""
    return abs(count - draws * p) <= 5 * math.sqrt(draws * p * (1 - p))


def test_random_frequencies_facing_a_bet_in_limit_holdem() -> None:
    # Button facing the big blind: fold, call and raise all legal -> .06/.47/.47.
    draws = 20000
    seen = counts("random", "MATCHSTATE:1:0::|9d6c", HULHE, draws)
    assert set(seen) == {"f", "c", "r"}
    for letter, p in (("f", 0.06), ("c", 0.47), ("r", 0.47)):
        assert within_five_sigma(seen[letter], draws, p), (letter, seen)


def test_random_frequencies_renormalise_without_fold() -> None:
    # Kuhn opening: no fold (free check) -> call and raise .47/.94 = 1/2 each.
    draws = 20000
    seen = counts("random", KUHN_OPEN, KUHN, draws)
    assert set(seen) == {"c", "r"}
    assert within_five_sigma(seen["c"], draws, 0.5), seen


def test_random_frequencies_renormalise_without_raise() -> None:
    # Kuhn facing the bet: no raise left -> fold .06/.53, call .47/.53.
    draws = 20000
    seen = counts("random", KUHN_FACING_BET, KUHN, draws)
    assert set(seen) == {"f", "c"}
    assert within_five_sigma(seen["f"], draws, 0.06 / 0.53), seen


def test_probe_frequencies() -> None:
    draws = 20000
    seen = counts("probe", "MATCHSTATE:1:0::|9d6c", HULHE, draws)
    assert set(seen) == {"c", "r"}  # never folds
    assert within_five_sigma(seen["r"], draws, 0.5), seen


def test_random_is_reproducible_with_a_seed() -> None:
    a = counts("random", "MATCHSTATE:1:0::|9d6c", HULHE, 500, seed=3)
    b = counts("random", "MATCHSTATE:1:0::|9d6c", HULHE, 500, seed=3)
    c = counts("random", "MATCHSTATE:1:0::|9d6c", HULHE, 500, seed=4)
    assert a == b
    assert a != c


def test_random_nolimit_sizes_are_uniform_on_the_legal_range() -> None:
    strategy = make_strategy("random", HUNL, seed=11)
    state = view(HUNL_OPEN, HUNL)
    sizes = np.array([a.size for a in (strategy.act(state) for _ in range(20000)) if a.type is ActionType.RAISE])
    assert sizes.min() >= 200 and sizes.max() <= 20000
    # Uniform on 200..20000: mean 10100, sd (19801^2 - 1)/12 ^ 0.5 = 5716.1; the
    # sample mean of ~9400 raises is within 5 standard errors (5 * 5716 / sqrt(9400) = 295).
    assert abs(sizes.mean() - 10100) <= 5 * 5716.1 / math.sqrt(sizes.size)


def test_policy_of_card_blind_strategies() -> None:
    facing = PublicState(view(KUHN_FACING_BET, KUHN).state)
    assert facing.actions == (FOLD, CALL)
    random_policy = make_strategy("random", KUHN).policy(facing)
    assert random_policy.shape == (3, 2)
    np.testing.assert_allclose(random_policy, [[0.06 / 0.53, 0.47 / 0.53]] * 3, rtol=1e-15)
    np.testing.assert_array_equal(make_strategy("always-fold", KUHN).policy(facing), [[1.0, 0.0]] * 3)
    opening = PublicState(view(KUHN_OPEN, KUHN).state)
    np.testing.assert_array_equal(make_strategy("always-raise", KUHN).policy(opening), [[0.0, 1.0]] * 3)


def test_policy_nolimit_needs_a_matching_column() -> None:
    public = PublicState(view(HUNL_OPEN, HUNL).state)  # columns f, c, r200, r20000
    policy = make_strategy("always-raise:size=max", HUNL).policy(public)
    assert policy.shape == (1326, 4)
    np.testing.assert_array_equal(policy[0], [0, 0, 0, 1])
    with pytest.raises(NotImplementedError, match=r"plays r300 .* columns are \['f', 'c', 'r200', 'r20000'\]"):
        make_strategy("always-raise:size=pot", HUNL).policy(public)
    with pytest.raises(NotImplementedError, match="uniform size in 200..20000"):
        make_strategy("random", HUNL).policy(public)


def test_private_hands_enumeration() -> None:
    assert private_hands(KUHN).tolist() == [[43], [47], [51]]  # Qs, Ks, As: the 3 highest ranks of one suit
    assert private_hands(load_game("leduc")).shape == (6, 1)
    hands = private_hands(HULHE)
    assert hands.shape == (1326, 2)
    assert hands[0].tolist() == [0, 1] and hands[-1].tolist() == [50, 51]


def test_registry_lists_the_builtins() -> None:
    assert set(strategy_names()) >= {"always-call", "always-raise", "always-fold", "random", "probe"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", r"unknown strategy 'nope'; known strategies: always-call, .*random"),
        ("random:colour=red", r"strategy 'random' has no option colour; it takes size=min\|max\|pot\|uniform"),
        ("always-call:size=min", r"strategy 'always-call' has no option size; it takes no options"),
        ("always-raise:size=huge", r"option size='huge' is not one of min, max, pot"),
        ("probe:size", r"option 'size' is not of the form name=value"),
        ("probe:size=min,size=max", r"gives option 'size' twice"),
    ],
)
def test_make_strategy_errors(spec: str, message: str) -> None:
    with pytest.raises(StrategyError, match=message):
        make_strategy(spec, KUHN)


def test_default_policy_says_what_is_missing() -> None:
    from strategies.base import Strategy

    class Silent(Strategy):
        def act(self, view: MatchState) -> Action:
            return CALL

    with pytest.raises(NotImplementedError, match="does not give action probabilities per private hand"):
        Silent().policy(PublicState(view(KUHN_OPEN, KUHN).state))


def test_a_spec_is_parsed_once_and_keeps_its_text() -> None:
    """Issue 20 §1: the spec travels as a value from the command line to the seat."""
    spec = Spec.parse("portfolio:bots=leduc-cfr+random,eta=0.5")
    assert (spec.name, spec.options) == ("portfolio", (("bots", "leduc-cfr+random"), ("eta", "0.5")))
    assert str(spec) == "portfolio:bots=leduc-cfr+random,eta=0.5" and spec.has_option("eta")
    logged = spec.with_option("log", "/runs/a/match.p.components.csv")
    assert str(logged) == "portfolio:bots=leduc-cfr+random,eta=0.5,log=/runs/a/match.p.components.csv"
    assert logged == Spec.parse(str(logged))
    assert str(Spec.parse("random").with_option("size", "pot")) == "random:size=pot"
    with pytest.raises(StrategyError, match="holds a ','"):
        spec.with_option("log", "/a,b/c.csv")
