"""Continual re-solving (strategies.resolve): unit checks of its
parts, the DeepStack-Leduc measurement convention, Burch §5.4.1's direction, and a
no-limit match over TCP without dealer WARNINGs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena.commands.match import main as match_main
from poker.gamedef import load_game
from poker.state import CALL, Action, ActionType, State
from strategies.base import PublicState, StrategyError, make_strategy
from strategies.cfr.best_response.exact import exploitability, strategy_from_policy
from strategies.cfr.solvers.solver import Solver, uniform_strategy
from strategies.cfr.tree.public import build_tree
from strategies.resolve.agent import ResolvingStrategy
from strategies.resolve.lookahead import build_lookahead, parse_sizes
from strategies.resolve.measure import dsl_factor, dsl_uniform_exploitability, exploitability_on_tree
from strategies.resolve.resolver import ResolveError, resolve, resolve_tree
from strategies.resolve.subgames import resolve_subgames

LEDUC = load_game("leduc")
NL = load_game("leduc.nolimit")


def test_dsl_measurement_of_the_uniform_policy() -> None:
    # DSL's tutorial: "a bit over 175" for the uniform policy on its tree (free folds
    # included) in its unit; 222.73 true chips on our tree, which has no free fold.
    assert dsl_factor(NL) == pytest.approx(5 / 6)
    assert dsl_uniform_exploitability(NL).dsl == pytest.approx(175.52083333333334, abs=1e-9)
    uniform = exploitability_on_tree(NL, lambda public: np.full((6, len(public.actions)), 1 / len(public.actions)))
    assert uniform.chips == pytest.approx(222.73148148148147, abs=1e-9)
    tree = build_tree(NL)
    assert uniform.chips == pytest.approx(exploitability(tree, uniform_strategy(tree)), abs=1e-12)


@pytest.mark.parametrize("name", ["leduc", "leduc.nolimit"])
def test_every_resolve_meets_its_constraints(name: str) -> None:
    """After each re-solve (every public state of both seats), no opponent hand's
    best-response value exceeds its constraint by more than a small fraction of
    the values' scale (the gadget's solution error after 1000 iterations)."""
    agent = ResolvingStrategy(load_game(name), iterations=1000)
    exploitability_on_tree(agent.game, agent)
    solves = [r for r in agent._cache.values() if r is not None and r.constraint is not None]
    assert len(solves) > 100
    for result in solves:
        assert result.constraint is not None
        scale = np.abs(result.constraint).max()
        assert result.constraint_excess() <= 0.005 * scale, result.tree.states[0].betting_string()


def test_the_root_solve_gives_the_first_constraints() -> None:
    agent = ResolvingStrategy(NL, iterations=300)
    root = agent.root_solve()
    after_call = State(NL).apply(CALL)  # position 1's first decision
    first = agent.resolution(after_call, ())
    assert first is not None and first.constraint is not None
    # Our range is uniform, normalised to 1: the root values divided by 6.
    np.testing.assert_array_equal(first.constraint, root.br_values[0, 0] / 6)
    np.testing.assert_allclose(first.ranges[1], np.full(6, 1 / 6))


def test_continual_resolving_is_close_to_the_blueprint() -> None:
    agent = ResolvingStrategy(NL, iterations=1000)
    measured = exploitability_on_tree(NL, agent)
    solver = Solver(build_tree(NL))
    solver.run(1000)
    blueprint = solver.exploitability()
    assert blueprint == pytest.approx(0.0388, abs=5e-4)
    assert blueprint < measured.chips < 3 * blueprint


def test_limit_leduc_exploitability() -> None:
    agent = ResolvingStrategy(LEDUC, iterations=1000)
    assert exploitability_on_tree(LEDUC, agent).chips < 0.002


def test_policy_is_deterministic_and_answers_off_tree_bets() -> None:
    state = State(NL).apply(Action.raise_to(437))  # not a pot fraction of the lookahead
    public = PublicState(state, ())
    first = ResolvingStrategy(NL, iterations=200, seed=1).policy(public)
    second = ResolvingStrategy(NL, iterations=200, seed=2).policy(public)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first.sum(axis=1), 1.0)


def test_gadget_does_not_raise_the_constraints() -> None:
    """A gadget re-solve whose constraints are the opponent's best-response values
    against an earlier strategy of the same lookahead meets them, and the
    unconstrained re-solve gives the opponent values of that size."""
    state = State(NL).apply(CALL)
    tree = build_lookahead(NL, state, (), ((1.0,),))
    ranges = np.linspace(1, 2, 6)
    free = resolve_tree(tree, 1, ranges, opponent_range=np.ones(6), iterations=400)
    constraint = free.opponent_root_values()
    gadget = resolve_tree(tree, 1, ranges, constraint=constraint, iterations=1000)
    assert gadget.constraint_excess() <= 0.01 * np.abs(constraint).max()


def test_safe_resolving_lowers_exploitability_unsafe_does_not(tmp_path: Path) -> None:
    from arena.commands.solve import main as solve_main

    path = tmp_path / "abstract.strategy"
    argv = ["leduc", "--algorithm", "abstract", "--abstraction", "ehs2:2:perfect", "--iterations", "300", "-o"]
    assert solve_main([*argv, str(path)]) == 0
    tree = build_tree(LEDUC)
    original = strategy_from_policy(tree, make_strategy(f"equilibrium:file={path}", LEDUC, seed=1))
    before = exploitability(tree, original)
    safe = exploitability(tree, resolve_subgames(tree, original, safe=True, iterations=1000))
    unsafe = exploitability(tree, resolve_subgames(tree, original, safe=False, iterations=1000))
    assert before > 0.2
    assert safe < before - 0.01
    assert unsafe > safe


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(StrategyError, match="iterations"):
        make_strategy("resolve:iterations=x", NL)
    with pytest.raises(StrategyError, match="pot fraction"):
        make_strategy("resolve:sizes=1+big", NL)
    with pytest.raises(StrategyError, match="two-player games; the game has 3"):
        make_strategy("resolve", load_game("kuhn.limit.3p"))
    with pytest.raises(StrategyError, match="evaluator=exact solves by CFR\\+ only"):
        make_strategy("resolve:solver=dcfr", NL)
    with pytest.raises(ResolveError, match="shape"):
        resolve(NL, State(NL), (), np.ones(5))
    assert parse_sizes("0.5+1/1") == ((0.5, 1.0), (1.0,))


def test_depth_sizes_change_the_lookahead() -> None:
    state = State(NL)
    wide = build_lookahead(NL, state, (), parse_sizes("0.5+1/1"))
    narrow = build_lookahead(NL, state, (), parse_sizes("1"))
    assert len(wide.actions(0)) == len(narrow.actions(0)) + 1
    below = int(wide.action_child[0, 0])  # after the check: depth 1 keeps only the pot
    assert wide.actions(below) == narrow.actions(int(narrow.action_child[0, 0]))


@pytest.mark.slow
def test_no_limit_match_over_tcp_without_warnings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["leduc.nolimit", "resolve:iterations=300", "random:size=uniform", "--hands", "60", "--seed", "4"]
    assert match_main([*argv, "--duplicate", "--in-process", "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs
    assert [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    assert "resolve" in json.dumps(json.loads((run / "results.json").read_text()))


def test_a_time_budget_runs_whole_batches() -> None:
    from strategies.resolve.resolver import TIME_BATCH

    result = resolve(NL, State(NL), (), np.ones(6), iterations=1, seconds=1e-6)
    assert result.iterations == TIME_BATCH
    agent = make_strategy("resolve:seconds=0.01", NL)
    assert isinstance(agent, ResolvingStrategy)
    columns = agent.actions(State(NL))
    assert [str(a) for a in columns] == ["c", "r300", "r1200"]
    assert agent.policy(PublicState(State(NL), (), columns)).shape == (6, 3)
    with pytest.raises(NotImplementedError, match="r300"):  # the default columns lack the pot raise
        agent.policy(PublicState(State(NL)))


def test_first_street_resolves_are_kept_across_hands() -> None:
    """A re-solve depends only on the public history; the first street's (no
    board) recur every hand and are kept by ``new_hand``, a later street's are
    not; the kept one is what a fresh agent computes."""
    from poker.protocol import MatchState

    agent = make_strategy("resolve:iterations=30", LEDUC, seed=4)
    assert isinstance(agent, ResolvingStrategy)
    raised = State(LEDUC).apply(Action(ActionType.RAISE))
    flop = State(LEDUC).apply(CALL).apply(CALL)
    first, later = agent.resolution(raised, ()), agent.resolution(flop, (46,))
    agent.new_hand(MatchState(0, 1, State(LEDUC), ((42,), ()), ()))
    assert agent.resolution(raised, ()) is first
    assert agent.resolution(flop, (46,)) is not later
    fresh = make_strategy("resolve:iterations=30", LEDUC, seed=4)
    assert isinstance(fresh, ResolvingStrategy)
    again = fresh.resolution(raised, ())
    assert first is not None and again is not None
    np.testing.assert_array_equal(first.root_policy(), again.root_policy())


def test_first_street_resolves_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off-tree sizes make ever new bettings: only the newest are kept."""
    from poker.protocol import MatchState
    from strategies.resolve import agent as agent_module

    monkeypatch.setattr(agent_module, "CACHED_FIRST_STREET", 1)
    agent = make_strategy("resolve:iterations=30", LEDUC, seed=4)
    assert isinstance(agent, ResolvingStrategy)
    raised = State(LEDUC).apply(Action(ActionType.RAISE))
    reraised = raised.apply(Action(ActionType.RAISE))
    older, newer = agent.resolution(raised, ()), agent.resolution(reraised, ())
    agent.new_hand(MatchState(0, 1, State(LEDUC), ((42,), ()), ()))
    assert agent.resolution(reraised, ()) is newer
    assert agent.resolution(raised, ()) is not older
