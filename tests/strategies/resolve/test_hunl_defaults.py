"""``resolve`` in HUNL with no options: defaults that fit the tree limit (the
shipped blueprint's continuation leaves, 100 iterations of discounted CFR, 32 run-outs) play a match within the
dealer's default limits, and options that ask for more than a lookahead can
hold are one line from ``arena match``, not a traceback from the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.commands.match import main as match_main
from poker.gamedef import load_game
from strategies.base import make_strategy
from strategies.resolve.agent import LARGE_GAME_DEFAULTS, MAX_BOARDS, ResolvingStrategy
from strategies.resolve.depth_limited import DISCOUNTED_CFR
from strategies.resolve.evaluators import EquityEvaluator


def test_the_hunl_defaults_fit_and_leduc_keeps_the_exact_lookahead() -> None:
    """HUNL: the shipped blueprint's continuations from the flop on, equity
    leaves pre-flop, discounted CFR; HULHE, where no blueprint ships: equity
    leaves; Leduc: the exact lookahead, CFR+."""
    agent = make_strategy("resolve", load_game("hunl"), seed=1)
    assert isinstance(agent, ResolvingStrategy) and isinstance(agent.evaluator, EquityEvaluator)
    assert agent.continuations is not None and agent.continuations.first_round == 1
    assert (agent.iterations, agent.max_boards) == (LARGE_GAME_DEFAULTS["iterations"], LARGE_GAME_DEFAULTS["boards"])
    assert agent.preflop_iterations == LARGE_GAME_DEFAULTS["preflop"] * agent.iterations
    assert agent.root_iterations == LARGE_GAME_DEFAULTS["root"] * agent.iterations
    assert agent.river_iterations == LARGE_GAME_DEFAULTS["river"] * agent.iterations
    assert agent.discount == DISCOUNTED_CFR
    assert agent.evaluator.max_boards == LARGE_GAME_DEFAULTS["boards"]
    limit = make_strategy("resolve", load_game("hulhe"), seed=1)
    assert isinstance(limit, ResolvingStrategy) and isinstance(limit.evaluator, EquityEvaluator)
    assert limit.continuations is None
    small = make_strategy("resolve", load_game("leduc.nolimit"), seed=1)
    assert isinstance(small, ResolvingStrategy) and small.evaluator is None and small.discount is None
    assert (small.iterations, small.preflop_iterations, small.root_iterations, small.river_iterations, small.max_boards) == (1000, 1000, 1000, 1000, 64)
    chosen = make_strategy(
        "resolve:iterations=10,preflop_iterations=7,root_iterations=30,river_iterations=9", load_game("leduc.nolimit"), seed=1
    )
    assert isinstance(chosen, ResolvingStrategy)
    assert (chosen.iterations, chosen.preflop_iterations, chosen.root_iterations, chosen.river_iterations) == (10, 7, 30, 9)
    assert make_strategy("resolve:solver=cfr+", load_game("hunl"), seed=1).discount is None  # type: ignore[attr-defined]
    assert make_strategy("resolve:max_seconds=1.5", load_game("hunl"), seed=1).max_seconds == 1.5  # type: ignore[attr-defined]


def test_resolve_plays_hunl_with_no_options_within_the_default_limits(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["hunl", "resolve", "always-call", "--hands", "2", "--seed", "1", "--in-process", "--run-dir", str(run)]
    assert match_main(argv) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs and [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    assert "resolve" in json.dumps(json.loads((run / "results.json").read_text()))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("resolve:evaluator=exact", "evaluator=exact looks ahead to the end of the hand"),
        ("resolve:sizes=0.1+0.2+0.3+0.4+0.5+0.6+0.7+0.8+0.9+1+1.5+2+3+4", "over the limit of 50,000,000"),
        (f"resolve:boards={MAX_BOARDS + 1}", f"boards must be 1 to {MAX_BOARDS}"),
        ("resolve:evaluator=equity,blueprint=x.strategy", "go with evaluator=continuations"),
        ("resolve:preflop_iterations=x", "preflop_iterations='x'"),
        ("resolve:preflop_iterations=0", "iterations must be at least 1"),
        ("resolve:root_iterations=0", "iterations must be at least 1"),
        ("resolve:root_iterations=many", "root_iterations='many'"),
        ("resolve:river_iterations=0", "iterations must be at least 1"),
        ("resolve:river_iterations=x", "river_iterations='x'"),
        ("resolve:solver=cfr", "solver='cfr' is not one of cfr+, dcfr"),
        ("resolve:blueprint=x.strategy", "No such file or directory"),
        ("resolve:evaluator=continuations,continuations=5", "continuations must be 1 to 4"),
        ("resolve:evaluator=continuations,preflop=guess", "preflop='guess' is not one of equity, blueprint, continuations"),
        ("resolve:evaluator=equity,preflop_blend=0.5", "go with evaluator=continuations"),
        ("resolve:preflop=continuations,preflop_blend=0.5", "preflop_blend= goes with preflop=blueprint, not preflop=continuations"),
        ("resolve:preflop=blueprint,preflop_blend=0", "preflop_blend must be over 0 and at most 1"),
        ("resolve:preflop=blueprint,preflop_blend=1.5", "got '1.5'"),
        ("resolve:preflop=blueprint,preflop_blend=half", "got 'half'"),
        ("resolve:preflop=blueprint,preflop_blend=nan", "got 'nan'"),
        ("resolve:evaluator=equity,within_bucket=1", "within_bucket= go with evaluator=continuations"),
        ("resolve:within_bucket=2.5", "within_bucket must be 0 to 2, got '2.5'"),
        ("resolve:within_bucket=-1", "within_bucket must be 0 to 2, got '-1'"),
        ("resolve:within_bucket=some", "got 'some'"),
        ("resolve:within_bucket=nan", "got 'nan'"),
        ("resolve:evaluator=continuations,blueprint=/nonexistent.strategy", "strategy 'resolve': "),
        ("resolve:max_seconds=0", "max_seconds must be more than 0 and at most 60, got '0'"),
        ("resolve:max_seconds=-1", "got '-1'"),
        ("resolve:max_seconds=61", "got '61'"),
        ("resolve:max_seconds=soon", "got 'soon'"),
        ("resolve:max_seconds=nan", "got 'nan'"),
        ("resolve:evaluator=exact,max_seconds=1", "max_seconds= caps the streets an evaluator ends; evaluator=exact has none"),
    ],
)
def test_an_option_that_asks_for_too_much_is_one_line(
    spec: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["hunl", spec, "always-call", "--hands", "2", "--seed", "1", "--run-dir", str(tmp_path / "run")]
    assert match_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err
