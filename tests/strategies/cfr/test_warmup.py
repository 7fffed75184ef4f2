"""The numba warm-up (``arena warmup``) and the cold-cache notice."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numba
import pytest
from numba import njit
from tqdm import tqdm

from analysis.aivat import EquityValues, aivat
from analysis.allin import adjusted_hands
from analysis.importance import simulate_hands
from poker.deal import private_hands
from poker.gamedef import load_game
from poker.state import CALL, Action, State
from arena.commands import solve as cli
from strategies.base import make_strategy
from arena.commands import warmup
from strategies.cfr import compile_notice
from strategies.resolve.agent import ResolvingStrategy


def _fresh_kernel(module: str) -> Any:
    """A new (never compiled) dispatcher that claims to live in ``module``."""

    def add_one(x: int) -> int:
        return x + 1

    add_one.__module__ = module
    return njit(add_one)


def test_notice_text() -> None:
    # What compiles and roughly how long (compile_notice.SECONDS: the CFR solver's about a minute).
    assert compile_notice.notice(["strategies.cfr.tree._kernels"], "/x/__pycache__") == (
        "numba: compiling the CFR solver kernels, once (about 60 s on 2 cores; cached in /x/__pycache__)"
    )
    assert compile_notice.notice(["poker._eval_kernels"], None) == (
        "numba: compiling the hand evaluator kernels, once (a few seconds on 2 cores)"
    )
    # 2 + 60 + 70 s: about 2 min.
    modules = ["poker._eval_kernels", "strategies.cfr.tree._kernels", "strategies.resolve._kernels"]
    assert compile_notice.notice(modules, None) == (
        "numba: compiling the hand evaluator, CFR solver and re-solving and value-net kernels, once"
        " (about 2 min on 2 cores)"
    )
    assert compile_notice.notice(["strategies.cfr.other"], None) == (
        "numba: compiling the strategies.cfr.other kernels, once (about 30 s on 2 cores)"
    )
    assert set(compile_notice.SECONDS) == set(compile_notice.LABELS)


def test_notice_is_off_under_pytest_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compile_notice.ENV, raising=False)
    assert not compile_notice.enabled()  # PYTEST_CURRENT_TEST is set
    monkeypatch.setenv(compile_notice.ENV, "1")
    assert compile_notice.enabled()
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setenv(compile_notice.ENV, "0")
    assert not compile_notice.enabled()
    monkeypatch.delenv(compile_notice.ENV)
    assert compile_notice.enabled()


def test_a_compilation_prints_one_line_per_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_notice.install()
    monkeypatch.setenv(compile_notice.ENV, "1")
    module = "strategies.cfr._test_notice_module"
    first, second = _fresh_kernel(module), _fresh_kernel(module)
    assert first(1) == 2 and second(2) == 3 and first(3) == 4
    assert capsys.readouterr().err.splitlines() == [compile_notice.notice([module], None)]
    _fresh_kernel("numba_user.elsewhere")(1)  # not this project's: no notice
    assert capsys.readouterr().err == ""


def test_the_notice_names_the_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_notice.install()
    monkeypatch.setenv(compile_notice.ENV, "1")
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))

    def twice(x: int) -> int:
        return 2 * x

    twice.__module__ = "strategies.cfr._test_cached_module"
    assert njit(cache=True)(twice)(4) == 8
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("numba: compiling the strategies.cfr._test_cached_module kernels, once (")
    assert f"; cached in {tmp_path}" in line


def test_expected_modules_are_announced_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A command that will compile two modules' kernels says so once, at the first.
    monkeypatch.setenv(compile_notice.ENV, "1")
    first, second = "strategies.cfr._test_group_first", "strategies.cfr._test_group_second"
    compile_notice.expect(first, second)
    assert _fresh_kernel(second)(1) == 2 and _fresh_kernel(first)(1) == 2
    assert capsys.readouterr().err.splitlines() == [compile_notice.notice([first, second], None)]
    # A module no command expected still gets its own line.
    _fresh_kernel("strategies.cfr._test_group_other")(1)
    assert capsys.readouterr().err.splitlines() == [compile_notice.notice(["strategies.cfr._test_group_other"], None)]


def test_the_notice_never_lands_inside_a_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kernel that compiles while a bar runs (the first iteration of a solve): the
    # bar is cleared (a carriage return) before the line and drawn again after it.
    monkeypatch.setenv(compile_notice.ENV, "1")
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    module = "strategies.cfr._test_inside_bar"
    with tqdm(total=10, file=sys.stderr, ncols=60, mininterval=0) as bar:
        bar.update(3)
        _fresh_kernel(module)(1)
        bar.update(1)
    before, after = stream.getvalue().split(compile_notice.notice([module], None))
    assert before.endswith("\r") and " 3/10 " in before
    assert after.startswith("\n") and " 4/10 " in after


def test_a_failing_notice_never_fails_the_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    compile_notice.install()
    monkeypatch.setenv(compile_notice.ENV, "1")
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)  # print() raises ValueError
    assert _fresh_kernel("strategies.cfr._test_closed_stderr")(5) == 6


def test_recording_collects_the_kernels_and_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(compile_notice.ENV, "1")
    with compile_notice.recording() as compiled:
        _fresh_kernel("strategies.cfr._test_recorded")(1)
    assert compiled == ["strategies.cfr._test_recorded._fresh_kernel.<locals>.add_one"]
    assert capsys.readouterr().err == ""


@pytest.fixture(scope="module")
def warmed() -> list[str]:
    """``arena warmup``'s lines, run once for the module: it compiles every kernel on
    a cold cache (what the suite would compile anyway), and only loads them (seconds)
    after ``make test``'s own warm-up. The tests below reuse what it compiled."""
    stream = io.StringIO()
    with contextlib.redirect_stderr(stream):
        assert warmup.main([]) == 0
    return stream.getvalue().splitlines()


