"""``arena tournament``: a real Leduc tournament of five bots (equilibrium, tilt,
DBR, chumps; local pool and a Dask LocalCluster), a 3-player one, config
errors, SIGKILL + ``--resume``, and its printed and HTML report against ``arena
rank`` of the database and of results.csv."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from arena.commands import rank as cli_rank
from arena.commands import match as arena_match
from arena.commands.tournament import main
from arena.tournament import ConfigError, load_config, parse_config, run_tournament, schedule
from arena.tournament import runner as runner_module
from arena.tournament.play import MatchError, MatchInterrupted
from arena.commands import dbr as cli_dbr

ROOT = Path(__file__).resolve().parents[2]

BOTS = {
    "cfr": "leduc-cfr",
    "orange": "tilt:preset=orange",
    "dbr": "",  # equilibrium:file=<a DBR strategy built by the dbr_strategy fixture>
    "caller": "always-call",
    "random": "random",
}
HANDS = 60
SERIES = 2
SEED = 11
PAIRS = 10  # 5 bots, heads-up


@pytest.fixture(scope="module", autouse=True)
def dbr_strategy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data-biased response to `random` (Johanson ch6), built from a 200-hand log, seated as `dbr`."""
    directory = tmp_path_factory.mktemp("dbr")
    argv = ["leduc", "--hands", "200", "--seed", "5", "--in-process", "--run-dir", str(directory / "run"), "random", "leduc-cfr"]
    assert arena_match.main(argv) == 0
    path = directory / "dbr.strategy"
    dbr = [str(directory / "run" / "match.log"), "--opponent", "random", "--p", "1", "--iterations", "200", "-o", str(path)]
    assert cli_dbr.main(dbr) == 0
    BOTS["dbr"] = f"equilibrium:file={path}"
    return path


