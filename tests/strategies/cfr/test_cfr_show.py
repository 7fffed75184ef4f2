"""``arena show``: every information set of a strategy file, exactly its probabilities."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from poker.gamedef import load_game
from arena.commands import show
from arena.commands import solve as cli
from strategies.cfr.strategy_file import BUCKETS, StrategyFile, load_strategy, save_strategy
from strategies.cfr.tree.betting import build_betting_tree


@pytest.fixture(scope="module")
def kuhn_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("show") / "kuhn.strategy"
    assert cli.main(["kuhn", "--iterations", "2000", "-o", str(path), "--quiet"]) == 0
    return path


def _shown(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    assert show.main([*argv, "--format", "json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def test_every_information_set_is_the_files_row(kuhn_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = load_strategy(kuhn_file)
    tree = saved.build_tree()
    rows = _shown(capsys, str(kuhn_file))
    assert len(rows) == 4 * 3  # Kuhn: 4 betting histories with a decision x 3 cards
    expected = [
        (int(tree.player[node]), tree.states[node].betting_string(), h, saved.strategy[d, : len(tree.actions(int(node))), h])
        for d, node in enumerate(tree.decision_nodes)
        for h in range(3)
    ]
    for row, (position, betting, h, probabilities) in zip(rows, expected):
        assert (row["position"], row["betting"], row["hole"]) == (position, betting, "QKA"[h] + "s")
        assert list(row["actions"].values()) == probabilities.tolist()  # full precision, not rounded


def test_kuhn_rows_have_the_equilibrium_shape(kuhn_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Kuhn's equilibria: the first player bets the ace three times as often as the queen,
    # and the second player calls a bet with the king a third of the time.
    opening = {row["hole"]: row["actions"] for row in _shown(capsys, str(kuhn_file), "--betting", "")}
    assert opening["As"]["r"] == pytest.approx(3 * opening["Qs"]["r"], abs=0.01)
    (king,) = _shown(capsys, str(kuhn_file), "--betting", "r", "--hole", "Ks")
    assert king["position"] == 1 and king["actions"]["c"] == pytest.approx(1 / 3, abs=0.01)


def test_table_filters_and_no_limit_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nl.strategy"
    assert cli.main(["leduc.nolimit", "--bet-sizes", "1", "--iterations", "20", "-o", str(path), "--quiet"]) == 0
    capsys.readouterr()
    assert show.main([str(path), "--betting", "r300c/", "--hole", "Ks", "--board", "Kh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].split() == ["pos", "hole", "board", "betting", "actions"]
    assert lines[1].split()[:4] == ["0", "Ks", "Kh", "r300c/"]
    assert lines[1].split()[4::2] == ["c", "r900", "r1200"]  # call, pot, all-in
    assert sum(float(p) for p in lines[1].split()[5::2]) == pytest.approx(1.0, abs=2e-3)


def test_too_big_or_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = load_game("hulhe")
    tree = build_betting_tree(game)  # the fewest columns a bucket table of it can have: one a decision
    path = tmp_path / "hulhe.strategy"
    strategy = StrategyFile(
        game=game, abstraction=None, algorithm="pcs", iterations=1, exploitability=None,
        arrays={"strategy": np.full((3, tree.num_decisions), 1 / 3)}, card_abstraction="ehs2:5:perfect", layout=BUCKETS,
    )  # fmt: skip
    save_strategy(path, strategy, tree)
    assert show.main([str(path)]) == 1
    assert capsys.readouterr().err.startswith(f"arena show: error: {path}: the game's public tree is too big to show (")
    assert show.main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert show.main([str(path), "--hole", "Kx"]) == 2
    assert capsys.readouterr().err.startswith("arena show: error: ")


def test_three_player_file(capsys: pytest.CaptureFixture[str]) -> None:
    # The shipped 3p Kuhn bot: 12 decisions x 4 cards, each row the file's, all three positions.
    from strategies.bots import LIBRARY, bot_path

    path = bot_path(LIBRARY["kuhn3p-cfr"])
    saved = load_strategy(path)
    tree = saved.build_multi_tree()
    rows = _shown(capsys, str(path))
    assert len(rows) == 12 * 4 and {row["position"] for row in rows} == {0, 1, 2}
    for row, (d, h) in zip(rows, [(d, h) for d in range(12) for h in range(4)], strict=True):
        node = int(tree.decision_nodes[d])
        assert row["betting"] == tree.states[node].betting_string()
        names = [str(a) for a in tree.states[node].legal_actions()]
        assert row["actions"] == {n: float(saved.strategy[d, a, h]) for a, n in enumerate(names)}
    (row,) = _shown(capsys, str(path), "--betting", "ccr", "--hole", "As")
    assert row["position"] == 0 and set(row["actions"]) == {"f", "c"}
