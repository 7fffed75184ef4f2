"""Means and 95% intervals against numbers worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poker.gamedef import load_game
from poker.stats import Estimate, Unit, mean_ci, pooled, unit_of


def test_mean_ci_four_values() -> None:
    # values 1, 2, 3, 4: mean 2.5; squared deviations 2.25+0.25+0.25+2.25 = 5,
    # s^2 = 5/3, half-width = 1.96 * sqrt(5/3) / sqrt(4) = 0.98 * sqrt(5/3) = 1.2651746
    estimate = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert estimate.mean == 2.5
    assert estimate.n == 4
    assert estimate.half_width == pytest.approx(0.98 * math.sqrt(5 / 3), rel=1e-15)
    assert estimate.half_width == pytest.approx(1.2651746, abs=1e-7)
    assert (estimate.low, estimate.high) == (2.5 - estimate.half_width, 2.5 + estimate.half_width)


def test_mean_ci_constant_values_have_zero_width() -> None:
    assert mean_ci([-2.0, -2.0, -2.0]) == Estimate(-2.0, 0.0, 3)


def test_mean_ci_two_values() -> None:
    # 0 and 10: mean 5, s = sqrt(50) = 7.0711, half-width = 1.96 * sqrt(50) / sqrt(2) = 1.96 * 5 = 9.8
    assert mean_ci([0, 10]).half_width == pytest.approx(9.8, rel=1e-15)


def test_mean_ci_needs_two_values() -> None:
    with pytest.raises(ValueError, match=r"at least two values .* shape \(1,\)"):
        mean_ci([3.0])


def test_pooled_parts_give_the_estimate_of_all_their_values() -> None:
    """Three runs of unequal size and spread, pooled from their lines alone, are
    the estimate over every value (to rounding: the parts keep no sums)."""
    rng = np.random.default_rng(5)
    runs = [rng.normal(loc, scale, size) for loc, scale, size in ((3.0, 10.0, 40), (-1.0, 2.0, 7), (8.0, 30.0, 120))]
    whole = mean_ci(np.concatenate(runs))
    pooled_estimate = pooled([mean_ci(run) for run in runs])
    assert pooled_estimate.n == whole.n == 167
    assert pooled_estimate.mean == pytest.approx(whole.mean, rel=1e-12)
    assert pooled_estimate.half_width == pytest.approx(whole.half_width, rel=1e-12)
    alone = pooled([whole])
    assert (alone.mean, alone.n) == (whole.mean, whole.n) and alone.half_width == pytest.approx(whole.half_width, rel=1e-15)


def test_pooled_needs_parts_of_two_values() -> None:
    with pytest.raises(ValueError, match="at least two values each"):
        pooled([])
    with pytest.raises(ValueError, match=r"counts \[5, 1\]"):
        pooled([Estimate(0.0, 1.0, 5), Estimate(1.0, 0.0, 1)])


def test_estimate_scaled_to_mbb() -> None:
    # 0.5 chips/hand ± 0.25 with a big blind of 10 chips = 50 ± 25 mbb/g
    assert Estimate(0.5, 0.25, 9).scaled(1000 / 10) == Estimate(50.0, 25.0, 9)


def test_unit_of_games() -> None:
    assert unit_of(load_game("kuhn")).name == "chips/hand"
    assert unit_of(load_game("leduc")).name == "chips/hand"
    assert unit_of(load_game("hulhe")).name == "mbb/g"
    assert unit_of(load_game("hulhe")).per_chip == 100.0  # big blind 10 chips
    assert unit_of(load_game("hunl")).per_chip == 10.0  # big blind 100 chips


@pytest.mark.parametrize("name", ["kuhn", "kuhn3p", "leduc", "leduc.limit.3p", "leduc.nolimit"])
def test_games_with_antes_report_chips(name: str) -> None:
    # leduc.nolimit posts 100 each: an ante of 100, not a big blind of 100.
    assert unit_of(load_game(name)) == Unit("chips/hand", 1.0)


@pytest.mark.parametrize("name", ["hulhe", "hunl", "holdem.limit.2p", "holdem.limit.3p", "holdem.nolimit.6p"])
def test_games_with_blinds_report_mbb(name: str) -> None:
    game = load_game(name)
    assert unit_of(game) == Unit("mbb/g", 1000 / game.big_blind)


def test_unit_formats_chips_in_its_unit() -> None:
    assert unit_of(load_game("hulhe")).format(0.0295) == "2.95 mbb/g"
    assert unit_of(load_game("leduc")).format(0.000242436412, 4) == "0.0002424 chips/hand"
