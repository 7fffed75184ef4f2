"""The solve-run library without argv: what ``arena solve`` does, driven from code."""

from __future__ import annotations

from pathlib import Path

import pytest

from strategies.cfr import runs
from strategies.cfr.runs import SettingsError, SolveSettings, TreeRun, resume_run, solve, start_run
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


class _Recorder:
    """Every report of :func:`solve`, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def start(self, done: int, total: int) -> None:
        self.calls.append(("start", done, total))

    def advanced(self, iterations: int) -> None:
        self.calls.append(("advanced", iterations))

    def measured(self, iteration: int, text: str) -> None:
        self.calls.append(("measured", iteration, text))

    def close(self) -> None:
        self.calls.append(("close",))


def test_the_solve_loop_measures_every_k_and_writes_the_straight_runs_file(tmp_path: Path) -> None:
    straight = start_run(SolveSettings(game="kuhn", every=2))
    straight.run(5)
    straight.finish(tmp_path / "straight.strategy", straight.exploitability())

    recorder = _Recorder()
    run = start_run(SolveSettings(game="kuhn", every=2))
    solved = solve(run, iterations=5, output=tmp_path / "looped.strategy", progress=recorder)
    assert not solved.interrupted and solved.exploitability is not None
    assert (tmp_path / "looped.strategy").read_bytes() == (tmp_path / "straight.strategy").read_bytes()
    measured = [call[1] for call in recorder.calls if call[0] == "measured"]
    assert measured == [2, 4]
    assert recorder.calls[0] == ("start", 0, 5) and recorder.calls[-1] == ("close",)
    assert sum(int(str(call[1])) for call in recorder.calls if call[0] == "advanced") == 5
    assert solved.exploitability == run.describe(load_strategy(tmp_path / "looped.strategy").exploitability or 0.0)


def test_the_solve_loop_stops_at_the_target_and_refuses_one_it_cannot_measure(tmp_path: Path) -> None:
    run = start_run(SolveSettings(game="kuhn", every=10))
    solve(run, iterations=10_000, output=tmp_path / "k.strategy", target=1e9)
    assert run.iteration == 10  # the first measurement is below any exploitability of Kuhn's
    with pytest.raises(SettingsError, match="--target needs --every K"):
        solve(start_run(SolveSettings(game="kuhn")), iterations=1, output=tmp_path / "k.strategy", target=1.0)


def test_an_interrupted_loop_writes_a_checkpoint_of_the_iterations_it_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs, "BATCH_SECONDS", 1e9)  # every batch is quick: each doubles the next
    run = start_run(SolveSettings(game="kuhn"))
    calls = 0
    iterate = run.run

    def interrupted_third_batch(iterations: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        iterate(iterations)

    run.run = interrupted_third_batch  # type: ignore[method-assign]
    solved = solve(run, iterations=100, output=tmp_path / "k.strategy")
    assert solved.interrupted and solved.exploitability is None
    assert load_strategy(tmp_path / "k.strategy").iterations == run.iteration == 3  # batches of 1, then 2


def test_settings_of_a_recorded_command() -> None:
    options = ("--algorithm", "abstract", "--abstraction", "ehs2:5:perfect", "--float32", "--every", "50")
    assert SolveSettings.from_options("leduc", options) == SolveSettings(
        game="leduc", algorithm="abstract", abstraction="ehs2:5:perfect", float32=True, every=50
    )
    with pytest.raises(SettingsError, match="'--iterations' is not an option of a solve's settings"):
        SolveSettings.from_options("leduc", ("--iterations", "5"))
    with pytest.raises(SettingsError, match="--every needs a value"):
        SolveSettings.from_options("leduc", ("--every",))
    with pytest.raises(SettingsError, match="--seed 'x' is not a whole number"):
        SolveSettings.from_options("leduc", ("--seed", "x"))

