"""A bot's own values for AIVAT (analysis.policy_values, analysis.known_values).

Exact where exact values exist: :class:`LookaheadValues` is checked in Leduc
against the public tree (the estimate of an equilibrium bot's hands against a
chump contains the exact value; the expectation at a deal, by its martingale
shortcut, is the enumerated one). In hold'em, over hulhe-ir50's hands, AIVAT
minus the money of the same hands is consistent with 0 (the large check is
``benchmarks/variance_holdem.py``). A bot's entry plugs into the one scoring
function, and hands its policy could not have played are refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest

import strategies  # noqa: F401  (registers the built-in strategies)
from analysis import known_values
from analysis.aivat import AivatError, TreeValues, aivat
from analysis.hands import Hands
from analysis.importance import simulate_hands
from analysis.known_values import KnownValues, KnownValuesError
from analysis.match_score import score_match
from analysis.policy_values import LookaheadValues
from poker.gamedef import Game, load_game
from poker.state import CALL, State
from poker.stats import mean_ci
from strategies.base import make_strategy
from strategies.cfr.tree.public import build_tree

FloatArray = npt.NDArray[np.float64]
LEDUC = load_game("leduc.limit.2p")
HULHE = load_game("holdem.limit.2p.reverse_blinds")
DESCRIBED = "the test's look-ahead"


def leduc_lookahead(game: Game, spec: str, hands: Hands, player: str) -> KnownValues:
    """A registry entry for ``leduc-cfr`` (none ships: the tree gives Leduc exact values)."""
    if game != LEDUC:
        raise KnownValuesError("leduc-cfr plays Leduc")
    sigma = make_strategy(spec, game, seed=0)
    return KnownValues(sigma, LookaheadValues(game, sigma), DESCRIBED)


@pytest.fixture
def leduc_entry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(known_values.SOURCES, "leduc-cfr", f"{__name__}:leduc_lookahead")
    yield


@pytest.mark.parametrize(("chump", "seed"), [("always-raise", 3), ("random", 4)])
def test_leduc_lookahead_estimate_contains_the_exact_value(chump: str, seed: int) -> None:
    sigma, other = make_strategy("leduc-cfr", LEDUC, seed=1), make_strategy(chump, LEDUC, seed=2)
    hands = simulate_hands(LEDUC, [sigma, other], 3000, seed=seed, names=("bot", "chump"))
    tree = build_tree(LEDUC)
    exact = sum(TreeValues(tree, sigma, other).exact) / 2  # seats alternate
    result = aivat(hands, "bot", sigma, LookaheadValues(LEDUC, sigma))
    ci = mean_ci(result.estimate)
    assert abs(ci.mean - exact) <= ci.half_width, f"{ci.mean:.4f} ± {ci.half_width:.4f} vs exact {exact:.4f}"
    assert np.std(result.estimate) < np.std(result.raw) / 1.5


def test_the_street_start_shortcut_gives_the_enumerated_expectation() -> None:
    """With ``max_deals=0`` every street starts at its equity values and the
    expectation at a deal is the value before it; listing Leduc's board cards
    gives the same number, for a range that is not uniform."""
    sigma = make_strategy("leduc-cfr", LEDUC, seed=0)
    values = LookaheadValues(LEDUC, sigma, max_deals=0)
    state = State(LEDUC).apply(CALL).apply(CALL)  # the pre-flop betting over, the board card to come
    reach = np.linspace(0.2, 1.0, len(values.holdings))
    for o, position in itertools.product(range(len(values.holdings)), (0, 1)):
        mask = np.where((values.bits & values.bits[o]) == 0, reach, 0.0)
        shortcut = values.expected_deal(position, state, (), mask, o)
        total = weight = 0.0
        for card in sorted(set(LEDUC.deck()) - {int(c) for c in values.holdings[o]}):
            fits = np.where((values.bits & (np.uint64(1) << np.uint64(card))) == 0, mask, 0.0)
            total += float(fits @ values(position, state, (card,), o))
            weight += float(fits.sum())
        assert shortcut == pytest.approx(total / weight, abs=1e-12)


def test_a_registered_bot_is_scored_with_its_own_values(leduc_entry: None) -> None:
    sigma, chump = make_strategy("leduc-cfr", LEDUC, seed=1), make_strategy("random", LEDUC, seed=2)
    hands = simulate_hands(LEDUC, [sigma, chump], 200, seed=7, names=("bot", "chump"))
    score = score_match([hands], ["bot", "chump"], game=LEDUC, hands=200, policies={"bot": "leduc-cfr"})
    bot, other = score.players
    expected = aivat(hands, "bot", sigma, LookaheadValues(LEDUC, sigma)).estimate
    assert bot.aivat is not None and other.aivat is not None
    np.testing.assert_allclose(bot.aivat.values, expected, atol=1e-12)
    np.testing.assert_allclose(other.aivat.values, -expected, atol=1e-12)
    document = score.to_json()["players"]
    assert document[0]["aivat"]["value_function"] == DESCRIBED and document[1]["aivat"]["estimator"] == "-aivat of bot"


def test_hands_the_recorded_policy_could_not_have_played_are_refused(leduc_entry: None) -> None:
    """A hand whose action the policy gives probability 0: AIVAT refuses it, and
    the match is scored without AIVAT rather than with a wrong one."""
    raiser, caller = make_strategy("always-raise", LEDUC, seed=1), make_strategy("always-call", LEDUC, seed=1)
    hands = simulate_hands(LEDUC, [raiser, caller], 20, seed=1, names=("bot", "other"))
    with pytest.raises(AivatError, match="probability 0"):
        aivat(hands, "bot", caller, LookaheadValues(LEDUC, caller))
    score = score_match([hands], ["bot", "other"], game=LEDUC, hands=20, policies={"bot": "always-call"})
    assert all(p.aivat is None for p in score.players)


def test_hulhe_ir50_aivat_minus_money_is_consistent_with_zero() -> None:
    """hulhe-ir50 against always-call, both seats: AIVAT on the bot's own values
    (a small pre-flop table, as unbiased) less each hand's money has 0 in its
    95% interval, and the estimate's spread is well under the money's."""
    bot, caller = make_strategy("hulhe-ir50", HULHE, seed=1), make_strategy("always-call", HULHE, seed=2)
    hands = simulate_hands(HULHE, [bot, caller], 40, seed=11, names=("bot", "caller"))
    values = LookaheadValues(HULHE, bot, preflop_samples=50)
    result = aivat(hands, "bot", bot, values)
    difference = mean_ci(result.estimate - result.raw)
    assert abs(difference.mean) <= difference.half_width, f"{difference.mean:.2f} ± {difference.half_width:.2f}"
    assert np.std(result.estimate) < np.std(result.raw) / 2
