"""The HULHE imperfect-recall PCS bot's parts: PCS's ``--plus``/``--linear`` on
the command line, an imperfect-recall PCS file with a lossless round 0 played
by the equilibrium agent in a match over TCP, and the bot's library entry (its
recorded command, its compact playing file seated with an empty cache). The lossless
round 0 itself is tested with the other card abstractions (test_cfr_abstraction.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.commands import match
from poker.gamedef import load_game
from strategies import make_strategy
from strategies.bots import LIBRARY, bot_path, solve_argv
from arena.commands import solve as solve_cli
from strategies.cfr.compact import load_compact
from strategies.cfr.strategy_file import load_strategy
from strategies.equilibrium import EquilibriumStrategy

BOT = "hulhe-ir50"


def test_pcs_plus_and_linear_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "l.strategy"
    argv = ["leduc", "--algorithm", "pcs", "--abstraction", "ehs2:lossless,2:imperfect", "--plus", "--linear"]
    assert solve_cli.main([*argv, "--iterations", "20", "-o", str(out), "--quiet"]) == 0
    saved = load_strategy(out)
    assert (saved.settings["plus"], saved.settings["linear_average"]) == (True, True)
    assert saved.card_abstraction == "ehs2:lossless,2:imperfect"
    capsys.readouterr()
    assert solve_cli.main(["leduc", "--plus", "--iterations", "2", "-o", str(tmp_path / "x"), "--quiet"]) == 2  # usage: docs/exit-statuses.md
    assert "--plus and --linear apply to --algorithm pcs only" in capsys.readouterr().err


def test_an_imperfect_recall_pcs_file_plays_a_match_over_tcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    strategy = tmp_path / "ir.strategy"
    argv = ["leduc", "--algorithm", "pcs", "--abstraction", "ehs2:lossless,2:imperfect", "--iterations", "200"]
    assert solve_cli.main([*argv, "-o", str(strategy), "--quiet"]) == 0
    run = tmp_path / "run"
    spec = f"equilibrium:file={strategy}"
    argv = ["leduc", spec, "always-raise", "--hands", "100", "--seed", "2", "--duplicate", "--in-process"]
    assert match.main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs and [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    assert json.loads((run / "results.json").read_text())


def test_the_hulhe_bot_is_built_by_pcs_and_ships_its_compact_playing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = LIBRARY[BOT]
    argv = solve_argv(bot, "out.strategy")
    assert argv[:5] == ["hulhe", "--algorithm", "pcs", "--abstraction", "ehs2:lossless,50,50,50:imperfect"]
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))  # an empty cache: seated from the package's file
    agent = make_strategy(BOT, load_game("hulhe"), seed=1)
    assert isinstance(agent, EquilibriumStrategy) and agent.table.layout == "buckets"
    saved = load_compact(bot_path(bot))
    assert (saved.algorithm, saved.iterations, saved.card_abstraction) == ("pcs", bot.iterations, argv[4])
    assert list(tmp_path.iterdir()) == []