def test_warmup_command_says_one_line_per_step(warmed: list[str]) -> None:
    assert warmed[0].startswith("numba kernels: compiling once")
    steps = [line.split(":")[0].strip() for line in warmed[1:-1]]
    assert steps == [name for name, _ in warmup.STEPS]
    assert all(re.fullmatch(r"\d+\.\d s \((cached|compiled \d+ kernels)\)", line.split(": ", 1)[1]) for line in warmed[1:-1])
    assert re.fullmatch(r"numba kernels ready in \d+\.\d s \(\d+ compiled\)", warmed[-1])


def test_quiet_and_cached_steps(warmed: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # Run again, a step's kernels are loaded, not compiled; --quiet prints nothing.
    # One step stands for all (each takes seconds even cached: the run above timed them).
    monkeypatch.setattr(warmup, "STEPS", warmup.STEPS[:1])
    assert warmup.main(["--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert warmup.main([]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and re.fullmatch(r"  hand evaluator: \d+\.\d s \(cached\)", lines[1]), lines
    assert re.fullmatch(r"numba kernels ready in \d+\.\d s \(0 compiled\)", lines[2])


def test_warm_up_covers_the_usual_solves(warmed: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # After the warm-up, the usual solves, with options the warm-up does not
    # use, must find every kernel compiled for their argument types.
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    out = str(tmp_path / "x")
    solves = [
        ["leduc", "--iterations", "3", "--suit-isomorphism", "--every", "3"],
        ["kuhn", "--algorithm", "cfr", "--iterations", "3", "--every", "1"],
        ["leduc.nolimit", "--bet-sizes", "1", "--iterations", "2", "--every", "1"],
        ["leduc", "--algorithm", "pcs", "--abstraction", "hs:2,3:perfect", "--iterations", "2", "--every", "1"],
        ["leduc", "--algorithm", "abstract", "--abstraction", "none", "--iterations", "2", "--every", "1"],
        ["leduc.limit.3p", "--algorithm", "es-mccfr", "--abstraction", "none", "--max-raises", "1,2", "--iterations", "5"],
    ]
    for args in solves:
        with compile_notice.recording() as compiled, contextlib.redirect_stdout(io.StringIO()):
            assert cli.main([*args, "--quiet", "-o", out]) == 0
        assert compiled == [], args
    # The shipped value net and more iterations than the warm-up's, both streets.
    game = load_game("leduc.nolimit")
    bet = State(game).apply(Action.raise_to(400))
    with compile_notice.recording() as compiled:
        for spec in ("resolve:evaluator=net,iterations=3", "resolve:iterations=3"):
            agent = make_strategy(spec, game, seed=1)
            assert isinstance(agent, ResolvingStrategy)
            agent.resolution(bet, ())
            agent.resolution(bet.apply(CALL), (int(private_hands(game)[2, 0]),))
    assert compiled == []
    # The end of a no-limit hold'em match (all-in adjusted run-outs) and hold'em
    # AIVAT (equities on each board), on other deals than the warm-up's.
    hunl = load_game("hunl")
    raiser, caller = make_strategy("always-raise:size=max", hunl, seed=1), make_strategy("always-call", hunl, seed=1)
    with compile_notice.recording() as compiled:
        for players in ((raiser, caller), (caller, caller)):
            hands = simulate_hands(hunl, list(players), 3, seed=5, names=("first", "caller"))
            adjusted_hands(hands)
            aivat(hands, "caller", caller, EquityValues(hunl))
    assert compiled == []


def test_every_solve_algorithm_names_its_kernels() -> None:
    algorithms = next(a for a in cli._parser()._actions if a.dest == "algorithm").choices
    assert algorithms is not None
    for algorithm in algorithms:
        assert compile_notice.solve_kernels(algorithm, 2), algorithm
        assert all(module in compile_notice.LABELS for module in compile_notice.solve_kernels(algorithm, 2))
    assert compile_notice.solve_kernels("cfr+", 3) == ("poker._eval_kernels", "strategies.cfr.solvers.multiplayer")


@pytest.mark.slow
def test_a_cold_three_player_solve_says_so_in_one_line(tmp_path: Path) -> None:
    # The hand evaluator compiles as the tree is built, the multiplayer kernels in the
    # first iteration: one notice for both, before the first (not one per module).
    cold = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), compile_notice.ENV: "1"}
    out = tmp_path / "kuhn3p.strategy"
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "solve", "kuhn3p", "--iterations", "2", "-o", str(out)],
        env=cold,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    notices = [line for line in done.stderr.splitlines() if line.startswith("numba:")]
    assert len(notices) == 1, done.stderr
    assert notices[0].startswith("numba: compiling the hand evaluator and multiplayer CFR kernels, once ("), done.stderr


def test_warming_one_bot_names_it_and_a_bot_not_in_the_library_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``arena warmup --bot NAME`` (what ``arena serve`` runs for each bot that
    compiles kernels): one line when it is ready; a name not in the library is
    refused with the names it takes, before anything runs."""
    assert warmup.main(["--bot", "kuhn-cfr"]) == 0
    assert re.fullmatch(r"kuhn-cfr: ready in \d+\.\d s \(cached\)\n", capsys.readouterr().err)
    assert warmup.main(["--bot", "no-such-bot"]) == 2
    err = capsys.readouterr().err
    assert "argument --bot: invalid choice: 'no-such-bot'" in err and "hunl-modicum" in err and "Traceback" not in err
