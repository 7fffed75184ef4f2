"""The numba warm-up (``python -m strategies.cfr.warmup``) and the cold-cache notice."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path
from typing import Any

import numba
import pytest
from numba import njit

from poker.gamedef import load_game
from poker.state import CALL, Action, State
from strategies.base import make_strategy, private_hands
from arena.commands import solve as cli
from strategies.cfr import compile_notice, warmup
from strategies.resolve.agent import ResolvingStrategy


def _fresh_kernel(module: str) -> Any:
    """A new (never compiled) dispatcher that claims to live in ``module``."""

    def add_one(x: int) -> int:
        return x + 1

    add_one.__module__ = module
    return njit(add_one)


def test_notice_text() -> None:
    assert compile_notice.notice("strategies.cfr.tree._kernels", "/x/__pycache__") == (
        "numba: compiling the CFR solver kernels, once (cached in /x/__pycache__); this can take minutes"
    )
    assert compile_notice.notice("strategies.cfr.other", None) == (
        "numba: compiling the strategies.cfr.other kernels, once; this can take minutes"
    )


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
    assert capsys.readouterr().err.splitlines() == [compile_notice.notice(module, None)]
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
    assert line.startswith("numba: compiling the strategies.cfr._test_cached_module kernels, once (cached in ")
    assert str(tmp_path) in line


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


def test_warm_up_covers_the_usual_solves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Compiles everything on a cold cache (what the test suite compiles anyway);
    # seconds on a warm one. Then the usual solves, with options the warm-up
    # does not use, must find every kernel compiled for their argument types.
    results = warmup.warm_up(None)
    assert [r.name for r in results] == [name for name, _ in warmup.STEPS]
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


def test_warmup_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert warmup.main(["--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert warmup.main([]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("numba kernels: compiling once")
    assert [line.split(":")[0].strip() for line in lines[1:-1]] == [name for name, _ in warmup.STEPS]
    assert all(line.endswith("(cached)") for line in lines[1:-1])  # compiled by the run above
    assert lines[-1].startswith("numba kernels ready in ") and lines[-1].endswith(" (0 compiled)")
