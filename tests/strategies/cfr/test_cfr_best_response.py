"""Exact best response and exploitability against known values and a per-history reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from poker.gamedef import load_game
from strategies.base import make_strategy
from strategies.cfr.best_response.exact import best_response, profile_values, strategy_from_policy, to_mbb
from strategies.cfr.solvers.solver import uniform_strategy
from strategies.cfr.tree.public import build_tree

KUHN = build_tree(load_game("kuhn"))
LEDUC = build_tree(load_game("leduc"))


def test_best_response_kuhn_uniform_is_11_over_24() -> None:
    # OpenSpiel exploitability_test: NashConv of the uniform Kuhn policy is 11/12,
    # so the mean of the two best responses is 11/24 chips per hand.
    result = best_response(KUHN, uniform_strategy(KUHN))
    assert result.nash_conv == pytest.approx(float(Fraction(11, 12)), abs=1e-12)
    assert result.exploitability == pytest.approx(float(Fraction(11, 24)), abs=1e-12)
    # Against uniform play: position 0 can win 1/2, position 1 5/12 (sum 11/12).
    assert result.values == pytest.approx((0.5, 5 / 12), abs=1e-12)


def test_best_response_kuhn_always_first_action_is_1() -> None:
    # Our first legal action is call (check) when a check is free and fold facing a
    # bet: OpenSpiel's Kuhn "pass" (action 0) in both cases. OpenSpiel's
    # exploitability_test pins NashConv 2 for always-pass, i.e. exploitability 1.
    first = np.zeros((KUHN.num_decisions, KUHN.max_actions, KUHN.num_hands))
    first[:, 0, :] = 1.0
    result = best_response(KUHN, first)
    assert result.nash_conv == pytest.approx(2.0, abs=1e-12)
    assert result.exploitability == pytest.approx(1.0, abs=1e-12)


def test_best_response_leduc_uniform_nash_conv() -> None:
    # OpenSpiel exploitability_test: uniform Leduc NashConv 4.747222222222222.
    result = best_response(LEDUC, uniform_strategy(LEDUC))
    assert result.nash_conv == pytest.approx(4.747222222222222, abs=1e-12)
    assert result.exploitability == pytest.approx(2.373611111111111, abs=1e-12)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
@pytest.mark.parametrize("seed", [1, 2])
def test_best_response_equals_the_per_history_reference(name: str, seed: int, reference_br, random_strategy) -> None:  # type: ignore[no-untyped-def]
    tree = KUHN if name == "kuhn" else LEDUC
    strategy = random_strategy(tree, seed)
    result = best_response(tree, strategy)
    for position in range(2):
        assert result.values[position] == pytest.approx(reference_br(tree, strategy, position), abs=1e-12)


def test_best_response_is_at_least_the_profile_value(random_strategy) -> None:  # type: ignore[no-untyped-def]
    strategy = random_strategy(LEDUC, 3)
    values = profile_values(LEDUC, strategy)
    assert values[0] == pytest.approx(-values[1], abs=1e-12)  # zero-sum
    result = best_response(LEDUC, strategy)
    assert result.values[0] >= values[0] and result.values[1] >= values[1]


def test_best_response_nolimit_leduc_equals_the_reference(reference_br, random_strategy) -> None:  # type: ignore[no-untyped-def]
    tree = build_tree(load_game("leduc.nolimit"))
    strategy = random_strategy(tree, 4)
    result = best_response(tree, strategy)
    for position in range(2):
        assert result.values[position] == pytest.approx(reference_br(tree, strategy, position), abs=1e-9)
    assert to_mbb(tree.game, 0.25) == 2.5  # big blind 100 chips


def test_best_response_of_a_strategy_policy(reference_br) -> None:  # type: ignore[no-untyped-def]
    # The adapter must give the arrays one would write by hand: always "c".
    strategy = strategy_from_policy(KUHN, make_strategy("always-call", KUHN.game))
    by_hand = np.zeros_like(strategy)
    for d, node in enumerate(KUHN.decision_nodes):
        actions = KUHN.actions(int(node))
        by_hand[d, [str(a) for a in actions].index("c"), :] = 1.0
    assert np.array_equal(strategy, by_hand)
    # Against a player that checks and calls everything, either seat bets K (+2),
    # gets 0 with Q either way (+1/-1 at showdown, or +2/-2 when called) and checks
    # J (-1): (2 + 0 - 1) / 3 = 1/3 chips per hand.
    result = best_response(KUHN, strategy)
    assert result.values == pytest.approx((1 / 3, 1 / 3), abs=1e-12)
    assert result.values[0] == pytest.approx(reference_br(KUHN, strategy, 0), abs=1e-12)


def test_best_response_rejects_a_misshapen_strategy() -> None:
    with pytest.raises(ValueError, match=r"a strategy on this tree has shape \(4, 2, 3\)"):
        best_response(KUHN, np.zeros((4, 3, 3)))
