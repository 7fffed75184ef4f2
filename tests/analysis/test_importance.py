"""Imaginary observations (Johanson ch7) against exact tree values and hand-computed hands.

Unbiasedness: seeded simulated matches on Kuhn and Leduc between strategies
whose exact value the public tree gives (``profile_values``); each unbiased
estimator's mean must lie within its 95% interval of the exact value, and a
deliberately wrong weighting (weights dropped, or σ and σ̂ swapped) must fall
outside it. The seeds are fixed, so each check is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest

import strategies  # noqa: F401  (registers the built-in strategies)
from analysis.hands import Hands, concat
from analysis.importance import (
    Estimates,
    ImportanceError,
    Policy,
    estimate,
    simulate_hands,
    tree_policy,
)
from poker.cards import cards_from_text
from poker.gamedef import Game, load_game
from poker.stats import mean_ci
from strategies.base import PublicState, make_strategy
from strategies.cfr.best_response.exact import profile_values, strategy_from_policy
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.tree.public import Tree, build_tree

FloatArray = npt.NDArray[np.float64]
UNBIASED = ("basic", "early-folds", "all-cards", "all-cards+early-folds")

KUHN = load_game("kuhn.limit.2p")
LEDUC = load_game("leduc.limit.2p")


# -- helpers ------------------------------------------------------------------------------


def one_hand(game: Game, hole: tuple[str, ...], board: str, betting: str, values: tuple[float, ...]) -> Hands:
    """A one-hand table from text cards (position order)."""
    holes = np.array([cards_from_text(h) for h in hole], dtype=np.int8)
    board_cards = np.full((1, sum(game.num_board_cards)), -1, dtype=np.int8)
    shown = cards_from_text(board) if board else ()
    board_cards[0, : len(shown)] = shown
    return Hands(
        game=game,
        source="test",
        hand_id=np.zeros(1, dtype=np.int64),
        values=np.array([values], dtype=np.float64),
        names=("a", "b"),
        name_index=np.array([[0, 1]], dtype=np.int32),
        hole=holes[None],
        board=board_cards,
        betting=(betting,),
        line=np.ones(1, dtype=np.int64),
        seed=np.full(1, -1, dtype=np.int64),
    )


def table_policy(table: dict[str, list[list[float]]]) -> Callable[[PublicState], FloatArray]:
    """Kuhn policy from rows per betting string (rows Q, K, A; columns the legal actions)."""

    def policy(public: PublicState) -> FloatArray:
        rows: FloatArray = np.array(table[public.state.betting_string()], dtype=np.float64)
        return rows

    return policy


def uniform(public: PublicState) -> FloatArray:
    rows = len(public.state.game.deck())  # Kuhn: one card per holding
    return np.full((rows, len(public.actions)), 1.0 / len(public.actions))


def exact_value(tree: Tree, ours: Policy, theirs: Policy) -> float:
    """Our chips per hand, averaged over both positions (the simulation alternates seats)."""
    mine = strategy_from_policy(tree, ours)
    other = strategy_from_policy(tree, theirs)
    total = 0.0
    for position in (0, 1):
        mask = (tree.decision_player == position)[:, None, None]
        total += profile_values(tree, np.where(mask, mine, other))[position]
    return total / 2


def solved(game: Game, iterations: int) -> tuple[Tree, Callable[[PublicState], FloatArray]]:
    tree = build_tree(game)
    solver = Solver(tree, "cfr+")
    solver.run(iterations)
    return tree, tree_policy(tree, solver.average_strategy())


def smoothed(policy: Callable[[PublicState], FloatArray], weight: float = 0.1) -> Callable[[PublicState], FloatArray]:
    """``policy`` mixed with ``weight`` of uniform over the columns: full support."""

    def mixed(public: PublicState) -> FloatArray:
        rows = policy(public)
        mixed_rows: FloatArray = (1 - weight) * rows + weight / rows.shape[1]
        return mixed_rows

    return mixed


def assert_within(estimates: Estimates, exact: float, names: tuple[str, ...] = UNBIASED) -> None:
    columns = estimates.columns()
    for name in names:
        ci = mean_ci(columns[name])
        assert abs(ci.mean - exact) <= ci.half_width, f"{name}: {ci.mean:.4f} ± {ci.half_width:.4f} vs exact {exact:.4f}"


def assert_outside(values: FloatArray, exact: float, what: str) -> None:
    ci = mean_ci(values)
    assert abs(ci.mean - exact) > ci.half_width, f"{what} not caught: {ci.mean:.4f} ± {ci.half_width:.4f} vs {exact:.4f}"


# -- exact single hands (Kuhn) ----------------------------------------------------------------

# Position 1's policy after a check (columns call, raise) and after a bet (fold, call); rows Q, K, A.
KUHN_SIGMA = {
    "": [[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]],
    "c": [[2 / 3, 1 / 3], [1.0, 0.0], [1 / 3, 2 / 3]],
    "r": [[2 / 3, 1 / 3], [1 / 3, 2 / 3], [0.0, 1.0]],
    "cr": [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]],
}


def test_kuhn_all_cards_check_down_by_hand() -> None:
    # Position 1 holds A, the opponent K, "cc": we win the opponent's ante, +1.
    # Holdings the opponent's K leaves: Q (loses, -1) and A (+1). Checking back has
    # probability 2/3 with Q and 1/3 with A, so on-policy All Cards is
    # (-1 * 2/3 + 1 * 1/3) / (2/3 + 1/3) = -1/3. No fold point: Early Folds = basic.
    hand = one_hand(KUHN, ("Ks", "As"), "", "cc", (-1.0, 1.0))
    result = estimate(hand, 1, table_policy(KUHN_SIGMA))
    assert result.raw[0] == result.basic[0] == result.early_folds[0] == 1.0
    assert result.all_cards[0] == pytest.approx(-1 / 3, abs=1e-15)
    assert result.all_cards_early_folds[0] == pytest.approx(-1 / 3, abs=1e-15)
    # Off-policy from uniform play: basic = 1 * (1/3) / (1/2); All Cards divides by 1/2 + 1/2.
    off = estimate(hand, "b", table_policy(KUHN_SIGMA), uniform)
    assert off.basic[0] == pytest.approx(2 / 3, abs=1e-15)
    assert off.all_cards[0] == pytest.approx(-1 / 3, abs=1e-15)


def test_kuhn_early_folds_by_hand() -> None:
    # Position 1 holds Q, the opponent A, "rc": we lose 2. At "r" we could have folded
    # (-1) with probability 2/3: Early Folds = 2/3 * -1 + 1 * -2 = -8/3 (the observed
    # hand keeps weight 1 on-policy). All Cards over Q, K (the A is the opponent's):
    # both lose 2, so -2. All Cards + Early Folds: the fold over Q, K weighted
    # (2/3 + 1/3) / (1 + 1) = 1/2, so -1/2 - 2 = -5/2.
    hand = one_hand(KUHN, ("As", "Qs"), "", "rc", (2.0, -2.0))
    result = estimate(hand, 1, table_policy(KUHN_SIGMA))
    assert result.basic[0] == -2.0
    assert result.early_folds[0] == pytest.approx(-8 / 3, abs=1e-15)
    assert result.all_cards[0] == pytest.approx(-2.0, abs=1e-15)
    assert result.all_cards_early_folds[0] == pytest.approx(-5 / 2, abs=1e-15)
    # The same fold point when we did fold ("rf", -1): it is the observed hand itself,
    # weighted 2/3 on-policy; nothing else is added.
    folded = estimate(one_hand(KUHN, ("As", "Qs"), "", "rf", (1.0, -1.0)), 1, table_policy(KUHN_SIGMA))
    assert folded.basic[0] == -1.0
    assert folded.early_folds[0] == pytest.approx(-2 / 3, abs=1e-15)
    assert folded.all_cards_early_folds[0] == pytest.approx(-1 / 2, abs=1e-15)


def test_kuhn_partial_information_counts_hidden_cards() -> None:
    # Position 0 holds Q and bets, the opponent (K) folds: +1 whatever our cards.
    # sigma bets with Q 1/2, K 0, A 1; uniform play bets 1/2. Full information:
    # holdings Q, A: (1/2 + 1) / (1/2 + 1/2) = 3/2. Partial (the K is hidden):
    # Q, K, A: (1/2 + 0 + 1) / (3/2) = 1.
    hand = one_hand(KUHN, ("Qs", "Ks"), "", "rf", (1.0, -1.0))
    full = estimate(hand, 0, table_policy(KUHN_SIGMA), uniform)
    partial = estimate(hand, 0, table_policy(KUHN_SIGMA), uniform, information="partial")
    assert full.all_cards[0] == pytest.approx(1.5, abs=1e-15)
    assert partial.all_cards[0] == pytest.approx(1.0, abs=1e-15)
    assert partial.basic[0] == full.basic[0] == 1.0  # 1/2 / 1/2


def test_wrong_value_or_strategy_is_an_error() -> None:
    with pytest.raises(ImportanceError, match="observed value"):
        estimate(one_hand(KUHN, ("Ks", "As"), "", "cc", (1.0, -1.0)), 1, table_policy(KUHN_SIGMA))
    # ... also when the same hand was already seen with its right value (results are cached).
    right, wrong = (one_hand(KUHN, ("Ks", "As"), "", "cc", v) for v in ((-1.0, 1.0), (1.0, -1.0)))
    with pytest.raises(ImportanceError, match="observed value"):
        estimate(concat([right, wrong]), 1, table_policy(KUHN_SIGMA))
    # Under KUHN_SIGMA position 1 never bets K after a check.
    with pytest.raises(ImportanceError, match="probability 0"):
        estimate(one_hand(KUHN, ("As", "Ks"), "", "crc", (2.0, -2.0)), 1, table_policy(KUHN_SIGMA))


# -- unbiasedness against the tree ------------------------------------------------------------


@pytest.fixture(scope="module")
def leduc_cfr() -> tuple[Tree, Callable[[PublicState], FloatArray]]:
    return solved(LEDUC, 1000)


def test_leduc_on_policy_random_vs_always_call() -> None:
    tree = build_tree(LEDUC)
    ours, theirs = make_strategy("random", LEDUC, seed=1), make_strategy("always-call", LEDUC)
    exact = exact_value(tree, ours, theirs)
    hands = simulate_hands(LEDUC, [ours, theirs], 20_000, seed=11)
    result = estimate(hands, "p0", ours)
    assert np.array_equal(result.basic, result.raw)  # on-policy basic is the money itself
    assert_within(result, exact)
    # Claiming the hands were played by always-raise: it never checks, so they cannot be weighted.
    with pytest.raises(ImportanceError, match="probability 0"):
        estimate(hands, "p0", ours, make_strategy("always-raise", LEDUC))


def test_leduc_on_policy_cfr_vs_always_raise(leduc_cfr: tuple[Tree, Callable[[PublicState], FloatArray]]) -> None:
    tree, cfr = leduc_cfr
    raiser = make_strategy("always-raise", LEDUC)
    exact = exact_value(tree, cfr, raiser)
    hands = simulate_hands(LEDUC, [cfr, raiser], 20_000, seed=12)
    result = estimate(hands, "p0", cfr)
    assert_within(result, exact)
    assert mean_ci(result.all_cards).half_width < mean_ci(result.raw).half_width
    # Wrong: All Cards with the weights dropped (every holding counted alike, as a
    # card-blind strategy would weight them) misses the betting's information.
    blind = make_strategy("random", LEDUC)
    dropped = estimate(hands, "p0", blind)
    assert_outside(dropped.all_cards, exact, "All Cards without weights")
    assert_outside(dropped.all_cards_early_folds, exact, "All Cards + Early Folds without weights")


def test_leduc_off_policy_cfr_from_random_play(leduc_cfr: tuple[Tree, Callable[[PublicState], FloatArray]]) -> None:
    tree, cfr = leduc_cfr
    sigma = smoothed(cfr)  # full support, so that the swapped ratio below is defined
    played = make_strategy("random", LEDUC, seed=2)
    opponent = make_strategy("always-raise", LEDUC)
    exact = exact_value(tree, sigma, opponent)
    hands = simulate_hands(LEDUC, [played, opponent], 20_000, seed=13)
    result = estimate(hands, "p0", sigma, played)
    assert_within(result, exact)
    # Wrong: the weight dropped (the raw money is random's value, not sigma's) ...
    assert_outside(result.raw, exact, "dropped weight (raw money)")
    # ... or sigma and sigma-hat swapped in the ratio.
    swapped = estimate(hands, "p0", played, sigma)
    for name in UNBIASED:
        assert_outside(swapped.columns()[name], exact, f"{name} with sigma and sigma-hat swapped")


def test_kuhn_on_and_off_policy() -> None:
    tree, cfr = solved(KUHN, 500)
    sigma = smoothed(cfr)
    played = make_strategy("random", KUHN, seed=3)
    opponent = make_strategy("always-raise", KUHN)
    exact_on = exact_value(tree, sigma, opponent)
    on = estimate(simulate_hands(KUHN, [sigma, opponent], 10_000, seed=14), "p0", sigma)
    assert_within(on, exact_on)
    off_hands = simulate_hands(KUHN, [played, opponent], 10_000, seed=15)
    off = estimate(off_hands, "p0", sigma, played)
    assert_within(off, exact_on)
    assert_outside(off.raw, exact_on, "dropped weight (raw money)")
    assert_outside(estimate(off_hands, "p0", played, sigma).all_cards, exact_on, "All Cards swapped")


def test_partial_information(leduc_cfr: tuple[Tree, Callable[[PublicState], FloatArray]]) -> None:
    _, cfr = leduc_cfr
    opponent = make_strategy("random", LEDUC, seed=4)
    hands = simulate_hands(LEDUC, [cfr, opponent], 2_000, seed=16)
    full = estimate(hands, "p0", cfr)
    partial = estimate(hands, "p0", cfr, information="partial")
    # On-policy, basic, Early Folds and All Cards do not need the hidden cards.
    for name in ("basic", "early-folds"):
        assert np.array_equal(full.columns()[name], partial.columns()[name])
    np.testing.assert_allclose(partial.all_cards, full.all_cards, rtol=0, atol=1e-12)
    # All Cards + Early Folds counts impossible holdings at the fold points: it differs.
    assert not np.allclose(partial.all_cards_early_folds, full.all_cards_early_folds)


def test_duplicate_seatings_share_the_cards() -> None:
    a, b = make_strategy("random", LEDUC, seed=5), make_strategy("always-call", LEDUC)
    first = simulate_hands(LEDUC, [a, b], 50, seed=17, names=("a", "b"))
    second = simulate_hands(LEDUC, [b, a], 50, seed=17, names=("b", "a"))
    assert np.array_equal(first.hole, second.hole)
    assert np.array_equal(first.name_index, second.name_index)  # seat k at position (k + hand) % 2
    assert [first.names_at(h) for h in range(3)] == [("a", "b"), ("b", "a"), ("a", "b")]
    assert Fraction(float(first.values.sum())) == 0
