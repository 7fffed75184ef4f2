"""Action translation: the pseudo-harmonic mapping's formula, its randomisation,
re-derivation of the abstract betting, own raises to real sizes, divergence."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from poker.gamedef import load_game
from poker.protocol import parse_betting
from poker.state import CALL, Action, State
from strategies.cfr.tree.public import BettingAbstraction, tree_actions
from strategies.translation import (
    map_probabilities,
    map_raise,
    pot_fraction,
    pseudo_harmonic,
    real_raise,
    translate,
    translation_draw,
)

NL = load_game("leduc.nolimit")  # stacks 1200, antes 100: the pot at the start is 200
POT_ALL_IN = BettingAbstraction((1.0,), True)
HALF_POT_ALL_IN = BettingAbstraction((0.5, 1.0), True)


def exact_f(a: Fraction, b: Fraction, x: Fraction) -> Fraction:
    return ((b - x) * (1 + a)) / ((b - a) * (1 + x))


@pytest.mark.parametrize(("a", "b"), [(0.0, 1.0), (0.5, 1.0), (1.0, 2.0), (0.25, 5.0), (1.0, 11.0)])
def test_formula_at_the_abstract_sizes(a: float, b: float) -> None:
    assert pseudo_harmonic(a, b, a) == 1.0
    assert pseudo_harmonic(a, b, b) == 0.0
    assert pseudo_harmonic(a, b, a / 2) == 1.0  # below A: always A
    assert pseudo_harmonic(a, b, b * 2) == 0.0  # above B: always B


@pytest.mark.parametrize(
    ("a", "b", "x", "expected"),
    [
        (0.5, 1.0, 0.75, Fraction(3, 7)),  # (0.25 * 1.5) / (0.5 * 1.75)
        (1.0, 2.0, 1.5, Fraction(2, 5)),  # (0.5 * 2) / (1 * 2.5)
        (0.0, 1.0, 0.5, Fraction(1, 3)),  # (0.5 * 1) / (1 * 1.5)
        (0.5, 1.0, 0.6, Fraction(3, 4)),  # (0.4 * 1.5) / (0.5 * 1.6)
        (1.0, 5.0, 3.0, Fraction(1, 4)),  # (2 * 2) / (4 * 4)
    ],
)
def test_formula_between_the_sizes(a: float, b: float, x: float, expected: Fraction) -> None:
    assert exact_f(Fraction(str(a)), Fraction(str(b)), Fraction(str(x))) == expected
    assert pseudo_harmonic(a, b, x) == pytest.approx(float(expected), rel=1e-15, abs=0)


def test_formula_is_monotone_and_harmonic() -> None:
    a, b = 0.5, 2.0
    xs = np.linspace(a, b, 301)
    values = [pseudo_harmonic(a, b, float(x)) for x in xs]
    assert all(v2 < v1 for v1, v2 in zip(values, values[1:], strict=False))
    # The mapping is scale-invariant in the sense of the paper: f(x) = 1/2 at
    # x* = (A + B + 2AB) / (A + B + 2), where the two exploitabilities balance.
    x_half = (a + b + 2 * a * b) / (a + b + 2)
    assert pseudo_harmonic(a, b, x_half) == pytest.approx(0.5, abs=1e-15)
    with pytest.raises(ValueError):
        pseudo_harmonic(1.0, 1.0, 1.0)


def test_map_probabilities() -> None:
    sizes = [0.5, 1.0, 2.0]
    assert map_probabilities(0.2, sizes) == [(0, 1.0)]
    assert map_probabilities(0.5, sizes) == [(0, 1.0)]
    assert map_probabilities(1.0, sizes) == [(1, 1.0)]
    assert map_probabilities(2.0, sizes) == [(2, 1.0)]
    assert map_probabilities(9.0, sizes) == [(2, 1.0)]
    [(i, p), (j, q)] = map_probabilities(1.5, sizes)
    assert (i, j) == (1, 2) and p == pytest.approx(0.4) and p + q == 1.0
    assert map_raise(1.5, sizes, 0.39) == 1 and map_raise(1.5, sizes, 0.41) == 2
    assert map_raise(1.0, sizes, 0.999) == 1


def test_draws_are_uniform_and_repeatable() -> None:
    draws = np.array([translation_draw(7, hand, "r250") for hand in range(20000)])
    assert draws.min() >= 0 and draws.max() < 1
    assert abs(draws.mean() - 0.5) < 4 * math.sqrt(1 / 12 / len(draws))
    assert translation_draw(7, 3, "r250") == translation_draw(7, 3, "r250")
    assert translation_draw(7, 3, "r250") != translation_draw(8, 3, "r250")
    assert translation_draw(7, 3, "r250") != translation_draw(7, 3, "r251")


@pytest.mark.parametrize("x", [0.6, 0.75, 0.9])
def test_randomisation_frequency_over_seeds(x: float) -> None:
    """Over many seeds the mapping picks A with frequency f(x) (4 sigma)."""
    a, b = 0.5, 1.0
    f = pseudo_harmonic(a, b, x)
    n = 20000
    hits = sum(map_raise(x, [a, b], translation_draw(seed, 1, "r")) == 0 for seed in range(n))
    assert abs(hits / n - f) < 4 * math.sqrt(f * (1 - f) / n)


def raise_to_fraction(state: State, x: float) -> int:
    return state.max_spent + round(x * (sum(state.spent) + state.amount_to_call()))


def test_translate_an_off_tree_opening_bet() -> None:
    """Position 0 opens for 0.75 pot (150 into 200: raise to 250) in no-limit Leduc
    with abstract raises at 0.5 pot (to 200) and pot (to 300): the enumerated paths
    carry f(0.75) and 1 - f(0.75); the drawn path over many hands picks each that often."""
    real = parse_betting("r250", NL)
    assert pot_fraction(State(NL), 250) == 0.75
    paths = translate(real, HALF_POT_ALL_IN, player=1)
    assert [p.abstract.betting_string() for p in paths if p.abstract] == ["r200", "r300"]
    f = pseudo_harmonic(0.5, 1.0, 0.75)
    assert [p.probability for p in paths] == pytest.approx([f, 1 - f], abs=1e-15)
    n = 4000
    picked = [
        translate(real, HALF_POT_ALL_IN, player=1, draw=lambda b, h=h: translation_draw(5, h, b))[0] for h in range(n)
    ]
    low = sum(p.abstract is not None and p.abstract.betting_string() == "r200" for p in picked)
    assert abs(low / n - f) < 4 * math.sqrt(f * (1 - f) / n)


def test_on_tree_betting_is_itself() -> None:
    for betting in ["", "c", "r300", "r300c/", "r300c/r900", "cr1200", "r200r600c/"]:
        real = parse_betting(betting, NL)
        abstraction = HALF_POT_ALL_IN
        (path,) = translate(real, abstraction, player=real.current_player())
        assert path.abstract is not None and path.abstract.betting_string() == betting


def test_all_in_maps_to_all_in_and_extremes_to_the_ends() -> None:
    (path,) = translate(parse_betting("r1200", NL), POT_ALL_IN, player=1)
    assert path.abstract is not None and path.abstract.betting_string() == "r1200"
    # min raise + 1 (0.505 pot) is below the smallest abstract raise, 0.75 pot (to 250)
    (path,) = translate(parse_betting("r201", NL), BettingAbstraction((0.75, 1.0), True), player=1)
    assert path.abstract is not None and path.abstract.betting_string() == "r250"
    # to 1100 is 5 pots: between pot (to 300) and all-in (to 1200, 5.5 pots)
    f = pseudo_harmonic(1.0, 5.5, 5.0)
    paths = translate(parse_betting("r1100", NL), POT_ALL_IN, player=1)
    assert [p.probability for p in paths] == pytest.approx([f, 1 - f])


def test_rederivation_is_consistent_within_a_hand() -> None:
    """The abstract betting at a later decision extends the one of an earlier
    decision of the same hand: the same real raise maps the same way."""
    for hand in range(200):
        draw = lambda b, hand=hand: translation_draw(11, hand, b)  # noqa: E731
        early = translate(parse_betting("r250", NL), HALF_POT_ALL_IN, player=1, draw=draw)[0].abstract
        late = translate(parse_betting("r250c/r400", NL), HALF_POT_ALL_IN, player=1, draw=draw)[0].abstract
        assert early is not None and late is not None
        assert late.betting_string().startswith(early.betting_string() + "c/")


def test_own_raises_read_back_exactly() -> None:
    """Our abstract half-pot raise after the opponent's off-tree bet becomes a real
    size; reading the real betting back gives the same abstract action."""
    real = parse_betting("r250", NL)
    (path,) = translate(real, HALF_POT_ALL_IN, player=1, draw=lambda b: 0.0)  # 0.75 pot -> half pot (r200)
    abstract = path.abstract
    assert abstract is not None and abstract.betting_string() == "r200"
    raises = [a for a in tree_actions(abstract, HALF_POT_ALL_IN) if a.size]
    for action in raises:
        mine = real_raise(abstract, action, real)
        assert real.is_legal(mine)
        again = translate(real.apply(mine), HALF_POT_ALL_IN, player=1, draw=lambda b: 0.0)
        assert [p.abstract.betting_string() for p in again if p.abstract] == [abstract.apply(action).betting_string()]
        assert again[0].steps[-1].indices[0] == tree_actions(abstract, HALF_POT_ALL_IN).index(action)


def test_real_raise_sizes() -> None:
    start = State(NL)
    for action in tree_actions(start, HALF_POT_ALL_IN):
        if action.size:
            assert real_raise(start, action, start) == action  # on the tree: the same size
    abstract = parse_betting("r300", NL)  # we face a pot bet in the abstract game ...
    real = parse_betting("r280", NL)  # ... and 0.9 pot in the real one
    pot_raise = Action.raise_to(900)  # abstract: 300 + 1.0 * (600 + 0)... pot after call = 600
    assert pot_raise in tree_actions(abstract, POT_ALL_IN)
    # real pot after calling: 280 + 280 = 560 -> raise to 280 + 560 = 840
    assert real_raise(abstract, pot_raise, real) == Action.raise_to(840)
    assert real_raise(abstract, Action.raise_to(1200), real) == Action.raise_to(1200)
    # The real minimum raise is larger than the translated size: clamped up to it.
    small = parse_betting("r200", NL)
    assert real_raise(small, Action.raise_to(300), parse_betting("r1000", NL)) == Action.raise_to(1200)
    assert real_raise(abstract, pot_raise, parse_betting("r1200", NL)) == CALL  # no raise left


def test_divergence_falls_back() -> None:
    """Real r1100 maps (u = 0.99) to the abstract all-in; our abstract call ends
    the abstract hand while the real one goes on: the path is diverged, and
    possible only while we keep calling."""
    draw = lambda b: 0.99  # noqa: E731
    (path,) = translate(parse_betting("r1100c/", NL), POT_ALL_IN, player=1, draw=draw)
    assert path.abstract is None and path.possible
    (path,) = translate(parse_betting("r1100c/r1200", NL), POT_ALL_IN, player=1, draw=draw)
    assert path.abstract is None and path.possible
    (path,) = translate(parse_betting("r1100c/c", NL), POT_ALL_IN, player=0, draw=draw)
    assert path.abstract is None and path.possible
    (path,) = translate(parse_betting("r1100c/r1200", NL), POT_ALL_IN, player=0, draw=draw)
    assert not path.possible  # player 0 raised where the fallback calls
