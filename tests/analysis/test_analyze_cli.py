"""``arena analyze``: tables and JSON from logs, duplicate estimates equal to arena match's, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpc_fixtures import code_blocks
from arena.commands.analyze import main
from arena.commands.match import main as arena_match


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
    assert main([str(tmp_path / "missing.log")]) == 2  # a missing input is usage: docs/exit-statuses.md
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
    assert main([]) == 2
    assert main([str(hulhe), "--format", "xml"]) == 2
    assert main([str(hulhe), "--game", "nosuchgame"]) == 2


@pytest.mark.parametrize("options", [["--format", "xml"], ["--nosuch"], ["--strategy"]])
def test_usage_errors_are_one_line(hulhe: Path, options: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main([str(hulhe), *options]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("arena analyze: error: ") and captured.err.count("\n") == 1 and captured.out == ""


@pytest.fixture(scope="module")
def leduc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("leduc")
    argv = ["leduc", "--hands", "300", "--seed", "3", "leduc-cfr", "always-raise", "--in-process"]
    assert arena_match([*argv, "--run-dir", str(directory)]) == 0
    return directory


ESTIMATORS = ["raw", "basic", "early-folds", "all-cards", "all-cards+early-folds", "aivat"]


def test_estimators_json(leduc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = analyze_json(capsys, str(leduc), "--strategy", "leduc-cfr", "--player", "leduc-cfr")
    assert document["unit"] == "chips/hand"
    assert document["estimated"] == {
        "player": "leduc-cfr",
        "strategy": "leduc-cfr",
        "aivat_values": "TreeValues: the named strategy against itself on the public tree, fixed before the data",
    }
    estimators = document["estimators"]
    assert isinstance(estimators, list)
    assert [e["name"] for e in estimators] == ESTIMATORS
    by_name = {e["name"]: e for e in estimators}
    assert all(e["hands"] == 300 and set(e) == {"name", "mean", "std", "ci95", "hands"} for e in estimators)
    players = document["players"]
    assert isinstance(players, list)
    mine = next(p for p in players if p["name"] == "leduc-cfr")
    raw = by_name["raw"]
    assert raw["mean"] == pytest.approx(mine["mean"], abs=1e-12)
    assert raw["std"] == pytest.approx(mine["std"]) and raw["ci95"] == pytest.approx(mine["ci95"])
    assert by_name["basic"]["mean"] == pytest.approx(raw["mean"])  # on-policy: the money itself
    assert by_name["aivat"]["std"] < raw["std"] / 3
    assert by_name["all-cards+early-folds"]["std"] < raw["std"]
    for e in estimators:
        assert e["ci95"] == pytest.approx(1.96 * e["std"] / 300**0.5)
    # The same figures in the table form.
    assert main([str(leduc), "--strategy", "leduc-cfr", "--player", "leduc-cfr"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[4].startswith("estimators for leduc-cfr playing leduc-cfr (on-policy, full information;")
    assert lines[5].split() == ["estimator", "hands", "chips/hand", "std-dev", "95%", "CI"]
    for line, e in zip(lines[6:], estimators):
        assert line.split() == [e["name"], "300", f"{e['mean']:.3f}", f"{e['std']:.3f}", f"±{e['ci95']:.3f}"]
    assert len(lines) == 6 + len(ESTIMATORS)


def test_no_estimators_without_strategy(leduc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = analyze_json(capsys, str(leduc))
    assert "estimators" not in document


def test_estimator_errors_are_one_line(
    leduc: Path, hulhe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    nolimit = tmp_path / "nl.log"
    nolimit.write_text(
        "# name/game/hands/seed m leduc.nolimit 2 1\n"
        "STATE:0:r300c/cc:Ks|Qh/As:300|-300:a|b\nSTATE:1:cc/cc:Ks|Qh/As:100|-100:b|a\n"
    )
    cases = [
        ([str(leduc), "--strategy", "nosuch", "--player", "leduc-cfr"], 2, "--strategy 'nosuch': unknown strategy"),
        ([str(leduc), "--strategy", "tilt:preset=nosuch", "--player", "leduc-cfr"], 2, "--strategy 'tilt:preset=nosuch'"),
        ([str(leduc), "--strategy", "leduc-cfr", "--player", "nobody"], 2, "--player 'nobody' is not in the logs"),
        ([str(nolimit), "--strategy", "always-raise:size=pot", "--player", "a"], 2, "--strategy 'always-raise:size=pot'"),
        ([str(leduc), "--strategy", "portfolio", "--player", "leduc-cfr"], 2, "--strategy 'portfolio': a portfolio's"),
        ([str(leduc), "--strategy", "always-raise", "--player", "leduc-cfr"], 1, "--strategy 'always-raise' could not"),
        ([str(leduc), "--report", str(tmp_path / "no" / "such" / "r.html")], 1, "cannot write the report"),
    ]
    for argv, status, text in cases:
        assert main(argv) == status, argv
        captured = capsys.readouterr()
        assert captured.err.startswith(f"arena analyze: error: {text}"), captured.err
        assert captured.err.count("\n") == 1 and captured.out == ""
    for argv in ([str(leduc), "--strategy", "leduc-cfr"], [str(leduc), "--player", "leduc-cfr"]):
        assert main(argv) == 2
        assert "--strategy and --player go together" in capsys.readouterr().err


def test_hulhe_estimators_use_the_equity_value_function(hulhe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Hold'em's public tree is too big for exact values: AIVAT runs with
    EquityValues, and on these 80 hands its std-dev is below the money's."""
    from analysis.estimators import EQUITY_VALUES

    document = analyze_json(capsys, str(hulhe), "--strategy", "always-raise", "--player", "always-raise")
    assert document["estimated"] == {"player": "always-raise", "strategy": "always-raise", "aivat_values": EQUITY_VALUES}
    estimators = document["estimators"]
    assert isinstance(estimators, list)
    rows = {row["name"]: row for row in estimators}
    assert rows["raw"]["hands"] == rows["aivat"]["hands"] == 80
    assert rows["aivat"]["std"] < rows["raw"]["std"]


def test_no_limit_estimators_use_the_equity_value_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No-limit Leduc, ``b`` calls everything: AIVAT with EquityValues beside the all-in rows."""
    from analysis.estimators import EQUITY_VALUES

    run = tmp_path / "run"
    argv = ["leduc.nolimit", "--hands", "60", "--seed", "4", "always-call", "always-raise:size=max", "--in-process"]
    assert arena_match([*argv, "--run-dir", str(run)]) == 0
    document = analyze_json(capsys, str(run), "--strategy", "always-call", "--player", "always-call")
    assert document["estimated"]["aivat_values"] == EQUITY_VALUES  # type: ignore[index]
    estimators = document["estimators"]
    assert isinstance(estimators, list)
    rows = {row["name"]: row for row in estimators}
    assert rows["aivat"]["hands"] == 60 and rows["aivat"]["std"] < rows["raw"]["std"]
