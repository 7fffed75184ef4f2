"""Strategy files: round trip, header, and the errors a user can act on."""

from __future__ import annotations

from pathlib import Path

import msgpack
import numpy as np
import pytest

from poker.gamedef import format_game, load_game
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.strategy_file import FORMAT, StrategyFile, StrategyFileError, load_strategy, save_strategy
from strategies.cfr.tree.public import BettingAbstraction, Tree, build_tree


def _solved(name: str, abstraction: BettingAbstraction | None = None) -> tuple[StrategyFile, Tree]:
    game = load_game(name)
    tree = build_tree(game, abstraction)
    solver = Solver(tree)
    solver.run(5)
    saved = StrategyFile(
        game=game,
        abstraction=tree.abstraction,
        algorithm="cfr+",
        iterations=solver.iteration,
        exploitability=0.5,
        arrays={"strategy": solver.average_strategy(), "regret": solver.regret},
        settings={"alternating": True, "linear_average": True, "delay": 0},
    )
    return saved, tree


def test_strategy_file_round_trip(tmp_path: Path) -> None:
    saved, tree = _solved("leduc.nolimit", BettingAbstraction((0.5, 2.0)))
    path = tmp_path / "nl.strategy"
    save_strategy(path, saved, tree)
    loaded = load_strategy(path)
    assert loaded.game == saved.game
    assert loaded.abstraction == BettingAbstraction((0.5, 2.0))
    assert (loaded.algorithm, loaded.iterations, loaded.exploitability) == ("cfr+", 5, 0.5)
    assert loaded.settings == saved.settings
    assert loaded.card_abstraction == "none"
    assert sorted(loaded.arrays) == ["regret", "strategy"]
    assert np.array_equal(loaded.strategy, saved.strategy)
    assert loaded.strategy.dtype == np.float64


def test_strategy_file_header_is_readable_alone(tmp_path: Path) -> None:
    saved, tree = _solved("kuhn")
    path = tmp_path / "kuhn.strategy"
    save_strategy(path, saved, tree)
    with open(path, "rb") as stream:
        header = next(iter(msgpack.Unpacker(stream, raw=False)))
    assert header["format"] == FORMAT
    assert header["version"] == 1
    assert header["game"] == format_game(load_game("kuhn"))
    assert header["betting_abstraction"] is None
    assert header["exploitability_unit"] == "chips/hand"


def test_strategy_file_refuses_another_tree(tmp_path: Path) -> None:
    saved, tree = _solved("leduc.nolimit")
    path = tmp_path / "nl.strategy"
    save_strategy(path, saved, tree)
    other = build_tree(load_game("leduc.nolimit"), BettingAbstraction((0.5,)))
    with pytest.raises(StrategyFileError, match="belong to a different public tree"):
        load_strategy(path, tree=other)


def test_strategy_file_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x93\x01\x02")
    with pytest.raises(StrategyFileError, match="not a strategy file"):
        load_strategy(junk)
    newer = tmp_path / "newer"
    newer.write_bytes(msgpack.packb({"format": FORMAT, "version": 99}) + msgpack.packb({}))
    with pytest.raises(StrategyFileError, match="strategy file version 99; this reader knows 1"):
        load_strategy(newer)
    saved, tree = _solved("kuhn")
    with pytest.raises(StrategyFileError, match=r"array 'strategy' has shape \(1, 2, 3\); the tree needs \(4, 2, 3\)"):
        save_strategy(
            tmp_path / "x", StrategyFile(saved.game, None, "cfr+", 0, None, {"strategy": np.zeros((1, 2, 3))}), tree
        )


def test_strategy_file_keeps_suit_isomorphism(tmp_path: Path) -> None:
    game = load_game("leduc")
    tree = build_tree(game, isomorphism=True)
    solver = Solver(tree)
    solver.run(3)
    saved = StrategyFile(game, None, "cfr+", 3, None, {"strategy": solver.average_strategy()}, isomorphism=True)
    save_strategy(tmp_path / "iso", saved, tree)
    loaded = load_strategy(tmp_path / "iso")
    assert loaded.isomorphism
    assert loaded.build_tree().num_decisions == tree.num_decisions


def test_strategy_file_is_on_disk_before_it_replaces_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crash (or the power) between the rename and the kernel's write-back must not
    # leave an empty checkpoint where the previous one was: fsync, then os.replace.
    import os

    from strategies.cfr import file_io

    saved, tree = _solved("kuhn")
    path = tmp_path / "kuhn.strategy"
    save_strategy(path, saved, tree)
    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        steps.append(f"fsync {os.fstat(fd).st_size} bytes")
        real_fsync(fd)

    def replace(source: str, target: Path) -> None:
        steps.append(f"replace {Path(target).name}")
        real_replace(source, target)

    monkeypatch.setattr(file_io.os, "fsync", fsync)
    monkeypatch.setattr(file_io.os, "replace", replace)
    save_strategy(path, saved, tree)
    assert steps == [f"fsync {path.stat().st_size} bytes", "replace kuhn.strategy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kuhn.strategy"]  # no temporary file left
