"""``arena solve`` and ``arena exploitability`` end to end on Kuhn and Leduc."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strategies.cfr import cli, cli_exploitability
from strategies.cfr.strategy_file import load_strategy


def test_cli_solve_then_exploitability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kuhn.strategy"
    assert cli.main(["kuhn", "--iterations", "200", "--every", "100", "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("iteration 100: exploitability ")
    assert printed[-1].startswith("cfr+ 200 iterations: exploitability ")
    saved = load_strategy(out)
    assert saved.iterations == 200 and saved.exploitability is not None
    assert cli_exploitability.main([str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[-1] == f"exploitability: {saved.exploitability:.9g} chips/hand ({1000 * saved.exploitability:.6g} mbb/g)"
    )


def test_cli_resume_equals_one_long_run(tmp_path: Path) -> None:
    whole, half, rest = tmp_path / "whole", tmp_path / "half", tmp_path / "rest"
    assert cli.main(["leduc", "--algorithm", "cfr", "--iterations", "40", "-o", str(whole), "--quiet"]) == 0
    assert cli.main(["leduc", "--algorithm", "cfr", "--iterations", "15", "-o", str(half), "--quiet"]) == 0
    assert cli.main(["--resume", str(half), "--iterations", "40", "-o", str(rest), "--quiet"]) == 0
    a, b = load_strategy(whole), load_strategy(rest)
    assert b.iterations == 40 and b.algorithm == "cfr"
    assert np.allclose(a.arrays["cumulative"], b.arrays["cumulative"], rtol=1e-12, atol=0)


def test_cli_nolimit_bet_sizes(tmp_path: Path) -> None:
    out = tmp_path / "nl"
    assert cli.main(["leduc.nolimit", "--bet-sizes", "0.5,1", "--iterations", "3", "-o", str(out), "--quiet"]) == 0
    assert load_strategy(out).abstraction is not None


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x")
    assert cli.main(["leduc", "--bet-sizes", "1", "--iterations", "3", "-o", out, "--quiet"]) == 1
    assert "leduc is a limit game: --bet-sizes applies only to no-limit games" in capsys.readouterr().err
    assert cli.main(["nosuchgame", "--iterations", "3", "-o", out, "--quiet"]) == 1
    assert "is neither a game file nor a known game name" in capsys.readouterr().err
    assert cli.main(["kuhn3p", "--iterations", "3", "-o", out, "--quiet"]) == 1
    assert "handles 2 players" in capsys.readouterr().err
    assert cli_exploitability.main([str(tmp_path / "missing")]) == 1
    assert "arena exploitability:" in capsys.readouterr().err


def test_cli_ctrl_c_writes_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from strategies.cfr.solver import Solver

    real_run = Solver.run
    calls: list[int] = []

    def run_then_interrupt(self: Solver, iterations: int) -> None:
        if calls:
            raise KeyboardInterrupt
        calls.append(iterations)
        real_run(self, iterations)

    monkeypatch.setattr(Solver, "run", run_then_interrupt)
    out = tmp_path / "interrupted"
    assert cli.main(["kuhn", "--iterations", "1000", "-o", str(out), "--quiet"]) == 130
    assert f"interrupted at iteration {calls[0]}; checkpoint written to {out}" in capsys.readouterr().err
    saved = load_strategy(out)
    assert saved.iterations == calls[0] and saved.exploitability is None
    assert "regret" in saved.arrays and "cumulative" in saved.arrays


def test_cli_suit_isomorphism_gives_the_same_exploitability(tmp_path: Path) -> None:
    plain, iso = tmp_path / "plain", tmp_path / "iso"
    assert cli.main(["leduc", "--iterations", "50", "-o", str(plain), "--quiet"]) == 0
    assert cli.main(["leduc", "--iterations", "50", "--suit-isomorphism", "-o", str(iso), "--quiet"]) == 0
    a, b = load_strategy(plain), load_strategy(iso)
    assert b.isomorphism and not a.isomorphism
    assert b.exploitability == pytest.approx(a.exploitability, abs=1e-12)
