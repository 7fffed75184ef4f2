"""AIVAT (Burch et al. 2018) against exact public-tree values.

Exact: on Kuhn, with the value function equal to the true profile value and an
opponent that plays the assumed (deterministic, or known) policy, every hand's
AIVAT value is the profile's value for its position. Unbiasedness: seeded
Leduc matches; the AIVAT mean lies within its 95% interval of the exact value,
and deliberately wrong corrections (no expectation subtracted at chance, the
opponent's decisions corrected with the wrong policy, a value function fitted
to the hand in hindsight) fall outside it. The seeds are fixed, so each check
is deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest

import strategies  # noqa: F401  (registers the built-in strategies)
from analysis.aivat import AivatError, EquityValues, TreeValues, aivat
from analysis.importance import Policy, positions_of, simulate_hands, tree_policy
from poker.cards import cards_from_text
from poker.deal import Dealer, private_hands as private_hands_of
from poker.evaluate import hand_vs_range_equity
from poker.gamedef import Game, load_game
from poker.state import CALL, Action, ActionType, State
from poker.stats import mean_ci
from strategies.base import PublicState, make_strategy
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.tree.public import Tree, build_tree

FloatArray = npt.NDArray[np.float64]
KUHN = load_game("kuhn.limit.2p")
LEDUC = load_game("leduc.limit.2p")


@cache
def solved(game: Game, iterations: int) -> tuple[Tree, Callable[[PublicState], FloatArray]]:
    tree = build_tree(game)
    solver = Solver(tree, "cfr+")
    solver.run(iterations)
    return tree, tree_policy(tree, solver.average_strategy())


def bot(name: str, game: Game) -> Policy:
    return make_strategy(name, game, seed=1)


def true_value(tree: Tree, ours: Policy, theirs: Policy) -> float:
    """Our chips per hand over both positions (the simulation alternates seats)."""
    exact = TreeValues(tree, ours, theirs).exact
    return (exact[0] + exact[1]) / 2


def assert_within(values: FloatArray, exact: float) -> None:
    ci = mean_ci(values)
    assert abs(ci.mean - exact) <= ci.half_width, f"{ci.mean:.4f} ± {ci.half_width:.4f} vs exact {exact:.4f}"


def assert_outside(values: FloatArray, exact: float, what: str) -> None:
    ci = mean_ci(values)
    assert abs(ci.mean - exact) > ci.half_width, f"{what} not caught: {ci.mean:.4f} ± {ci.half_width:.4f} vs {exact:.4f}"


# -- exact (Kuhn) -------------------------------------------------------------------------


@pytest.mark.parametrize("opponent", ["always-raise", "always-call"])
def test_kuhn_true_values_and_deterministic_opponent_give_the_exact_value_every_hand(opponent: str) -> None:
    tree, equilibrium = solved(KUHN, 500)
    chump = bot(opponent, KUHN)
    values = TreeValues(tree, equilibrium, chump)
    hands = simulate_hands(KUHN, [equilibrium, chump], 400, seed=3, names=("eq", "chump"))
    result = aivat(hands, "eq", equilibrium, values)
    expected = np.array(values.exact)[positions_of(hands, "eq")]
    np.testing.assert_allclose(result.estimate, expected, atol=1e-9)
    assert np.std(result.raw) > 1.0  # the money itself is noisy


def test_kuhn_known_stochastic_opponent_gives_the_exact_value_every_hand() -> None:
    tree, equilibrium = solved(KUHN, 500)
    chump = bot("random", KUHN)
    values = TreeValues(tree, equilibrium, chump)
    hands = simulate_hands(KUHN, [equilibrium, chump], 400, seed=4, names=("eq", "chump"))
    known = aivat(hands, "eq", equilibrium, values, opponent=chump)
    np.testing.assert_allclose(known.estimate, np.array(values.exact)[positions_of(hands, "eq")], atol=1e-9)
    unknown = aivat(hands, "eq", equilibrium, values)  # its decisions are not corrected: some variance is left
    assert 0.05 < np.std(unknown.estimate) < np.std(unknown.raw)


def test_kuhn_known_card_aware_opponent_gives_the_exact_value_every_hand() -> None:
    # `random` plays alike whatever it holds, so a correction that reads the wrong
    # row of the known policy (or averages its rows) goes unseen with it. A rough
    # CFR+ solution bets and calls by its card, and not always the same way:
    # each correction must use the row of the card the opponent actually held.
    tree, equilibrium = solved(KUHN, 500)
    _, rough = solved(KUHN, 20)
    opening = np.asarray(rough(PublicState(State(KUHN), (), (CALL, Action(ActionType.RAISE)))))
    assert not np.allclose(opening, opening[0]) and ((opening > 0.01) & (opening < 0.99)).any()
    values = TreeValues(tree, equilibrium, rough)
    hands = simulate_hands(KUHN, [equilibrium, rough], 400, seed=4, names=("eq", "rough"))
    known = aivat(hands, "eq", equilibrium, values, opponent=rough)
    np.testing.assert_allclose(known.estimate, np.array(values.exact)[positions_of(hands, "eq")], atol=1e-9)
    assert np.abs(known.opponent).max() > 0.1  # its decisions were corrected, not left alone


def test_kuhn_single_hand_by_hand() -> None:
    """σ = uniform random in position 0 vs always-call (values exact for that
    profile), hand Q vs K, betting ``cc``: the value is -1 for Q; hand-computed
    corrections: the deal, our check, no board."""
    tree = build_tree(KUHN)
    sigma, chump = bot("random", KUHN), bot("always-call", KUHN)
    values = TreeValues(tree, sigma, chump)
    hands = simulate_hands(KUHN, [sigma, chump], 200, seed=9, names=("r", "c"), rotate=False)
    row = next(i for i, b in enumerate(hands.betting) if b == "cc" and hands.hole[i].tolist() == [[43], [47]])
    result = aivat(hands.take(np.array([row])), "r", sigma, values)
    # Opponent K (47); our range {Q, A}. After a check: showdown (+1 with A, -1 with Q) -> 0.
    # After a bet: always-call calls: +2 with A, -2 with Q -> 0. So V(root | K) = 0 and our check's correction is 0.
    # Over the opponent's holdings: V(root | Q) = (1 + 2) / 2 averaged over our check/bet = 1.5,
    # V(root | A) = -1.5, so the deal's expectation is 0 and its correction 0 - 0.
    assert result.value[0] == pytest.approx(0.0)  # the showdown over our range {Q: -1, A: +1}
    assert result.chance[0] == pytest.approx(0.0)
    assert result.decisions[0] == pytest.approx(0.0)
    assert result.estimate[0] == pytest.approx(values.exact[0]) == pytest.approx(0.0)
    assert result.raw[0] == -1.0


# -- unbiasedness (Leduc) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs", "model", "seed"),
    [("equilibrium", "always-raise", "equilibrium", 5), ("random", "always-call", "equilibrium", 10)],
)
def test_leduc_mean_lies_within_its_interval_of_the_exact_value(ours: str, theirs: str, model: str, seed: int) -> None:
    tree, equilibrium = solved(LEDUC, 300)

    def pick(name: str) -> Policy:
        return equilibrium if name == "equilibrium" else bot(name, LEDUC)

    sigma, opponent = pick(ours), pick(theirs)
    hands = simulate_hands(LEDUC, [sigma, opponent], 3000, seed=seed, names=("us", "them"))
    result = aivat(hands, "us", sigma, TreeValues(tree, sigma, pick(model)))  # a model, not the real opponent
    exact = true_value(tree, sigma, opponent)
    assert_within(result.estimate, exact)
    assert np.std(result.estimate) < np.std(result.raw)


def test_leduc_known_opponent_policy_is_unbiased() -> None:
    tree, equilibrium = solved(LEDUC, 300)
    chump = bot("random", LEDUC)
    hands = simulate_hands(LEDUC, [equilibrium, chump], 3000, seed=6, names=("us", "them"))
    result = aivat(hands, "us", equilibrium, TreeValues(tree, equilibrium, equilibrium), opponent=chump)
    assert_within(result.estimate, true_value(tree, equilibrium, chump))


def test_leduc_wrong_corrections_are_caught() -> None:
    tree, equilibrium = solved(LEDUC, 300)
    chump = bot("always-raise", LEDUC)
    values = TreeValues(tree, equilibrium, equilibrium)
    hands = simulate_hands(LEDUC, [equilibrium, chump], 3000, seed=5, names=("us", "them"))
    exact = true_value(tree, equilibrium, chump)
    result = aivat(hands, "us", equilibrium, values)
    assert_within(result.estimate, exact)
    # Chance: the value after each deal subtracted without its expectation.
    assert_outside(result.value - result.chance - result.chance_baseline - result.decisions, exact, "no chance baseline")
    # The opponent's decisions corrected with the equilibrium's weights: it plays always-raise.
    assert_outside(aivat(hands, "us", equilibrium, values, opponent=equilibrium).estimate, exact, "wrong opponent")
    # A value function changed using the data: each hand's own result on its own path, in hindsight.
    positions = positions_of(hands, "us")
    leaky = []
    for i in range(1500):
        betting, outcome = hands.betting[i], float(hands.values[i, positions[i]])

        def hindsight(
            position: int, state: State, board: tuple[int, ...], theirs: int, betting: str = betting, outcome: float = outcome
        ) -> FloatArray:
            base = values(position, state, board, theirs)
            seen = state.betting_string()
            return np.full_like(base, outcome) if seen and betting.startswith(seen) else base

        leaky.append(aivat(hands.take(np.array([i])), "us", equilibrium, hindsight).estimate[0])
    assert_outside(np.array(leaky), exact, "value function fitted to the data")


def test_hands_sigma_cannot_play_are_refused() -> None:
    tree = build_tree(KUHN)
    raiser, caller = bot("always-raise", KUHN), bot("always-call", KUHN)
    hands = simulate_hands(KUHN, [raiser, caller], 5, seed=1, names=("a", "b"))
    with pytest.raises(AivatError, match="probability 0"):
        aivat(hands, "a", caller, TreeValues(tree, caller, caller))


# -- the equity value function (hold'em) ------------------------------------------------

HULHE = load_game("holdem.limit.2p.reverse_blinds")


def enumerated_deal(values: EquityValues, position: int, state: State, seen: tuple[int, ...], reach: FloatArray, o: int) -> float:
    """The expectation of V̄ after the next deal by listing every deal (what the
    estimator does without ``expected_deal``)."""
    game = values.game
    holdings = values.holdings
    theirs = {int(c) for c in holdings[o]}
    count = game.num_board_cards[state.round]
    total, weight = 0.0, 0.0
    for cards in itertools.combinations(sorted(set(game.deck()) - set(seen) - theirs), count):
        fits = np.array([reach[i] if not set(map(int, h)) & set(cards) else 0.0 for i, h in enumerate(holdings)])
        total += float(fits @ values(position, state, seen + cards, o))
        weight += float(fits.sum())
    return total / weight


def test_equity_values_expected_deal_is_the_enumerated_expectation() -> None:
    """Hold'em turn and river deals (and Leduc's board card): ``V̄`` before the
    deal equals the average of ``V̄`` over every deal, for a range that is not
    uniform; exact, so a wrong pot, a wrong equity or missing card removal fails."""
    rng = np.random.default_rng(4)
    for game, rounds in ((HULHE, (2, 3)), (LEDUC, (1,))):
        checked: list[int] = []
        values = EquityValues(game)
        state = State(game)
        deal = Dealer(game, seed=9).next_hand()
        o = [tuple(int(c) for c in h) for h in values.holdings].index(tuple(sorted(deal.hole[1])))
        while state.round < rounds[-1]:
            before = state.round
            state = state.apply(state.legal_actions()[-1] if state.can_raise() and state.round == 0 else CALL)
            if state.round != before and state.round in rounds:
                seen = tuple(deal.board[: game.total_board_cards(before)])
                clash = np.array([bool(set(map(int, h)) & (set(seen) | set(deal.hole[1]))) for h in values.holdings])
                reach = np.where(clash, 0.0, rng.random(len(values.holdings)))
                exact = enumerated_deal(values, 0, state, seen, reach, o)
                assert values.expected_deal(0, state, seen, reach, o) == pytest.approx(exact, abs=1e-9)
                checked.append(state.round)
        assert checked == list(rounds)


def test_equity_values_agree_with_poker_evaluate() -> None:
    values = EquityValues(HULHE)
    assert values.exact_from == 3 and values.first_round == 0  # pre-flop: sampled
    assert EquityValues(HULHE, samples=0).first_round == 1  # pre-flop: left uncorrected
    board = cards_from_text("Ah7c2d")
    rows = [tuple(int(c) for c in h) for h in values.holdings]
    ours, theirs = rows.index(tuple(sorted(cards_from_text("KhKd")))), rows.index(tuple(sorted(cards_from_text("AsTs"))))
    weights = np.zeros(len(rows))
    weights[theirs] = 1.0
    expected = hand_vs_range_equity(cards_from_text("KhKd"), weights, board, deck=sorted(HULHE.deck()), final_board_size=5)
    assert values.equity(board, theirs)[ours] == pytest.approx(expected.value, abs=1e-12)


def test_sampled_preflop_equity_is_unbiased() -> None:
    """Pre-flop the equity is sampled (``samples`` boards) and divided by the
    expected count of boards a holding misses: over independent draws its mean
    is the exact equity (KhKd against AsTs, every run-out enumerated)."""
    rows = [tuple(int(c) for c in h) for h in private_hands_of(HULHE)]
    ours, theirs = rows.index(tuple(sorted(cards_from_text("KhKd")))), rows.index(tuple(sorted(cards_from_text("AsTs"))))
    weights = np.zeros(len(rows))
    weights[theirs] = 1.0
    exact = hand_vs_range_equity(cards_from_text("KhKd"), weights, (), deck=sorted(HULHE.deck()), final_board_size=5)
    draws = np.array([EquityValues(HULHE, samples=300, seed=s).equity((), theirs)[ours] for s in range(40)])
    assert abs(draws.mean() - exact.value) < 3 * draws.std(ddof=1) / np.sqrt(draws.size)
    assert draws.std() > 0.005  # they are samples


@pytest.mark.parametrize(
    ("game", "samples", "ratio"),
    [(HULHE, 0, 2.0), (HULHE, 500, 8.0), (load_game("holdem.nolimit.2p.reverse_blinds"), 500, 8.0)],
    ids=["hulhe-from-the-flop", "hulhe", "hunl"],
)
def test_holdem_always_call_against_itself_is_unbiased_with_less_variance(game: Game, samples: int, ratio: float) -> None:
    """Both check every hand down: each seat's value is exactly 0 by symmetry.
    AIVAT with the equity value function keeps the mean within its interval of
    0 and cuts the std-dev by ``ratio``: more than 2x with corrections from the
    flop on (``samples=0``), more than 8x with the pre-flop sampled, in limit
    and no-limit."""
    call = bot("always-call", game)
    hands = simulate_hands(game, [call, call], 150 if game.is_limit else 100, seed=1, names=("a", "b"))
    result = aivat(hands, "a", call, EquityValues(game, samples=samples, seed=2))
    assert_within(result.estimate, 0.0)
    assert np.std(result.estimate) < np.std(result.raw) / ratio
    np.testing.assert_allclose(result.decisions, 0.0, atol=1e-12)  # always-call never chooses


def test_an_all_in_run_out_leaves_our_range_as_every_board_card_does() -> None:
    """No-limit Leduc, every hand a pre-flop all-in called (always-raise:size=max
    against always-call): the board card comes after the last action, yet our
    imaginary holdings must still avoid it. AIVAT's value of each hand is the
    mean payoff over the holdings that share no card with the opponent's or the
    board (a brute-force oracle from the rules); before the fix a holding of
    the board card itself counted, and paired it."""
    from poker.evaluate import rank_hands
    from strategies.imaginary import replay_hand

    game = load_game("leduc.nolimit")
    ours, theirs = make_strategy("always-raise:size=max", game, seed=1), make_strategy("always-call", game, seed=1)
    hands = simulate_hands(game, [ours, theirs], 60, seed=3, names=("us", "them"), rotate=False)
    terms = aivat(hands, "us", ours, EquityValues(game))
    holdings = [tuple(int(c) for c in h) for h in private_hands_of(game)]
    for row in range(len(hands)):
        betting = hands.betting[row]
        assert betting == "r1200c/", betting  # shoved and called before the board card
        board = tuple(int(c) for c in hands.board[row] if c >= 0)
        opponent = tuple(int(c) for c in hands.hole[row][1])
        final = replay_hand(game, betting).final
        their_rank = int(rank_hands(np.array([opponent + board], dtype=np.int8))[0])
        payoffs = [
            float(final.values([int(rank_hands(np.array([h + board], dtype=np.int8))[0]), their_rank])[0])
            for h in holdings
            if not set(h) & set(opponent + board)
        ]
        assert terms.value[row] == pytest.approx(np.mean(payoffs), abs=1e-9)


def test_an_all_in_run_out_is_a_chance_event_whose_luck_aivat_removes() -> None:
    """The same pre-flop all-ins in no-limit Leduc: AIVAT's chance corrections
    now include the board card dealt after the last action, so with the exact
    equity value function the estimate (without decision corrections) is the
    same for every hand in which the opponent held the same cards, whatever
    the board: none of the run-out's luck is left. Without that correction the
    imaginary-observation values still vary with the board."""
    game = load_game("leduc.nolimit")
    ours, theirs = make_strategy("always-raise:size=max", game, seed=1), make_strategy("always-call", game, seed=1)
    hands = simulate_hands(game, [ours, theirs], 60, seed=3, names=("us", "them"), rotate=False)
    terms = aivat(hands, "us", ours, EquityValues(game))
    estimate = terms.value - terms.chance
    opponents = [tuple(int(c) for c in hands.hole[row][1]) for row in range(len(hands))]
    luck = []
    for held in set(opponents):
        rows = [row for row, o in enumerate(opponents) if o == held]
        assert len({int(hands.board[row][0]) for row in rows}) > 1  # several boards came for this holding
        np.testing.assert_allclose(estimate[rows], estimate[rows[0]], atol=1e-9)
        luck.append(np.ptp(terms.value[rows]))
    assert max(luck) > 100.0  # the board's luck, before the correction
