"""The solve-run library without argv: what ``arena solve`` does, driven from code."""

from __future__ import annotations

from pathlib import Path

import pytest

from strategies.cfr.runs import SettingsError, SolveSettings, TreeRun, resume_run, start_run
from strategies.cfr.strategy_file import load_strategy


def test_a_run_split_by_a_resume_writes_the_file_of_a_straight_run(tmp_path: Path) -> None:
    straight = start_run(SolveSettings(game="kuhn", every=10))
    assert isinstance(straight, TreeRun) and straight.every == 10
    straight.run(30)
    straight.finish(tmp_path / "straight.strategy", straight.exploitability())

    half = start_run(SolveSettings(game="kuhn", every=10))
    half.run(10)
    half.save(tmp_path / "half.strategy", None)
    resumed = resume_run(tmp_path / "half.strategy", SolveSettings())
    assert resumed.iteration == 10 and resumed.every == 10  # every: the file's
    resumed.run(20)
    resumed.finish(tmp_path / "resumed.strategy", resumed.exploitability())
    assert (tmp_path / "resumed.strategy").read_bytes() == (tmp_path / "straight.strategy").read_bytes()
    assert load_strategy(tmp_path / "resumed.strategy").iterations == 30


def test_settings_that_do_not_go_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="--float32 applies to --algorithm abstract only"):
        start_run(SolveSettings(game="kuhn", float32=True))
    with pytest.raises(SettingsError, match="needs --abstraction SPEC"):
        start_run(SolveSettings(game="kuhn", algorithm="abstract"))
    run = start_run(SolveSettings(game="kuhn"))
    run.save(tmp_path / "kuhn.strategy", None)
    with pytest.raises(SettingsError, match="it does not match --algorithm cfr "):
        resume_run(tmp_path / "kuhn.strategy", SolveSettings(algorithm="cfr"))
