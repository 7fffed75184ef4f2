"""``arena solve`` never loses work: a bad output path is refused before any
iteration, SIGTERM writes a checkpoint as Ctrl-C does, and a resume that names a
different solve is refused; ``arena exploitability`` says why a file has no figure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from poker.gamedef import load_game
from arena.commands import exploitability as cli_exploitability
from arena.commands import solve as cli
from strategies.cfr.strategy_file import BUCKETS, StrategyFile, load_strategy, save_strategy
from strategies.cfr.tree.betting import build_betting_tree


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (".", "is a directory; name the strategy file to write"),
        ("missing/dir/x.strategy", "does not exist"),
    ],
)
def test_unwritable_output_is_refused_before_the_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, reason: str
) -> None:
    path = tmp_path / output
    assert cli.main(["leduc", "--iterations", "100000000", "-o", str(path)]) == 2  # returns at once
    err = capsys.readouterr().err
    assert err.startswith(f"arena solve: error: -o {path}: ") and reason in err and "Traceback" not in err


def test_sigterm_writes_a_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "leduc.strategy"
    command = [sys.executable, "-m", "arena.cli", "solve", "leduc", "--iterations", "100000000"]
    command += ["--every", "50", "-o", str(out), "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as solve:
        assert solve.stdout is not None and solve.stderr is not None
        first = solve.stdout.readline()  # the first measurement: iterations are running
        assert first.startswith("iteration 50: exploitability "), first + solve.stderr.read()
        solve.send_signal(signal.SIGTERM)
        _, err = solve.communicate(timeout=60)
    assert solve.returncode == 130
    saved = load_strategy(out)
    assert saved.iterations >= 50 and "regret" in saved.arrays
    assert err.strip() == f"interrupted at iteration {saved.iterations}; checkpoint written to {out}"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["leduc"], "game leduc"),
        (["--algorithm", "cfr"], "--algorithm cfr"),
        (["--abstraction", "hs:2:perfect"], "--abstraction hs:2:perfect"),
    ],
)
def test_resume_refuses_a_different_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], named: str
) -> None:
    out = tmp_path / "kuhn.strategy"
    assert cli.main(["kuhn", "--iterations", "20", "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main([*extra, "--resume", str(out), "--iterations", "40", "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"arena solve: error: --resume {out} holds a cfr+ solve of kuhn.limit.2p, card abstraction none;"
        f" it does not match {named} (leave it out to continue the file's solve)\n"
    )
    assert load_strategy(out).iterations == 20  # untouched
    # The same settings, spelled out again, are accepted.
    assert cli.main(["kuhn", "--algorithm", "cfr+", "--resume", str(out), "--iterations", "40", "-o", str(out)]) == 0
    assert load_strategy(out).iterations == 40


@pytest.mark.parametrize(
    ("algorithm", "why"),
    [
        ("abstract", "a checkpoint written before its first --every measurement; resume it with --every K"),
        ("pcs", "pcs measures only games whose public tree can be built"),
    ],
)
def test_exploitability_of_a_holdem_file_without_a_figure_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], algorithm: str, why: str
) -> None:
    game = load_game("hulhe")
    tree = build_betting_tree(game)  # the fewest columns a bucket table of it can have: one a decision
    path = tmp_path / "hulhe.strategy"
    strategy = StrategyFile(
        game=game, abstraction=None, algorithm=algorithm, iterations=7, exploitability=None,
        arrays={"strategy": np.full((3, tree.num_decisions), 1 / 3)}, card_abstraction="ehs2:5:perfect", layout=BUCKETS,
    )  # fmt: skip
    save_strategy(path, strategy, tree)
    assert cli_exploitability.main([str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].startswith("real-game exploitability: not measured (the public tree cannot")
    assert captured.err == (
        f"arena exploitability: error: {path}: no figure to print: the real game is too big and the file stores"
        f" no abstract-game exploitability ({why})\n"
    )


def test_resume_carries_every_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kuhn.strategy"
    assert cli.main(["kuhn", "--iterations", "20", "--every", "10", "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["--resume", str(out), "--iterations", "40", "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed[:-1]] == ["iteration 30", "iteration 40"]
    assert cli.main(["--resume", str(out), "--iterations", "60", "--every", "0", "-o", str(out), "--quiet"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # --every 0 given: only the final line
