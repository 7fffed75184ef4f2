"""``arena analyze``: tables and JSON from logs, duplicate estimates equal to arena match's, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpc_fixtures import code_blocks
from analysis.cli import main
from arena.match import main as arena_match


@pytest.fixture(scope="module")
def hulhe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("hulhe")
    argv = ["hulhe", "--hands", "40", "--seed", "7", "random", "always-raise", "--duplicate", "--in-process"]
    assert arena_match([*argv, "--run-dir", str(directory)]) == 0
    return directory


def analyze_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_json_duplicate_figures_are_arena_matchs_in_mbb(hulhe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = json.loads((hulhe / "results.json").read_text())
    logs = [str(hulhe / "match.1.log"), str(hulhe / "match.2.log")]
    document = analyze_json(capsys, *logs)
    assert document["game"] == "holdem.limit.2p.reverse_blinds" and document["unit"] == "mbb/g"
    assert document["hands"] == 80 and document["logs"] == logs
    duplicate = document["duplicate"]
    assert isinstance(duplicate, dict)
    assert duplicate["sets"] == [logs] and duplicate["hands"] == 40
    assert [(p["name"], p["hands"], p["mean"], p["ci95"]) for p in duplicate["players"]] == [
        (a["name"], a["hands"], a["mean"], a["ci95"]) for a in results["agents"]
    ]
    players = document["players"]
    assert isinstance(players, list)
    assert [(p["name"], p["hands"], p["total_chips"]) for p in players] == [
        (a["name"], 80, a["total_chips"]) for a in results["agents"]
    ]
    assert analyze_json(capsys, str(hulhe)) == document  # a folder: its .log files


def test_table(hulhe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = json.loads((hulhe / "results.json").read_text())
    assert main([str(hulhe / "match.1.hands.msgpack"), str(hulhe / "match.2.hands.msgpack")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "holdem.limit.2p.reverse_blinds: 80 hands in 2 logs, mbb/g"
    assert lines[1].split() == ["player", "hands", "mbb/g", "std-dev", "95%", "CI"]
    assert lines[4] == "duplicate: 1 set of 2 seatings, 40 hands (each averaged over its seatings)"
    for line, agent in zip(lines[6:8], results["agents"]):
        assert line.split() == [agent["name"], "40", f"{agent['mean']:.3f}", f"±{agent['ci95']:.3f}"]


def test_one_log_has_no_duplicate_section(hulhe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = analyze_json(capsys, str(hulhe / "match.1.log"))
    assert document["duplicate"] is None and document["hands"] == 40


def test_reference_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lim2.log"
    path.write_text("\n".join(code_blocks("5.7")[1]) + "\n")
    document = analyze_json(capsys, str(path), "--validate")
    players = document["players"]
    assert isinstance(players, list)
    assert [(p["name"], p["hands"], p["total_chips"], p["mean"]) for p in players] == [
        ("P1", 4, -40.0, -1000.0),  # -10 chips a hand, big blind 10
        ("P2", 4, 40.0, 1000.0),
    ]


def test_errors_are_one_line(hulhe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main([str(tmp_path / "missing.log")]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    damaged = tmp_path / "match.2.log"
    lines = (hulhe / "match.2.log").read_text().splitlines()
    lines[6] = lines[6].replace("STATE:2:", "STATE:2:x", 1)
    damaged.write_text("\n".join(lines) + "\n")
    assert main([str(hulhe / "match.1.log"), str(damaged)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"arena analyze: error: {damaged}:7: ") and err.count("\n") == 1
    assert main([str(hulhe / "match.1.log"), str(damaged), "--skip-damaged"]) == 1  # hand 2 then missing
    assert capsys.readouterr().err.startswith("arena analyze: error: hand 2 is in ")
    assert main([str(damaged), "--skip-damaged"]) == 0
    assert "skipped 1 damaged line of" in capsys.readouterr().out
    kuhn = tmp_path / "kuhn"
    assert arena_match(["kuhn", "--hands", "5", "--seed", "1", "random", "probe", "--in-process", "--run-dir", str(kuhn)]) == 0
    assert main([str(hulhe / "match.1.log"), str(kuhn / "match.log")]) == 1
    assert "is not a log of the same game" in capsys.readouterr().err
    with pytest.raises(SystemExit) as raised:
        main([])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main([str(hulhe), "--format", "xml"])
    assert raised.value.code == 2
    assert main([str(hulhe), "--game", "nosuchgame"]) == 2