def write_config(directory: Path, *, output: str = "out", workers: int = 2, **extra: Any) -> Path:
    lines = [
        'game = "leduc"',
        f"hands = {HANDS}",
        f"series = {SERIES}",
        f"seed = {SEED}",
        f"workers = {workers}",
        f'output = "{output}"',
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    lines.append("[bots]")
    lines += [f'{name} = "{spec}"' for name, spec in BOTS.items()]
    path = directory / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def db_results(output: Path) -> dict[str, dict[str, tuple[float, int]]]:
    with sqlite3.connect(output / "tournament.db") as connection:
        rows = connection.execute("SELECT match, player, value, hands FROM results").fetchall()
    results: dict[str, dict[str, tuple[float, int]]] = {}
    for match, player, value, hands in rows:
        assert player not in results.setdefault(match, {})
        results[match][player] = (value, hands)
    return results


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole tournament on a local pool of 2 workers, uninterrupted."""
    directory = tmp_path_factory.mktemp("local")
    config = write_config(directory)
    assert main([str(config)]) == 0
    return directory / "out"


def test_local_tournament_plays_every_pairing_in_every_series(local_run: Path) -> None:
    results = db_results(local_run)
    assert len(results) == PAIRS * SERIES
    pairs = {tuple(sorted(players)) for players in results.values()}
    assert len(pairs) == PAIRS
    for match, players in results.items():
        assert len(players) == 2
        assert sum(value for value, _ in players.values()) == pytest.approx(0.0)  # zero-sum
        assert {hands for _, hands in players.values()} == {2 * HANDS}  # both seatings
    with sqlite3.connect(local_run / "tournament.db") as connection:
        rows = connection.execute('SELECT match, series, seed, logs, seat_values, "values" FROM matches').fetchall()
    for match, series, seed, logs, seat_values, values in rows:
        assert match.startswith(f"s{series}:") and seed == SEED + series  # common seeds across pairings
        paths = [Path(p) for p in json.loads(logs)]
        assert len(paths) == 2 and all(p.is_file() and "SCORE:" in p.read_text() for p in paths)
        assert len(json.loads(seat_values)) == 2 and len(json.loads(values)) == 2
    with open(local_run / "results.csv", newline="") as file:
        rows_csv = list(csv.reader(file))
    assert rows_csv[0] == ["match", "player", "value", "hands"]
    assert len(rows_csv) == 1 + 2 * PAIRS * SERIES
    for match, player, value, hands in rows_csv[1:]:
        assert results[match][player] == (float(value), int(hands))


def test_a_match_equals_arena_match_duplicate_with_the_series_seed(local_run: Path, tmp_path: Path) -> None:
    """The tournament's cfr vs orange in series 1 is `arena match --duplicate` with seed base+1."""
    run_dir = tmp_path / "run"
    argv = ["leduc", "--hands", str(HANDS), "--seed", str(SEED + 1), "--duplicate", "--in-process"]
    assert arena_match.main([*argv, "--run-dir", str(run_dir), "leduc-cfr", "tilt:preset=orange"]) == 0
    agents = json.loads((run_dir / "results.json").read_text())["agents"]
    ours = db_results(local_run)["s1:cfr:orange"]
    assert ours["cfr"][0] == agents[0]["total_chips"]
    assert ours["orange"][0] == agents[1]["total_chips"]


def test_the_report_is_arena_rank_of_the_database_and_of_the_csv(
    local_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tournament ends with the bots, then exactly what `arena rank OUTPUT --game leduc`
    prints (both rankings, the series run-off, the crosstable, the bootstrap); the database
    and results.csv give the same rankings and crosstable."""
    config = write_config(local_run.parent)
    assert main([str(config), "--resume", "--bootstrap", "200"]) == 0  # nothing left to play: the report
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(f"leduc: {PAIRS * SERIES} of {PAIRS * SERIES} duplicate matches")
    assert lines[1].split() == ["bot", "matches", "strategy", "or", "command"]
    assert {line.split()[0]: line.split()[1:] for line in lines[2:7]} == {n: [str(4 * SERIES), s] for n, s in BOTS.items()}
    assert cli_rank.main([str(local_run), "--game", "leduc", "--bootstrap", "200", "--seed", str(SEED)]) == 0
    ranked = capsys.readouterr().out
    assert out == "\n".join(lines[:7]) + "\n\n" + ranked + f"\nreport: {local_run / 'report.html'}\n"
    for rule in ("total bankroll", "bankroll instant run-off", "series instant run-off", "crosstable", "bootstrap"):
        assert f"\n{rule}" in ranked
    documents = []
    for source in (local_run, local_run / "tournament.db", local_run / "results.csv"):
        assert cli_rank.main([str(source), "--format", "json", "--game", "leduc"]) == 0
        doc = json.loads(capsys.readouterr().out)
        documents.append({k: v for k, v in doc.items() if k != "results"})
    assert documents[0] == documents[1] == documents[2]
    assert cli_rank.main([str(local_run), "--format", "json"]) == 0  # the database names its game
    doc = json.loads(capsys.readouterr().out)
    assert (doc["game"], doc["unit"]) == ("leduc.limit.2p", "chips/hand") and doc["bankroll"] == documents[0]["bankroll"]
    assert set(documents[0]["bankroll"]) == set(BOTS) and len(documents[0]["series_runoff"]) >= 2
    page = (local_run / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "src=\"http" not in page and "<script" not in page
    assert str(local_run) not in page  # a page others read (the hosted arena shows it) names no folder of this machine
    assert page.count("data:image/png;base64,") == 2  # total bankroll with intervals; P(row beats column)
    for name in BOTS:
        assert f"<th>{name}</th>" in page


def test_a_new_run_refuses_an_output_that_holds_a_tournament(local_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(local_run.parent)
    assert main([str(config)]) == 2
    assert "holds a tournament: --resume" in capsys.readouterr().err


def test_resume_refuses_another_tournament(local_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(local_run.parent)
    config.write_text(config.read_text().replace("seed = 11", "seed = 12"))
    try:
        assert main([str(config), "--resume"]) == 2
        assert "another seed" in capsys.readouterr().err
    finally:
        write_config(local_run.parent)


def test_dask_local_cluster_gives_the_same_results(local_run: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    config = load_config(write_config(tmp_path))
    # The scheduler's HTTP server on a free port: dashboard_address=None still means 8787,
    # and a second cluster on the machine would make that a warning (an error here).
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
    ) as cluster:
        stored, failures = run_tournament(config, dask=cluster.scheduler_address, progress=False)
    assert failures == []
    assert len(stored) == PAIRS * SERIES
    assert db_results(tmp_path / "out") == db_results(local_run)


def test_three_player_triples_play_six_seatings(tmp_path: Path) -> None:
    document = {
        "game": "kuhn3p",
        "hands": 6,
        "seed": 3,
        "workers": 2,
        "bots": {"caller": "always-call", "raiser": "always-raise", "random": "random", "probe": "probe"},
    }
    config = parse_config(document, tmp_path, "three.toml")
    assert config.output == tmp_path / "three"
    assert len(schedule(config)) == 4
    stored, failures = run_tournament(config, progress=False)
    assert failures == [] and len(stored) == 4
    for rows in stored.values():
        assert len(rows) == 3
        assert {hands for _, _, hands in rows} == {36}
        assert sum(value for _, value, _ in rows) == pytest.approx(0.0)


def test_agent_processes_play_as_in_process_agents_do(tmp_path: Path) -> None:
    """agents = "process": one `python -m agent` per seat, the same seeds, the same results."""
    bots = {"caller": "always-call", "raiser": "always-raise", "cfr": "kuhn-cfr"}
    stored = []
    for agents in ("process", "in-process"):
        document = {"game": "kuhn", "hands": 4, "seed": 2, "workers": 2, "agents": agents, "bots": bots}
        stored_, failures = run_tournament(parse_config(document, tmp_path, agents), progress=False)
        assert failures == []
        stored.append(stored_)
    assert stored[0] == stored[1] and len(stored[0]) == 3
    assert list((tmp_path / "process" / "matches" / "s0_caller_raiser").glob("match.*.player*.std"))


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"game": None}, "game:"),
        ({"game": "no-such-game"}, "game:"),
        ({"game": "holdem.nolimit.6p"}, "game:"),
        ({"hands": None}, "hands:"),
        ({"hands": 1}, "hands:"),
        ({"hands": "ten"}, "hands:"),
        ({"series": 0}, "series:"),
        ({"seed": -1}, "seed:"),
        ({"seed": 2**32 - 1, "series": 2}, "seed:"),
        ({"colour": "red"}, "colour:"),
        ({"bots": {}}, "bots:"),
        ({"bots": {"a": "always-call"}}, "bots:"),
        ({"bots": {"a": "always-call", "b": "no-such-bot"}}, "bots.b:"),
        ({"bots": {"a": "always-call", "b b": "random"}}, "bots.b b:"),
        ({"bots": {"a": "always-call", "b": {"command": "startme.sh"}}}, "bots.b.command:"),
        ({"bots": {"a": "always-call", "b": {"command": "not-executable.sh"}}}, "bots.b.command:"),
        ({"bots": {"a": "always-call", "b": {"command": ""}}}, "bots.b.command:"),
        ({"bots": {"a": "always-call", "b": {"command": "'unclosed"}}}, "bots.b.command:"),
        ({"bots": {"a": "always-call", "b": {"command": 3}}}, "bots.b.command:"),
        ({"bots": {"a": "always-call", "b": {"cmd": "startme.sh"}}}, "bots.b.cmd:"),
        ({"bots": {"a": "always-call", "b": 3}}, "bots.b:"),
        ({"limits": {"t_hand": 5}}, "limits.t_hand:"),
        ({"limits": {"t_response_ms": 0}}, "limits.t_response_ms:"),
        ({"workers": 0}, "workers:"),
        ({"agents": "threads"}, "agents:"),
    ],
)
def test_config_errors_name_the_key(change: dict[str, Any], key: str, tmp_path: Path) -> None:
    document: dict[str, Any] = {"game": "leduc", "hands": 10, "seed": 1, "bots": {"a": "always-call", "b": "random"}}
    (tmp_path / "not-executable.sh").write_text("#!/bin/sh\n")
    document.update(change)
    document = {k: v for k, v in document.items() if v is not None}
    with pytest.raises(ConfigError) as error:
        parse_config(document, tmp_path)
    message = str(error.value)
    assert message.startswith(key) and "\n" not in message


def test_a_huge_config_value_is_quoted_cut(tmp_path: Path) -> None:
    """Issue 24 item 14: an error line quotes at most a few hundred characters of a value."""
    document: dict[str, Any] = {"game": "leduc", "hands": 10, "seed": 1, "agents": "x" * 1_000_000}
    document["bots"] = {"a": "always-call", "b": "random"}
    with pytest.raises(ConfigError) as error:
        parse_config(document, tmp_path)
    assert str(error.value).startswith("agents:") and len(str(error.value)) < 500


def test_config_file_errors_are_one_line_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('game = "leduc"\nhands = 10\nseed = 1\n[bots]\na = "always-call"\nb = "nope"\n')
    assert main([str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"arena tournament: error: {path}: bots.b:")
    path.write_text("game = \n")
    assert main([str(path)]) == 2
    assert "not TOML" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.toml")]) == 2


def test_a_config_that_is_not_utf8_is_one_line_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tomllib raised UnicodeDecodeError: a traceback and status 1."""
    path = tmp_path / "latin1.toml"
    path.write_bytes('game = "leduc"\nhands = 10\nseed = 1\n[bots]\ncafé = "always-call"\n'.encode("latin-1"))
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"arena tournament: error: {path}: not TOML: line 5 is not UTF-8 text\n"
    assert captured.out == ""


MANY = {f"b{i}": "random" for i in range(3000)}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"series": 10**8}, "series: must be in 1..10000, got 100000000"),
        ({"hands": 2**32 - 1}, "hands: must be in 2..10000000, got 4294967295"),
        ({"bots": MANY}, "bots: at most 200 bots, got 3000"),
        (
            {"series": 1000, "bots": dict(list(MANY.items())[:100])},
            "series: 1000 series of 4950 pairings is 4950000 matches; a tournament plays at most 100000",
        ),
    ],
)
def test_a_config_that_asks_too_much_is_refused_at_once(
    change: dict[str, Any], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``series = 100000000`` took 3.3 GB in 40 s and 3000 bots 2.2 GB in 25 s before
    anything was printed: the refusal names the limit, and costs neither (time is this
    process's CPU time: the work the config forces, not how busy other processes keep the cores)."""
    document: dict[str, Any] = {"game": "leduc", "hands": 10, "seed": 1, "bots": {"a": "always-call", "b": "random"}, **change}
    tracemalloc.start()
    started = time.process_time()
    try:
        with pytest.raises(ConfigError) as error:
            parse_config(document, tmp_path)
        elapsed = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(error.value) == said
    assert elapsed < 1.0 and peak < 2**20
    path = tmp_path / "big.toml"
    bots = "".join(f'{name} = "{spec}"\n' for name, spec in document.pop("bots").items())
    path.write_text("".join(f"{key} = {json.dumps(value)}\n" for key, value in document.items()) + "[bots]\n" + bots)
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"arena tournament: error: {path}: {said}\n" and captured.out == ""
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--workers", "two"], ["--bootstrap", "-1"], ["--nosuch"], []])
def test_usage_errors_are_one_line_with_status_2(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = [str(write_config(tmp_path))] if argv else []
    assert main([*config, *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("arena tournament: error: ") and captured.err.count("\n") == 1
    assert captured.out == "" and not (tmp_path / "out").exists()


def tiny_config(directory: Path, output: str) -> Path:
    """Two cheap bots, four hands: a tournament of one match, for what is around it."""
    path = directory / "tiny.toml"
    body = f'game = "leduc"\nhands = 4\nseed = 1\nworkers = 1\noutput = "{output}"\n[bots]\na = "always-call"\nb = "random"\n'
    path.write_text(body)
    return path


def test_an_output_folder_with_other_files_or_that_cannot_be_made_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`output = "/etc"` got tournament.db, results.csv, report.html and matches/ among its
    files; an output under a file said SQLite's or the OS's words, with status 1."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0\n")
    (tmp_path / "afile").write_text("")
    refusals = {
        "etc": "holds files that are not a tournament's (no tournament.db): choose a new or empty folder",
        "afile": "is a file, not a folder",
        "afile/sub": "cannot make the folder: Not a directory",
    }
    for output, said in refusals.items():
        assert main([str(tiny_config(tmp_path, output)), "--bootstrap", "0"]) == 2
        captured = capsys.readouterr()
        assert captured.err == f"arena tournament: error: output {tmp_path / output}: {said}\n" and captured.out == ""
    assert [p.name for p in (tmp_path / "etc").iterdir()] == ["passwd"]
    (tmp_path / "empty").mkdir()
    config = str(tiny_config(tmp_path, "empty"))
    assert main([config, "--bootstrap", "0"]) == 0  # an empty folder is taken
    assert main([config, "--bootstrap", "0", "--resume"]) == 0  # and then it is a tournament's
    assert (tmp_path / "empty" / "tournament.db").exists()


def test_sigkill_then_resume_loses_and_repeats_nothing(local_run: Path, tmp_path: Path) -> None:
    """SIGKILL the runner once its first match row is in, resume, compare with the uninterrupted run."""
    config = write_config(tmp_path, workers=1)
    command = [sys.executable, "-m", "arena", "tournament", str(config)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    database = tmp_path / "out" / "tournament.db"
    runner = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        done = 0
        while done == 0:
            assert runner.poll() is None, "the runner ended before its first match"
            assert time.monotonic() < deadline
            time.sleep(0.02)
            if database.exists():
                try:
                    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
                        done = connection.execute("SELECT count(*) FROM matches").fetchone()[0]
                except sqlite3.OperationalError:  # the schema is being created
                    continue
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        assert 0 < len(db_results(tmp_path / "out")) < PAIRS * SERIES  # stopped part-way
        resumed = subprocess.run(
            [*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert resumed.returncode == 0, resumed.stderr
    finally:
        try:
            os.killpg(runner.pid, signal.SIGKILL)  # a pool worker the killed runner left
        except ProcessLookupError:
            pass
    assert db_results(tmp_path / "out") == db_results(local_run)  # each match once, same values
    with sqlite3.connect(database) as connection:
        keys = [row[0] for row in connection.execute("SELECT match FROM matches")]
    assert len(keys) == len(set(keys)) == PAIRS * SERIES


def test_sigterm_stops_as_ctrl_c_does_and_resume_finishes(tmp_path: Path) -> None:
    """SIGTERM to the runner alone (kill, timeout): status 130 and the resume hint, as
    Ctrl-C gives, with no warning, and its pool workers stop too; it was status 143,
    a multiprocessing warning, and workers that played on."""
    config = tmp_path / "long.toml"
    # 6 matches of 300 hands on 2 workers: SIGTERM, sent as the first starts, lands
    # mid-tournament (a tournament that finished first would exit 0 and fail here).
    bots = "a = \"always-call\"\nb = \"random\"\nc = \"always-raise\"\n"
    config.write_text(f'game = "leduc"\nhands = 300\nseed = 1\nseries = 2\nworkers = 2\noutput = "out"\n[bots]\n{bots}')
    command = [sys.executable, "-m", "arena", "tournament", str(config), "--bootstrap", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runner = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "out" / "matches").glob("*/match.*")):  # a worker is playing
            assert runner.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=60)
        assert runner.returncode == 130
        assert err.rstrip().splitlines()[-1] == f"arena tournament: interrupted; finish with: arena tournament {config} --resume"
        assert "Warning" not in err and "Traceback" not in err
        deadline = time.monotonic() + 10
        while runner.pid in live_groups():
            assert time.monotonic() < deadline, "a worker played on"
            time.sleep(0.1)
    finally:
        try:
            os.killpg(runner.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    resumed = subprocess.run([*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert len(db_results(tmp_path / "out")) == 3 * 2


def test_pool_workers_are_born_with_sigint_blocked() -> None:
    """The forkserver's preload blocks SIGINT, so an interrupt cannot reach a
    worker inside multiprocessing's bootstrap (a traceback after the resume
    hint); no initializer here: the preload alone does it."""
    import concurrent.futures

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=runner_module._pool_context()) as pool:
        mask = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, ()).result(timeout=60)
    assert signal.SIGINT in mask


def test_a_pool_worker_notes_an_interrupt_between_matches() -> None:
    """After its initializer a worker has SIGINT unblocked and handled by the
    note that keeps it out of multiprocessing's queue reads."""
    import concurrent.futures

    context = runner_module._pool_context()
    with concurrent.futures.ProcessPoolExecutor(
        1, mp_context=context, initializer=runner_module._start_worker, initargs=(os.getpid(),)
    ) as pool:
        mask = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, ()).result(timeout=60)
        handler = pool.submit(signal.getsignal, signal.SIGINT).result(timeout=60)
    assert signal.SIGINT not in mask
    assert handler is runner_module._note_interrupt


@pytest.fixture
def worker_state(monkeypatch: pytest.MonkeyPatch) -> Any:
    """This process as a pool worker between matches, not yet interrupted; the
    SIGINT handler and the flag are restored after."""
    monkeypatch.setattr(runner_module, "_interrupted", False)
    before = signal.signal(signal.SIGINT, runner_module._note_interrupt)
    yield
    signal.signal(signal.SIGINT, before)


def _job() -> Any:
    return schedule(parse_config({"game": "kuhn", "hands": 10, "seed": 1, "bots": {"a": "always-call", "b": "always-raise"}}, Path(".")))[0]


def test_a_worker_raises_on_sigint_only_while_it_plays(worker_state: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's own handler for the match (trio turns it into stopping the
    match), the note again after."""
    seen = []

    record: Any = object()

    def play(job: Any) -> Any:
        seen.append(signal.getsignal(signal.SIGINT))
        return record

    monkeypatch.setattr(runner_module, "play_match", play)
    assert runner_module._play(_job()) is record
    assert seen == [signal.default_int_handler]
    assert signal.getsignal(signal.SIGINT) is runner_module._note_interrupt


@pytest.mark.parametrize(
    "interrupt",
    [KeyboardInterrupt(), BaseExceptionGroup("trio", [KeyboardInterrupt()]), MatchInterrupted("s0:a:b: interrupted")],
    ids=["bare", "trio-group", "match"],
)
def test_an_interrupted_worker_plays_no_further_match(
    worker_state: Any, monkeypatch: pytest.MonkeyPatch, interrupt: BaseException
) -> None:
    """The matches queued to the pool ahead would otherwise be played in full
    while the runner waits for its workers (seen: 8 s in 1 of 5 SIGTERM runs)."""
    calls = []

    def play(job: Any) -> None:
        calls.append(job.key)
        raise interrupt

    monkeypatch.setattr(runner_module, "play_match", play)
    job = _job()
    with pytest.raises(type(interrupt)):
        runner_module._play(job)
    with pytest.raises(MatchInterrupted, match=f"^{job.key}: not played, the run was interrupted$"):
        runner_module._play(job)
    assert calls == [job.key]


def test_a_failed_match_does_not_stop_the_worker(worker_state: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def play(job: Any) -> None:
        calls.append(job.key)
        raise MatchError("the dealer aborted")

    monkeypatch.setattr(runner_module, "play_match", play)
    for _ in range(2):
        with pytest.raises(MatchError, match="aborted"):
            runner_module._play(_job())
    assert len(calls) == 2


def test_an_interrupt_that_came_while_idle_stops_the_next_match_before_it_starts(
    worker_state: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Noted, not raised, between matches; the next match is refused."""
    calls: list[Any] = []
    monkeypatch.setattr(runner_module, "play_match", calls.append)
    signal.raise_signal(signal.SIGINT)
    with pytest.raises(MatchInterrupted, match=": not played, the run was interrupted$"):
        runner_module._play(_job())
    assert calls == []


def live_groups() -> list[int]:
    """The process group of every live process (not zombies), from /proc."""
    groups = []
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()  # after the name: state, ppid, pgrp, ...
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            groups.append(int(fields[2]))
    return groups
