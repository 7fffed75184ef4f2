"""CFR and CFR+ against exact game values, OpenSpiel's trajectories and a per-history reference."""

from __future__ import annotations

import numpy as np
import pytest

from poker.gamedef import load_game
from strategies.cfr.best_response.exact import best_response, exploitability, profile_values
from strategies.cfr.solvers.solver import Algorithm, Restriction, Solver, SolverError, uniform_strategy
from strategies.cfr.tree.public import Tree, build_tree, zero_sum_payoff

KUHN = build_tree(load_game("kuhn"))
LEDUC = build_tree(load_game("leduc"))


def test_solver_kuhn_cfr_plus_value_is_minus_one_eighteenth() -> None:
    # -1/18 is the value of Kuhn poker for the first player
    # (https://en.wikipedia.org/wiki/Kuhn_poker); OpenSpiel's cfr_test uses atol 1e-3.
    solver = Solver(KUHN, Algorithm.CFR_PLUS)
    solver.run(1000)
    average = solver.average_strategy()
    assert profile_values(KUHN, average)[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert exploitability(KUHN, average) < 1e-4  # measured 8.74e-5 chips/hand


def test_solver_leduc_cfr_plus_game_value() -> None:
    # Leduc value for the first player, -0.085606424078 (OpenSpiel cfr_test, from
    # sequence-form LP). 5000 CFR+ iterations get within 4e-7 (measured).
    solver = Solver(LEDUC, Algorithm.CFR_PLUS)
    solver.run(5000)
    assert profile_values(LEDUC, solver.average_strategy())[0] == pytest.approx(-0.085606424078, abs=1e-6)


def test_solver_leduc_cfr_matches_openspiel_trajectory() -> None:
    # Vanilla CFR with alternating updates and uniform averaging, as OpenSpiel's
    # CFRSolver (C++ and Python). Measured with open_spiel 2.0.2 on leduc_poker:
    # exploitability of the average policy 0.09571635300459762 after 100 iterations
    # (both implementations; the 0.0939 quoted in issue 4 is not what it gives) and
    # 0.0118 after 1000 (OpenSpiel's published figure, which we match: 0.0118178).
    solver = Solver(LEDUC, Algorithm.CFR)
    solver.run(100)
    assert exploitability(LEDUC, solver.average_strategy()) == pytest.approx(0.09571635300459762, abs=1e-9)
    solver.run(900)
    assert exploitability(LEDUC, solver.average_strategy()) == pytest.approx(0.0118, abs=5e-5)


def test_solver_leduc_cfr_plus_matches_openspiel() -> None:
    # open_spiel 2.0.2 CFRPlusSolver (RM+, alternating, linear averaging, no delay)
    # on leduc_poker: 0.013415994970897835 after 100 iterations.
    solver = Solver(LEDUC, Algorithm.CFR_PLUS)
    solver.run(100)
    assert exploitability(LEDUC, solver.average_strategy()) == pytest.approx(0.013415994970897835, abs=1e-9)


@pytest.mark.parametrize("tree", [KUHN, LEDUC], ids=["kuhn", "leduc"])
@pytest.mark.parametrize(
    ("algorithm", "alternating"),
    [(Algorithm.CFR, True), (Algorithm.CFR, False), (Algorithm.CFR_PLUS, True)],
)
def test_solver_three_iterations_equal_the_per_history_reference(tree, algorithm, alternating, reference_cfr) -> None:  # type: ignore[no-untyped-def]
    plus = algorithm is Algorithm.CFR_PLUS
    solver = Solver(tree, algorithm, alternating=alternating)
    reference = reference_cfr(tree, plus=plus, alternating=alternating, linear=plus)
    solver.run(3)
    reference.run(3)
    current, average = reference.arrays()
    valid = tree.board_mask[tree.board_index[tree.decision_nodes]] > 0  # [D, H]: hands that fit the board
    for mine, theirs in ((solver.current_strategy(), current), (solver.average_strategy(), average)):
        assert np.allclose(mine.transpose(0, 2, 1)[valid], theirs.transpose(0, 2, 1)[valid], rtol=0, atol=1e-12)


def test_solver_simultaneous_updates_differ_from_alternating() -> None:
    alternating = Solver(LEDUC, Algorithm.CFR)
    simultaneous = Solver(LEDUC, Algorithm.CFR, alternating=False)
    alternating.run(2)
    simultaneous.run(2)
    assert not np.allclose(alternating.average_strategy(), simultaneous.average_strategy())


def test_solver_explicit_zero_sum_payoff_changes_nothing() -> None:
    plain = Solver(LEDUC)
    explicit = Solver(LEDUC, payoff=zero_sum_payoff(LEDUC))
    scaled = Solver(LEDUC, payoff=3.0 * zero_sum_payoff(LEDUC))  # regret matching is scale-free
    for solver in (plain, explicit, scaled):
        solver.run(20)
    assert np.array_equal(plain.cumulative, explicit.cumulative)
    assert np.allclose(plain.average_strategy(), scaled.average_strategy(), atol=1e-12)


def test_solver_tilted_payoff_changes_the_solution() -> None:
    # A Polaris-style tilt (Johanson thesis §2 "Tilting the payoffs"): position 0
    # believes it wins 7% more at every showdown and fold win.
    payoff = zero_sum_payoff(LEDUC)
    mine = payoff[:, 0, :]
    mine[mine > 0] *= 1.07
    tilted = Solver(LEDUC, payoff=payoff)
    plain = Solver(LEDUC)
    tilted.run(200)
    plain.run(200)
    assert not np.allclose(tilted.average_strategy(), plain.average_strategy(), atol=1e-3)


def test_solver_restriction_with_zero_confidence_is_a_plain_solve() -> None:
    shape = (LEDUC.num_decisions, LEDUC.max_actions, LEDUC.num_hands)
    restriction = Restriction(1, uniform_strategy(LEDUC), np.zeros(shape[::2]))
    restricted = Solver(LEDUC, restriction=restriction)
    plain = Solver(LEDUC)
    restricted.run(30)
    plain.run(30)
    assert np.allclose(restricted.cumulative, plain.cumulative, rtol=0, atol=1e-12)


def test_solver_full_confidence_gives_a_best_response_to_the_model() -> None:
    # p_conf = 1: position 1 must play the fixed model (uniform), so position 0's
    # average strategy converges to a best response to it; its value approaches
    # the best-response value 2.0875 of position 0 against uniform play.
    shape = (LEDUC.num_decisions, LEDUC.max_actions, LEDUC.num_hands)
    model = uniform_strategy(LEDUC)
    solver = Solver(LEDUC, restriction=Restriction(1, model, np.ones(shape[::2])))
    solver.run(300)
    profile = solver.average_strategy()
    ones = LEDUC.decision_player == 1
    profile[ones] = model[ones]
    target = best_response(LEDUC, model).values[0]
    assert target == pytest.approx(2.0875, abs=1e-12)
    assert profile_values(LEDUC, profile)[0] == pytest.approx(target, abs=1e-3)


def test_solver_resumes_from_arrays() -> None:
    whole = Solver(LEDUC)
    whole.run(30)
    first = Solver(LEDUC)
    first.run(10)
    resumed = Solver(LEDUC)
    resumed.load_arrays(iteration=first.iteration, regret=first.regret.copy(), cumulative=first.cumulative.copy())
    resumed.run(20)
    assert resumed.iteration == 30
    assert np.allclose(resumed.cumulative, whole.cumulative, rtol=1e-13, atol=0)


def test_solver_subtree_with_ranges_solves() -> None:
    # A round-two subtree of Leduc ("rc", board K of spades) with position 0
    # holding only queens and position 1 only aces: position 1 never loses a
    # showdown, so position 0's value is negative and best responses agree.
    from poker.protocol import parse_betting

    tree = build_tree(LEDUC.game, root=parse_betting("rc", LEDUC.game), board=(47,))
    cards = tree.hands[:, 0]
    ranges = np.array([np.isin(cards, (42, 43)), np.isin(cards, (50, 51))], dtype=np.float64)
    solver = Solver(tree, ranges=ranges)
    solver.run(200)
    average = solver.average_strategy()
    values = profile_values(tree, average, ranges=ranges)
    assert values[0] < 0
    result = best_response(tree, average, ranges=ranges)
    assert result.values[0] >= values[0] - 1e-12 and result.values[1] >= values[1] - 1e-12


def test_solver_rejects_bad_settings() -> None:
    with pytest.raises(SolverError, match="averaging delay must be non-negative, got -1"):
        Solver(KUHN, delay=-1)
    with pytest.raises(SolverError, match=r"payoff must have shape \(9, 2, 3\)"):
        Solver(KUHN, payoff=np.zeros((9, 2)))
    with pytest.raises(ValueError, match="'cfr-'"):
        Solver(KUHN, "cfr-")


def test_solver_suit_isomorphic_tree_gives_the_same_solution() -> None:
    iso = build_tree(LEDUC.game, isomorphism=True)
    full, reduced = Solver(LEDUC), Solver(iso)
    full.run(300)
    reduced.run(300)
    assert reduced.exploitability() == pytest.approx(full.exploitability(), abs=1e-12)
    assert profile_values(iso, reduced.average_strategy()) == pytest.approx(
        profile_values(LEDUC, full.average_strategy()), abs=1e-12
    )

    # Round one is the same betting in both trees (its rows sit at other indices,
    # since round-two groups are smaller): its strategies agree.
    def round_one(tree: Tree, solver: Solver) -> np.ndarray:
        rows = {tree.key(int(n)): d for d, n in enumerate(tree.decision_nodes) if tree.round[n] == 0}
        return solver.average_strategy()[[rows[k] for k in sorted(rows)]]

    assert np.allclose(round_one(iso, reduced), round_one(LEDUC, full), rtol=0, atol=1e-12)


def test_solver_suit_isomorphic_tree_needs_symmetric_ranges() -> None:
    iso = build_tree(LEDUC.game, isomorphism=True)
    lopsided = np.ones((2, 6))
    lopsided[0, 0] = 0.5  # Qh weighted differently from Qs
    with pytest.raises(SolverError, match="needs ranges that are the same under every suit permutation"):
        Solver(iso, ranges=lopsided)
    Solver(iso, ranges=np.ones((2, 6)))


def test_solver_solve_to_checks_like_run_and_exploitability() -> None:
    # The one-call solve equals running batches and measuring in Python: same
    # stopping iteration, same arrays, same measured value (the sum of the
    # root values may round differently in the last bit).
    looped = Solver(LEDUC, Algorithm.CFR_PLUS, delay=20)
    looped.run(20)  # the average is empty until iteration 21: no checks before
    while True:
        looped.run(7)
        measured = looped.exploitability()
        if measured <= 0.005:
            break
    fused = Solver(LEDUC, Algorithm.CFR_PLUS, delay=20)
    assert fused.solve_to(0.005, check_every=7, max_iterations=10_000) == pytest.approx(measured, rel=1e-12)
    assert fused.iteration == looped.iteration
    assert (fused.iteration - 20) % 7 == 0
    assert np.array_equal(fused.cumulative, looped.cumulative)
    assert np.array_equal(fused.regret, looped.regret)


def test_solver_solve_to_stops_at_max_iterations() -> None:
    solver = Solver(KUHN, Algorithm.CFR_PLUS)
    measured = solver.solve_to(0.0, check_every=30, max_iterations=100)
    # Checks at 30, 60, 90, then one after the last iteration.
    assert solver.iteration == 100
    assert measured == pytest.approx(solver.exploitability(), rel=1e-12)
    assert solver.solve_to(0.0, check_every=30, max_iterations=100) == pytest.approx(measured, rel=1e-12)
    assert solver.iteration == 100
    with pytest.raises(SolverError, match="check_every"):
        solver.solve_to(0.1, check_every=0, max_iterations=200)
