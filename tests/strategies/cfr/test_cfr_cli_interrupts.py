"""Ctrl-C or SIGTERM at any moment of ``arena solve`` (or ``arena bots build``),
then ``--resume`` to the same total (the same build again), writes the very bytes
of a straight run, for every algorithm that checkpoints.

A signal used to land just after a kernel batch returned and before the
iteration count advanced, so the checkpoint held more iterations than it said
(:mod:`strategies.cfr.interrupts`). Each case interrupts a chain of
subprocesses, each resuming the previous one's checkpoint, then runs to the
end; the file must equal the straight run's byte for byte. The moments are
drawn with a fixed seed and measured in the solve's own progress, so that they
fall inside it on a fast machine and a loaded one alike: 0 to 2 ``--every``
lines (0: from the start, imports and set-up included), then up to
:data:`MAX_DELAY_S` more (inside a batch, a measurement or a checkpoint write);
SIGINT and SIGTERM alternate.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from strategies.bots import LIBRARY, Bot, bot_path, partial_path
from arena.commands import bots as cli_bots
from arena.commands import solve as cli
from strategies.cfr.interrupts import Interrupts
from strategies.cfr.strategy_file import load_strategy

#: (solve arguments, --every, interrupts): :data:`INTERVALS` ``--every``
#: intervals each, a second or two on a loaded core; a link of the chain
#: advances at most about four of them, so the signals fall inside the solve.
CASES = {
    "leduc cfr+": (["leduc"], 2_000, 4),
    "kuhn3p cfr+": (["kuhn3p"], 5_000, 2),
    "leduc abstract": (["leduc", "--algorithm", "abstract", "--abstraction", "none"], 250, 2),
    "leduc pcs": (["leduc", "--algorithm", "pcs"], 1_000, 2),
}
INTERVALS = 20
#: A bot built by es-mccfr, whose finished file (unlike its checkpoints) keeps no regrets.
SAMPLED_BOT = Bot(
    "test-kuhn3p-es-mccfr",
    "kuhn3p",
    "test only: es-mccfr on 3p Kuhn",
    options=("--algorithm", "es-mccfr", "--abstraction", "none", "--every", "20000"),
    iterations=20_000 * INTERVALS,
)
#: The longest wait after the last awaited ``--every`` line, seconds (from the start when none is).
MAX_DELAY_S = 0.1
MAX_START_DELAY_S = 0.5
#: How a link may end: finished, interrupted, or killed by a SIGTERM that came after the
#: solve's handlers were gone (its file written) or a SIGINT before they were there.
STATUSES = (0, 130, -signal.SIGTERM, -signal.SIGINT)
#: ``arena bots build BOT`` of a bot given as JSON, in a process of its own.
BUILD = (
    "import json, sys; from arena.cli import main; from strategies.bots import LIBRARY, Bot;"
    " bot = Bot(**json.loads(sys.argv[1])); LIBRARY[bot.name] = bot;"
    " sys.exit(main(['bots', 'build', bot.name, '--quiet']))"
)


def _interrupted(command: list[str], lines: int, delay_s: float, signum: int) -> tuple[int, str]:
    """Run ``command``, signal it ``delay_s`` after its ``lines``-th line; its status and stderr."""
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


def _chain(
    case: str, links: int, command: Callable[[], list[str]], checkpoint: Path, done: Callable[[], bool], total: int
) -> None:
    """Run up to ``links`` commands, each signalled at a moment drawn for ``case``,
    until one is ``done``; at least one must have stopped inside the solve."""
    draws = random.Random(f"{case} 20")
    stopped_at = []
    ends = []  # each link's moment and end, for the message of a chain that never stopped inside
    for link in range(links):
        lines = draws.randint(0 if link else 1, 2)  # the first link at least stops inside the solve
        delay_s = draws.uniform(0, MAX_DELAY_S if lines else MAX_START_DELAY_S)
        before = checkpoint.read_bytes() if checkpoint.exists() else None
        code, err = _interrupted(command(), lines, delay_s, [signal.SIGINT, signal.SIGTERM][link % 2])
        ends.append((lines, round(delay_s, 3), code, err[-400:]))
        if code not in STATUSES:  # a signal while the interpreter itself starts: nothing ran
            assert not lines and (checkpoint.read_bytes() if checkpoint.exists() else None) == before, err
        if "checkpoint written" in err:
            stopped_at.append(load_strategy(checkpoint).iterations)
            assert f"interrupted at iteration {stopped_at[-1]}; checkpoint written to {checkpoint}" in err
        elif done():
            break
    assert stopped_at and min(stopped_at) < total, (stopped_at, ends)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_interrupted_solves_resume_to_a_straight_run(tmp_path: Path, case: str) -> None:
    solve, every, links = CASES[case]
    straight, out = tmp_path / "straight.strategy", tmp_path / "resumed.strategy"
    total = every * INTERVALS
    head = ["--iterations", str(total), "--every", str(every), "--quiet"]
    assert cli.main([*solve, *head, "-o", str(straight)]) == 0

    def command() -> list[str]:
        start = ["--resume", str(out)] if out.exists() else solve
        return [sys.executable, "-m", "arena.cli", "solve", *start, *head, "-o", str(out)]

    def finished() -> bool:
        return out.exists() and load_strategy(out).iterations == total

    _chain(case, links, command, out, finished, total)
    assert cli.main(["--resume", str(out), *head, "-o", str(out)]) == 0
    assert out.read_bytes() == straight.read_bytes()


@pytest.mark.slow
def test_an_interrupted_bot_build_resumes_to_a_straight_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LIBRARY, SAMPLED_BOT.name, SAMPLED_BOT)
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "straight"))
    assert cli_bots.build(SAMPLED_BOT, quiet=True) == 0
    straight = bot_path(SAMPLED_BOT).read_bytes()
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "interrupted"))
    command = [sys.executable, "-c", BUILD, json.dumps(dataclasses.asdict(SAMPLED_BOT))]
    built = bot_path(SAMPLED_BOT)
    _chain("bot", 3, lambda: command, partial_path(SAMPLED_BOT), built.exists, SAMPLED_BOT.iterations)
    assert cli_bots.build(SAMPLED_BOT, quiet=True) == 0  # finishes the build, or says it is built
    assert built.read_bytes() == straight and not partial_path(SAMPLED_BOT).exists()


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
