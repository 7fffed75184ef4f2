"""RNR and DBR counter-strategies (strategies/dbr.py, arena dbr): P_conf values,
model counting from a hand-written log, the p = 0 / P_max = 0 equilibrium and the
p = 1 best-response ends on Kuhn, and the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from analysis.logs import read_log
from poker.gamedef import load_game
from strategies.cfr.best_response.exact import best_response
from arena.commands.dbr import main
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.strategy_file import load_strategy
from strategies.cfr.tree.public import Tree, build_tree
from strategies.dbr import (
    DBRError,
    OpponentModel,
    count_model,
    counter_strategy,
    exploitation,
    p_conf,
    random_strategy,
)

ITERATIONS = 3000

# Kuhn: hands Qs Ks As (rows 0, 1, 2); decisions "" (pos 0: c r), "c" (pos 1: c r),
# "r" (pos 1: f c), "cr" (pos 0: f c). B sits at position 1 in hands 0 and 2, at 0 in hand 1.
LOG = """# name/game/hands/seed m kuhn 4 1
STATE:0:rc:Ks|Qs:2|-2:A|B
STATE:1:crf:Ks|Qs:-1|1:B|A
STATE:2:cc:As|Ks:1|-1:A|B
STATE:3:rf:Qs|As:1|-1:A|C
"""


@pytest.fixture(scope="module")
def kuhn() -> Tree:
    return build_tree(load_game("kuhn"))


def _row(tree: Tree, betting: str) -> int:
    return next(d for d, node in enumerate(tree.decision_nodes) if tree.states[node].betting_string() == betting)


def _known_opponent(tree: Tree) -> npt.NDArray[np.float64]:
    return random_strategy(tree, 3)


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("1-step", [0, 0.8, 0.8, 0.8, 0.8, 0.8]),
        ("10-step", [0, 0, 0, 0.8, 0.8, 0.8]),
        ("0-10-linear", [0, 0.08, 0.4, 0.8, 0.8, 0.8]),
        ("s-curve", [0, 0.4, 0.8 * 5 / 6, 0.8 * 10 / 11, 0.8 * 11 / 12, 0.8 * 100 / 101]),
    ],
)
def test_p_conf_values(function: str, expected: list[float]) -> None:
    np.testing.assert_allclose(p_conf(function, [0, 1, 5, 10, 11, 100], 0.8), expected, rtol=0, atol=1e-15)


def test_p_conf_rejects_bad_settings() -> None:
    with pytest.raises(DBRError, match="P_max"):
        p_conf("1-step", [1], 1.5)
    with pytest.raises(DBRError, match="unknown P_conf"):
        p_conf("2-step", [1], 0.5)
    with pytest.raises(DBRError, match="unknown P_conf") as long:  # a name from the command line is quoted cut
        p_conf("x" * 100_000, [1], 0.5)
    assert len(str(long.value)) < 500 and "more characters" in str(long.value)


def test_counts_from_a_hand_written_log(tmp_path: Path, kuhn: Tree) -> None:
    path = tmp_path / "m.log"
    path.write_text(LOG)
    hands = read_log(path)
    model = count_model(kuhn, hands, "B")
    expected = np.zeros_like(model.counts)
    expected[_row(kuhn, "r"), 1, 0] = 1  # hand 0: B (pos 1, Qs) calls a raise
    expected[_row(kuhn, ""), 0, 1] = 1  # hand 1: B (pos 0, Ks) checks ...
    expected[_row(kuhn, "cr"), 0, 1] = 1  # ... and folds to the raise
    expected[_row(kuhn, "c"), 0, 1] = 1  # hand 2: B (pos 1, Ks) checks behind
    np.testing.assert_array_equal(model.counts, expected)
    assert model.hands == 3
    fixed = model.strategy()
    assert fixed[_row(kuhn, "r"), :2, 0].tolist() == [0.0, 1.0]
    assert fixed[_row(kuhn, "r"), :2, 2].tolist() == [0.0, 1.0]  # unobserved: always call
    assert fixed[_row(kuhn, ""), :2, 1].tolist() == [1.0, 0.0]
    showdowns = count_model(kuhn, hands, "B", showdown_only=True)
    assert showdowns.hands == 2
    assert showdowns.counts[_row(kuhn, "cr")].sum() == 0
    with pytest.raises(DBRError, match="no player 'D'"):
        count_model(kuhn, hands, "D")


def test_full_confidence_is_a_best_response_to_the_model(kuhn: Tree) -> None:
    opponent = _known_opponent(kuhn)
    model = OpponentModel(kuhn, opponent * 1000.0, 1000)  # "full data": every n_I = 1000
    target = float(np.mean(best_response(kuhn, opponent).values))
    for method in ("dbr", "rnr"):
        ours = counter_strategy(model, method, 1.0, iterations=ITERATIONS)
        assert exploitation(kuhn, ours, opponent) == pytest.approx(target, abs=2e-3)


@pytest.mark.parametrize("method", ["dbr", "rnr"])
def test_zero_confidence_is_the_equilibrium_solve(kuhn: Tree, method: str) -> None:
    model = OpponentModel(kuhn, _known_opponent(kuhn) * 50.0, 50)
    ours = counter_strategy(model, method, 0.0, iterations=500)
    solver = Solver(kuhn)
    solver.run(500)
    np.testing.assert_array_equal(ours, solver.average_strategy())


def test_confidence_trades_exploitation_for_exploitability(kuhn: Tree) -> None:
    opponent = _known_opponent(kuhn)
    model = OpponentModel(kuhn, opponent * 1000.0, 1000)
    half = counter_strategy(model, "dbr", 0.5, iterations=ITERATIONS)
    nash = counter_strategy(model, "dbr", 0.0, iterations=ITERATIONS)
    full = counter_strategy(model, "dbr", 1.0, iterations=ITERATIONS)
    values = [exploitation(kuhn, s, opponent) for s in (nash, half, full)]
    assert values[0] < values[1] < values[2] + 1e-9
    risks = [float(np.mean(best_response(kuhn, s).values)) for s in (nash, half, full)]
    assert risks[0] < risks[1] <= risks[2] + 1e-9


def test_command_line_writes_a_strategy_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.log"
    path.write_text(LOG)
    out = tmp_path / "b.strategy"
    assert main([str(path), "--opponent", "B", "--method", "dbr", "--p", "0.9", "-o", str(out), "--iterations", "300"]) == 0
    saved = load_strategy(out)
    assert saved.algorithm == "dbr"
    assert saved.settings["opponent"] == "B" and saved.settings["hands"] == 3 and saved.settings["pconf"] == "0-10-linear"
    assert "3 hands, 4 decisions observed" in capsys.readouterr().out
    assert main([str(path), "--opponent", "Z", "--method", "rnr", "--p", "1", "-o", str(out)]) == 1
    assert "no player 'Z'" in capsys.readouterr().err
