"""Two identical tournaments print and write byte-identical reports, whatever
order their matches finished in. The scoring sees the matches in a fixed order
(by players, then name); the forfeits were listed in the order the matches
finished, and now come in schedule order."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import arena.match.seats
from arena.tournament import MatchJob, MatchRecord, parse_config, play_match, report, run_tournament
from arena.tournament import runner

Finished = Callable[[MatchJob, MatchRecord | None, BaseException | None], None]


def play(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[bytes, str, bytes]:
    """Play the tournament into ``directory/out``, then move it aside: its
    report, what it printed, its results.csv."""
    crash = directory / "crash" / "startme.sh"  # exits at once: forfeits every seating
    crash.parent.mkdir(exist_ok=True)
    crash.write_text("#!/bin/sh\nexit 3\n")
    crash.chmod(0o755)
    bots = {"caller": "always-call", "crash": {"command": "crash/startme.sh"}, "random": "random", "raiser": "always-raise"}
    document = {
        "game": "kuhn", "hands": 20, "series": 1, "seed": 7, "workers": 1, "output": "out", "bots": bots,
    }
    config = parse_config(document, directory)
    stored, failures = run_tournament(config, progress=False)
    assert failures == []
    capsys.readouterr()
    report(config, stored, 100)
    printed = capsys.readouterr().out
    files = (config.output / "report.html").read_bytes(), printed, (config.output / "results.csv").read_bytes()
    config.output.rename(directory / f"run{len(list(directory.glob('run*')))}")
    return files


def in_order(reverse: bool) -> Callable[[int, Sequence[MatchJob], Finished], None]:
    """The runner's pool, played here one match at a time, in schedule order or the reverse."""

    def run(workers: int, jobs: Sequence[MatchJob], finished: Finished) -> None:
        for job in reversed(jobs) if reverse else jobs:
            finished(job, play_match(job), None)

    return run


def test_identical_tournaments_finishing_in_another_order_report_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the dealer waiting for a crashed bot is stopped at once, not after 5 s
    monkeypatch.setattr(arena.match.seats, "AGENT_GONE_S", 0.1)
    monkeypatch.setattr(runner, "_run_local", in_order(reverse=False))
    first = play(tmp_path, capsys)
    monkeypatch.setattr(runner, "_run_local", in_order(reverse=True))
    second = play(tmp_path, capsys)
    with sqlite3.connect(tmp_path / "run1" / "tournament.db") as connection:
        finished = [match for (match,) in connection.execute("SELECT match FROM matches ORDER BY rowid")]
    assert finished[0] == "s0:random:raiser" and finished[-1] == "s0:caller:crash"  # the last scheduled first
    assert "forfeited seatings (6):" in first[1] and "bootstrap: 100 samples" in first[1]
    forfeits = [line.split(": ")[0].strip() for line in first[1].split("forfeited seatings (6):\n")[1].splitlines()[:6]]
    assert forfeits[::2] == ["s0:caller:crash match.1", "s0:crash:random match.1", "s0:crash:raiser match.1"]
    assert second[2] == first[2]
    assert second[1] == first[1]
    assert second[0] == first[0]
