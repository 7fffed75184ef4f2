"""The library of named bots (strategies/bots.py, `arena bots`): listing, the
shipped files (rebuilt byte for byte by their recorded commands, exploitability
equal to the recorded figure, a short match each without dealer WARNINGs), the
one-line error of a bot not built, and `arena bots build` into the cache."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analysis.policy_values import PREFLOP_SAMPLES
from arena.commands import match
from poker.gamedef import load_game
from poker.stats import unit_of
from strategies import StrategyError, make_strategy, strategy_names
from strategies.bots import DATA_DIR, LIBRARY, Bot, bot_path, load_bot, partial_path, solve_argv
from arena.commands import solve as solve_cli
from arena.commands import bots as cli_bots
from arena.commands import exploitability as cli_exploitability
from strategies.cfr.abstraction.cache_files import default_cache_dir
from strategies.cfr.compact import load_compact
from strategies.cfr.runs import SolveSettings
from strategies.cfr.strategy_file import load_strategy

#: The shipped strategy files (a compact bot's playing file is tested apart: its solve is built, not shipped).
SHIPPED = [name for name, bot in LIBRARY.items() if bot.shipped and not bot.compact]
#: Rebuilding leduc3p-cfr takes 3000 three-player iterations (about 35 s).
REBUILT = [pytest.param(n, marks=pytest.mark.slow) if n == "leduc3p-cfr" else n for n in SHIPPED]
FIELDS = {"name": str, "game": str, "file": str, "built": bool, "command": str}


def test_the_library_holds_the_small_and_large_bots() -> None:
    assert SHIPPED == ["kuhn-cfr", "leduc-cfr", "leduc-nl-pot", "leduc-nl-3sizes", "kuhn3p-cfr", "leduc3p-cfr"]
    built_here = [n for n, b in LIBRARY.items() if not b.shipped]
    assert built_here == ["hulhe-ehs2-5", "hunl-ehs2-3", "holdem3p-ehs2"]
    assert [n for n, b in LIBRARY.items() if b.compact] == ["hulhe-ehs2-5", "hulhe-ir50", "hunl-ehs2-3", "hunl-modicum"]
    assert [n for n, b in LIBRARY.items() if b.shipped and b.compact] == ["hulhe-ir50", "hunl-modicum"]
    assert [n for n, b in LIBRARY.items() if b.agent != "equilibrium"] == ["hunl-modicum"]
    assert set(LIBRARY) <= set(strategy_names())


def test_listing_table(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))  # an empty cache, whatever this machine has built
    assert cli_bots.main([]) == 0
    out = capsys.readouterr().out
    for name, bot in LIBRARY.items():
        assert name in out and bot.description in out
    assert "arena solve leduc --suit-isomorphism --iterations 10000 -o leduc-cfr.strategy" in out
    assert "8.19222e-06 chips/hand" in out
    assert "arena bots build hulhe-ehs2-5" in out
    assert "arena solve leduc.limit.3p --iterations 3000 -o leduc3p-cfr.strategy" in out
    assert "0.00280139 chips/hand (seven-step epsilon)" in out
    assert "best-response gains by position: 0.00231527, 0.00270643, 0.00338248 chips/hand" in out


def test_listing_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    assert cli_bots.main(["--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == list(LIBRARY)
    for row in rows:
        bot = LIBRARY[row["name"]]
        assert {"name", "game", "file", "built", "command", "quality"} <= set(row)
        for key, kind in FIELDS.items():
            assert isinstance(row[key], kind), key
        assert row["command"].startswith(f"arena solve {bot.game} ") and row["command"].endswith(".strategy")
        assert row["file"] == str(bot_path(bot))
        assert row["gains"] == (None if bot.gains is None else list(bot.gains))
        assert row["compact"] is bot.compact
        if bot.shipped and bot.compact:  # a hold'em bot's playing file: no exploitability, rebuilt by its build
            assert row["built"] is True and row["file"] == str(DATA_DIR / f"{bot.name}.compact")
            assert row["build"] == f"arena bots build {bot.name}" and str(tmp_path / "bots") in row["command"]
            assert Path(row["file"]).stat().st_size < 8 << 20
        elif bot.shipped:
            assert row["built"] is True and row["quality"] == bot.quality and row["unit"] == "chips/hand"
            assert row["quality_kind"] == ("exact" if bot.gains is None else "seven-step epsilon")
            assert Path(row["file"]).stat().st_size < 4 << 20  # a few MB at most
        else:
            assert row["built"] is False and row["quality"] is None
            assert row["file"].startswith(str(tmp_path / "bots"))
            assert row["build"] == f"arena bots build {bot.name}"


@pytest.mark.parametrize("name", REBUILT)
def test_shipped_file_is_rebuilt_byte_for_byte_by_its_command(name: str, tmp_path: Path) -> None:
    bot = LIBRARY[name]
    out = tmp_path / f"{name}.strategy"
    assert solve_cli.main([*solve_argv(bot, out), "--quiet"]) == 0
    assert out.read_bytes() == bot_path(bot).read_bytes()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_exploitability_is_the_recorded_figure(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    bot = LIBRARY[name]
    assert bot.quality is not None
    path = bot_path(bot)
    saved = load_strategy(path)
    assert saved.exploitability == bot.quality and saved.gains == bot.gains
    assert cli_exploitability.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    unit = unit_of(load_game(bot.game))
    assert lines[-1] == f"exploitability: {unit.format(bot.quality, 9)}"
    if bot.gains is not None:  # the seven-step check walked again: each position's gain as stored
        assert [line.split(", gain ")[1] for line in lines[1:4]] == [unit.format(g, 9) for g in bot.gains]
        assert bot.quality == sum(bot.gains) / 3


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_bot_plays_a_match_by_name(name: str, tmp_path: Path) -> None:
    run = tmp_path / "run"
    game = LIBRARY[name].game
    others = ["random"] * (load_game(game).num_players - 1)
    argv = [game, name, *others, "--hands", "200", "--seed", "3", "--duplicate", "--in-process"]
    assert match.main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs
    assert [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    results = json.loads((run / "results.json").read_text())
    assert name in json.dumps(results)


def test_missing_bot_fails_at_once_naming_its_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    with pytest.raises(StrategyError) as error:
        make_strategy("hulhe-ehs2-5", load_game("hulhe"))
    message = str(error.value)
    assert "\n" not in message and "`arena bots build hulhe-ehs2-5`" in message
    assert str(tmp_path / "bots" / "hulhe-ehs2-5.strategy") in message
    run = tmp_path / "run"
    argv = ["hulhe", "hulhe-ehs2-5", "random", "--hands", "10", "--seed", "1", "--in-process"]
    code = match.main([*argv, "--run-dir", str(run)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "arena bots build hulhe-ehs2-5" in err[0]


def test_other_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))  # an empty cache
    with pytest.raises(StrategyError, match="plays leduc, not this game"):
        make_strategy("leduc-cfr", load_game("kuhn"))
    with pytest.raises(StrategyError, match="not built.*`arena bots build holdem3p-ehs2`"):
        make_strategy("holdem3p-ehs2", load_game("holdem.limit.3p"))
    with pytest.raises(StrategyError, match="has no option"):
        make_strategy("leduc-cfr:file=x", load_game("leduc"))
    assert cli_bots.main(["build", "no-such-bot"]) == 2  # a name the command line gets wrong: docs/exit-statuses.md
    assert cli_bots.main(["build", "kuhn-cfr"]) == 0  # shipped: nothing to build


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_a_build_solves_what_the_recorded_command_names(name: str) -> None:
    """``arena bots build`` reads the bot's options as settings, not through argv:
    they must be the settings ``arena solve`` parses from the recorded command."""
    bot = LIBRARY[name]
    args = solve_cli._parser().parse_args(solve_argv(bot, "out.strategy"))
    assert SolveSettings.from_options(bot.game, bot.options) == solve_cli._settings(args)


TINY = Bot(
    "test-leduc-abstract",
    "leduc",
    "test only: CFR+ on a 3-bucket abstract Leduc",
    options=("--algorithm", "abstract", "--abstraction", "ehs2:3:perfect", "--every", "10"),
    iterations=20,
)


def test_build_writes_the_file_to_the_cache_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    monkeypatch.setitem(LIBRARY, TINY.name, TINY)
    game = load_game("leduc")
    with pytest.raises(StrategyError, match="is not built"):
        load_bot(TINY, game)
    # An interrupted build: a checkpoint at iteration 10 in the partial file.
    partial = partial_path(TINY)
    partial.parent.mkdir(parents=True)
    argv = solve_argv(TINY, partial)
    argv[argv.index("--iterations") + 1] = "10"
    assert solve_cli.main([*argv, "--quiet"]) == 0
    with pytest.raises(StrategyError, match="is interrupted"):
        load_bot(TINY, game)
    capsys.readouterr()
    assert cli_bots.main(["build", TINY.name, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "resuming" in out and f"built {TINY.name}" in out
    final = tmp_path / "bots" / f"{TINY.name}.strategy"
    assert final.is_file() and not partial.exists()
    saved = load_strategy(final)
    assert saved.iterations == 20 and saved.exploitability is not None
    assert load_bot(TINY, game, seed=1).table.game == game
    assert cli_bots.main(["build", TINY.name]) == 0 and "is built" in capsys.readouterr().out
    assert cli_bots.main(["--format", "json"]) == 0
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["name"] == TINY.name]
    assert row["built"] is True and row["file"] == str(final) and row["quality"] == saved.exploitability


def test_fresh_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    monkeypatch.setitem(LIBRARY, TINY.name, TINY)
    assert cli_bots.main(["build", TINY.name, "--quiet"]) == 0
    assert load_strategy(tmp_path / "bots" / f"{TINY.name}.strategy").iterations == 20


def test_a_build_stopped_before_its_rename_is_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # SIGTERM after the solve wrote its finished file and before the rename: an
    # es-mccfr file keeps no regrets, so resuming it failed ("remove ... to build
    # from the start"); it is the built file.
    sampled = ("--algorithm", "es-mccfr", "--abstraction", "none", "--every", "10")
    bot = dataclasses.replace(TINY, name="test-kuhn3p-es-mccfr", game="kuhn3p", options=sampled)
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    monkeypatch.setitem(LIBRARY, bot.name, bot)
    partial = partial_path(bot)
    partial.parent.mkdir(parents=True)
    assert solve_cli.main([*solve_argv(bot, partial), "--quiet"]) == 0
    finished = partial.read_bytes()
    assert "regret" not in load_strategy(partial).arrays
    capsys.readouterr()
    assert cli_bots.main(["build", bot.name, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == f"built {bot.name}: {bot_path(bot)}\n"
    assert bot_path(bot).read_bytes() == finished and not partial.exists()


def test_a_partial_file_of_another_solve_is_not_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    monkeypatch.setitem(LIBRARY, TINY.name, TINY)
    partial = partial_path(TINY)
    partial.parent.mkdir(parents=True)
    other = ["leduc", "--algorithm", "abstract", "--abstraction", "hs:2:perfect", "--iterations", "5"]
    assert solve_cli.main([*other, "-o", str(partial), "--quiet"]) == 0
    capsys.readouterr()
    assert cli_bots.main(["build", TINY.name, "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "--abstraction ehs2:3:perfect" in err and f"remove {partial}" in err
    assert not (tmp_path / "bots" / f"{TINY.name}.strategy").exists()


@pytest.mark.parametrize("name", [n for n in SHIPPED if LIBRARY[n].gains is not None])
def test_the_results_page_states_the_three_player_epsilon_of_the_shipped_file(name: str) -> None:
    bot = LIBRARY[name]
    assert bot.quality is not None and bot.gains is not None
    results = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text()
    gains = " / ".join(f"{g:.6g}" for g in bot.gains)
    row = f"| `{name}` | {load_strategy(bot_path(bot)).exploitability:.6g} | {gains} |"
    assert row in results


@pytest.mark.slow
def test_three_player_bot_plays_as_agent_processes_over_tcp(tmp_path: Path) -> None:
    """`arena match` without --in-process: each seat is an `arena agent` process
    (python -m agent) talking ACPC over TCP, in all six seatings; no WARNING."""
    run = tmp_path / "run"
    argv = ["leduc.limit.3p", "leduc3p-cfr", "always-raise", "probe", "--hands", "60", "--seed", "5", "--duplicate"]
    assert match.main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert len(list(run.glob("*.log"))) == 6
    assert [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    results = json.loads((run / "results.json").read_text())
    assert "leduc3p-cfr" in json.dumps(results)


COMPACT_TINY = dataclasses.replace(TINY, name="test-leduc-compact", compact=True)


def test_a_compact_bot_is_built_with_its_playing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    monkeypatch.setitem(LIBRARY, COMPACT_TINY.name, COMPACT_TINY)
    assert cli_bots.main(["build", COMPACT_TINY.name, "--quiet"]) == 0
    out = capsys.readouterr().out
    solve, playing = tmp_path / "bots" / f"{COMPACT_TINY.name}.strategy", tmp_path / "bots" / f"{COMPACT_TINY.name}.compact"
    assert f"built {COMPACT_TINY.name}: {solve}" in out and f"playing file: {playing}" in out
    assert bot_path(COMPACT_TINY) == playing and load_compact(playing).iterations == 20
    assert load_bot(COMPACT_TINY, load_game("leduc"), seed=1).table.game == load_game("leduc")
    # A solve built before compact files: played as it is until the build writes the compact file (no new solve).
    playing.unlink()
    assert bot_path(COMPACT_TINY) == solve
    assert cli_bots.main(["build", COMPACT_TINY.name, "--quiet"]) == 0
    assert "playing file" in capsys.readouterr().out and bot_path(COMPACT_TINY) == playing
    assert cli_bots.main(["build", COMPACT_TINY.name]) == 0 and f"is built: {playing}" in capsys.readouterr().out


def test_a_shipped_compact_bot_is_rebuilt_into_the_cache_and_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = dataclasses.replace(COMPACT_TINY, shipped=True)
    package = tmp_path / "package"
    package.mkdir()
    monkeypatch.setattr("strategies.bots.DATA_DIR", package)
    monkeypatch.setitem(LIBRARY, shipped.name, shipped)
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "first"))
    assert cli_bots.main(["build", shipped.name, "--quiet"]) == 1  # no package file to compare with yet
    (tmp_path / "first" / "bots" / f"{shipped.name}.compact").rename(package / f"{shipped.name}.compact")
    capsys.readouterr()
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "second"))
    assert bot_path(shipped) == package / f"{shipped.name}.compact"
    assert cli_bots.main(["build", shipped.name, "--quiet"]) == 0
    assert f"it plays exactly as the package's {package / shipped.name}.compact" in capsys.readouterr().out


@pytest.mark.parametrize("opponent", ["always-raise:size=max", "random:size=uniform"])
@pytest.mark.parametrize(("name", "hands"), [("hulhe-ir50", 50), ("hunl-modicum", 4)])
def test_the_shipped_holdem_bots_are_seated_at_once_with_an_empty_cache(
    name: str, hands: int, opponent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scoring's own table (hulhe-ir50's AIVAT: a minute to build, arena warmup builds it) is lent from the
    # user's cache: what is checked is that play builds nothing.
    table = default_cache_dir() / "tables" / f"preflop-equities-13x4-{PREFLOP_SAMPLES}.bin"
    cache = tmp_path / "cache"
    cache.mkdir()
    lent = {cache / "tables" / table.name} if table.is_file() else set()
    for path in lent:
        path.parent.mkdir()
        path.symlink_to(table)
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(cache))
    run = tmp_path / "run"
    argv = [LIBRARY[name].game, name, opponent, "--hands", str(hands), "--seed", "3", "--duplicate", "--in-process"]
    assert match.main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs and [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    built = {path for path in cache.rglob("*") if not path.is_dir()} - lent
    assert built <= {cache / "tables" / table.name}  # nothing for play: the package's file holds what it needs
