"""Ctrl-C or SIGTERM at any moment of ``arena solve``, then ``--resume`` to the same
total, writes the very bytes of a straight run, for every algorithm that checkpoints.

A signal used to land just after a kernel batch returned and before the
iteration count advanced, so the checkpoint held more iterations than it said
(:mod:`strategies.cfr.interrupts`). Each case interrupts a chain of
subprocesses, each resuming the previous one's checkpoint, the last running to
the end; the file must equal the straight run's byte for byte. The moments are
drawn with a fixed seed and measured in the solve's own progress, so that they
fall inside it on a fast machine and a loaded one alike: 0 to 2 ``--every``
lines (0: from the start, imports and set-up included), then up to
:data:`MAX_DELAY_S` more (inside a batch, a measurement or a checkpoint write);
SIGINT and SIGTERM alternate.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from strategies.cfr import cli
from strategies.cfr.interrupts import Interrupts
from strategies.cfr.strategy_file import load_strategy

#: (solve arguments, --every, interrupts): 20 ``--every`` intervals each, a
#: second or two on a loaded core; a link of the chain advances at most about
#: four of them, so every signal falls inside the solve.
CASES = {
    "leduc cfr+": (["leduc"], 2_000, 4),
    "kuhn3p cfr+": (["kuhn3p"], 5_000, 2),
    "kuhn3p es-mccfr": (["kuhn3p", "--algorithm", "es-mccfr", "--abstraction", "none"], 20_000, 2),
    "leduc abstract": (["leduc", "--algorithm", "abstract", "--abstraction", "none"], 250, 2),
    "leduc pcs": (["leduc", "--algorithm", "pcs"], 1_000, 2),
}
INTERVALS = 20
#: The longest wait after the last awaited ``--every`` line, seconds (from the start when none is).
MAX_DELAY_S = 0.1
MAX_START_DELAY_S = 1.5
#: How a link may end: finished, interrupted, or killed by a SIGTERM that came after the
#: solve's handlers were gone (its file written) or a SIGINT before they were there.
STATUSES = (0, 130, -signal.SIGTERM, -signal.SIGINT)


def _interrupted(argv: list[str], lines: int, delay_s: float, signum: int) -> tuple[int, str]:
    """Run ``arena solve argv``, signal it ``delay_s`` after its ``lines``-th line; its status and stderr."""
    command = [sys.executable, "-m", "arena.cli", "solve", *argv, "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as solve:
        assert solve.stdout is not None
        for _ in range(lines):
            solve.stdout.readline()  # a measurement: iterating ("" once it has ended)
        try:
            solve.wait(timeout=delay_s)
        except subprocess.TimeoutExpired:
            solve.send_signal(signum)
        _, err = solve.communicate(timeout=120)
    return solve.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_interrupt_then_resume_equals_a_straight_run(tmp_path: Path, case: str) -> None:
    solve, every, interrupts = CASES[case]
    straight, out = tmp_path / "straight.strategy", tmp_path / "resumed.strategy"
    total = every * INTERVALS
    head = ["--iterations", str(total), "--every", str(every)]
    assert cli.main([*solve, *head, "-o", str(straight), "--quiet"]) == 0
    draws = random.Random(f"{case} 20")
    stopped_at = []
    for link in range(interrupts):
        argv = ["--resume", str(out)] if out.exists() else solve
        lines = draws.randint(0, 2)
        delay_s = draws.uniform(0, MAX_DELAY_S if lines else MAX_START_DELAY_S)
        code, err = _interrupted([*argv, *head, "-o", str(out)], lines, delay_s, [signal.SIGINT, signal.SIGTERM][link % 2])
        assert code in STATUSES, err
        if "checkpoint written" in err:
            stopped_at.append(load_strategy(out).iterations)
            assert err.strip().endswith(f"interrupted at iteration {stopped_at[-1]}; checkpoint written to {out}")
        elif out.exists() and load_strategy(out).iterations == total and code != 130:
            break  # it ran to the end (the rest of the chain would resume a finished file)
    assert stopped_at and min(stopped_at) < total  # signals fell inside the solve
    if load_strategy(out).iterations < total or "regret" in load_strategy(out).arrays:
        assert cli.main(["--resume", str(out), *head, "-o", str(out), "--quiet"]) == 0
    assert out.read_bytes() == straight.read_bytes(), f"stopped at {stopped_at}"


def test_a_signal_inside_a_deferred_section_stops_it_at_its_end() -> None:
    done = []
    with Interrupts() as interrupts, pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("rest of the batch")
    assert done == ["rest of the batch"]


def test_after_the_first_signal_later_ones_do_not_cut_the_checkpoint() -> None:
    written, previous = [], signal.getsignal(signal.SIGINT)
    with Interrupts():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            raise AssertionError("the signal did not stop the solve")
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C while the checkpoint is written
            written.append("checkpoint")
    assert written == ["checkpoint"]
    assert signal.getsignal(signal.SIGINT) is previous  # put back
