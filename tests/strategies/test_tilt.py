"""Tilts (strategies/tilt.py): payoff shifts on hand-built terminals, the zero tilt
as the plain CFR+ solve, the presets of Johanson Table 2.3, the cache, and play."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from arena.commands.match import main as match_main
from poker.gamedef import load_game
from poker.state import CALL, FOLD, Action, ActionType, State
from strategies import StrategyError, make_strategy
from strategies.cfr.best_response.exact import profile_values, strategy_from_policy
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.tree.public import NodeKind, Tree, build_tree
from strategies.tilt import (
    PRESETS,
    Tilt,
    TiltStrategy,
    cache_path,
    load_or_solve,
    solve_tilt,
    tilted_payoff,
)

LEDUC = load_game("leduc")
RAISE = Action(ActionType.RAISE)
# Leduc's private hands in private_hands() order: J J Q Q K K.
J, Q, K = 0, 2, 4


@pytest.fixture(scope="module")
def tree() -> Tree:
    return build_tree(LEDUC)


def node_of(tree: Tree, *actions: Action, board: tuple[int, ...] = ()) -> int:
    """The tree node reached by ``actions`` from the start of a hand (``board``
    dealt in round two)."""
    state = State(LEDUC)
    for action in actions:
        state = state.apply(action)
    betting = state.betting_string()
    found = [
        n for n in range(tree.num_nodes)
        if tree.states[n].betting_string() == betting and tree.boards[tree.board_index[n]] == board
        and tree.kind[n] != NodeKind.CHANCE  # not the deal that follows the same betting
    ]
    assert len(found) == 1, (betting, board, found)
    return found[0]


def test_fold_payoffs_are_scaled_for_the_tilted_position_only(tree: Tree) -> None:
    tilt = Tilt(win=0, lose=0, fold=10, opp_fold=7)
    # r f: position 0 raised to 3, position 1 folds its ante of 1.
    them = node_of(tree, RAISE, FOLD)
    # c r f: position 1 raised, position 0 folds its ante of 1.
    us = node_of(tree, CALL, RAISE, FOLD)
    # r r f: position 1 re-raised to 5, position 0 folds its 3 chips.
    us_more = node_of(tree, RAISE, RAISE, FOLD)
    payoff = tilted_payoff(tree, tilt, 0)
    assert payoff[them, 0, 0] == pytest.approx(1.07, abs=1e-15)  # opponent folded: +1 * 1.07
    assert payoff[them, 1, 0] == -1.0  # the opponent keeps the real payoff
    assert payoff[us, 0, 0] == pytest.approx(-1.10, abs=1e-15)  # we fold: -1 * 1.10
    assert payoff[us, 1, 0] == 1.0
    assert payoff[us_more, 0, 0] == pytest.approx(-3.30, abs=1e-15)  # we fold 3 chips in: -3 * 1.10
    assert payoff[us_more, 1, 0] == 3.0
    # Tilting position 1 instead: the roles swap.
    other = tilted_payoff(tree, tilt, 1)
    assert other[them, 1, 0] == pytest.approx(-1.10, abs=1e-15)
    assert other[them, 0, 0] == 1.0
    assert other[us, 1, 0] == pytest.approx(1.07, abs=1e-15)
    assert other[us, 0, 0] == -1.0


def test_showdown_payoffs_win_lose_tie(tree: Tree) -> None:
    # r c / r c: each position has 1 + 2 + 4 = 7 chips in; slots are [win, tie, lose].
    board = next(b for b in tree.boards if len(b) == 1)
    showdown = node_of(tree, RAISE, CALL, RAISE, CALL, board=board)
    for position in (0, 1):
        payoff = tilted_payoff(tree, PRESETS["red"], position)  # 0, -7, 0, 0
        assert payoff[showdown, position].tolist() == pytest.approx([7.0, 0.0, -6.51], abs=1e-14)
        assert payoff[showdown, 1 - position].tolist() == [7.0, 0.0, -7.0]
        payoff = tilted_payoff(tree, Tilt(win=25, lose=10), position)
        assert payoff[showdown, position].tolist() == pytest.approx([8.75, 0.0, -7.7], abs=1e-14)


def test_tilted_values_on_dealt_hands_through_the_kernels(tree: Tree) -> None:
    """Exact expected tilted payoffs of hand-built deals, through the value walk."""
    always_call = strategy_from_policy(tree, make_strategy("always-call", LEDUC))
    tilt = Tilt(win=10, lose=-20, fold=0, opp_fold=0)

    def values(strategy: npt.NDArray[np.float64], ours: int, theirs: int) -> tuple[float, float]:
        ranges = np.zeros((2, tree.num_hands))
        ranges[0, ours] = ranges[1, theirs] = 1.0
        return profile_values(tree, strategy, payoff=tilted_payoff(tree, tilt, 0), ranges=ranges)

    # K against Q, checked down (1 chip each): position 0 wins on a J board (1/2)
    # and a K board (1/4), loses on a Q board (1/4).
    assert values(always_call, K, Q) == pytest.approx((0.75 * 1.1 - 0.25 * 0.8, -0.5), abs=1e-14)
    assert values(always_call, Q, K) == pytest.approx((0.25 * 1.1 - 0.75 * 0.8, 0.5), abs=1e-14)
    # K against K: every board splits the pot.
    assert values(always_call, K, K + 1) == (0.0, 0.0)
    # Position 0 raises, position 1 folds: +1 whatever the cards, opp-fold tilt 0.
    raise_fold = always_call.copy()
    rows0 = tree.decision_player == 0
    raise_fold[rows0] = strategy_from_policy(tree, make_strategy("always-raise", LEDUC))[rows0]
    raise_fold[~rows0] = strategy_from_policy(tree, make_strategy("always-fold", LEDUC))[~rows0]
    assert values(raise_fold, J, K) == (1.0, -1.0)
    opp_fold = Tilt(opp_fold=-7)
    ranges = np.zeros((2, tree.num_hands))
    ranges[0, J] = ranges[1, K] = 1.0
    got = profile_values(tree, raise_fold, payoff=tilted_payoff(tree, opp_fold, 0), ranges=ranges)
    assert got == pytest.approx((0.93, -1.0), abs=1e-15)


def test_zero_tilt_reproduces_the_equilibrium_solve(tree: Tree) -> None:
    plain = Solver(tree)
    plain.run(500)
    assert np.array_equal(tilted_payoff(tree, Tilt(), 0), tree.payoff)
    assert np.array_equal(tilted_payoff(tree, Tilt(), 1), tree.payoff)
    assert np.array_equal(solve_tilt(tree, Tilt(), 500), plain.average_strategy())


def test_a_nonzero_tilt_changes_the_strategy(tree: Tree) -> None:
    equilibrium = solve_tilt(tree, Tilt(), 300)
    orange = solve_tilt(tree, PRESETS["orange"], 300)
    assert np.abs(orange - equilibrium).max() > 0.1


def test_presets_parse_to_table_2_3() -> None:
    assert {name: tilt.values for name, tilt in PRESETS.items()} == {
        "pink": (0, 0, 0, 0),
        "orange": (7, 0, 0, 7),
        "peach": (0, 0, 0, 7),
        "red": (0, -7, 0, 0),
        "green": (0, -7, 0, -7),
    }


@pytest.mark.parametrize(
    ("spec", "values"),
    [
        ("tilt:preset=orange", (7, 0, 0, 7)),
        ("tilt:preset=green", (0, -7, 0, -7)),
        ("tilt:win=4", (4, 0, 0, 0)),
        ("tilt:win=1.5,lose=-2,fold=3,opp-fold=-25", (1.5, -2, 3, -25)),
        ("tilt:preset=peach,win=2", (2, 0, 0, 7)),
        ("tilt", (0, 0, 0, 0)),
    ],
)
def test_specs_build_their_tilt(spec: str, values: tuple[float, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    strategy = make_strategy(spec + (",iterations=50" if ":" in spec else ":iterations=50"), LEDUC)
    assert isinstance(strategy, TiltStrategy)
    assert strategy.tilt.values == values
    assert strategy.iterations == 50


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tilt:preset=blue", "preset='blue' is not one of"),
        ("tilt:win=lots", "win='lots' is not a number"),
        ("tilt:lose=150", "not a percentage"),
        ("tilt:win=nan", "not a percentage"),
        ("tilt:iterations=0", "iterations='0'"),
        ("tilt:colour=red", "has no option colour"),
    ],
)
def test_bad_specs_are_refused(spec: str, message: str) -> None:
    with pytest.raises(StrategyError, match=message):
        make_strategy(spec, LEDUC)


def test_a_game_too_big_to_solve_is_refused() -> None:
    with pytest.raises(StrategyError, match="whole public tree"):
        make_strategy("tilt:preset=orange", load_game("hulhe"))


def test_the_strategy_is_cached_and_a_damaged_cache_is_solved_again(tmp_path: Path) -> None:
    tilt = PRESETS["peach"]
    path = cache_path(LEDUC, tilt, 60, tmp_path)
    solved = load_or_solve(LEDUC, tilt, 60, cache_dir=tmp_path).strategy
    assert path.is_file()
    stamp = path.stat().st_mtime_ns
    cached = load_or_solve(LEDUC, tilt, 60, cache_dir=tmp_path)
    assert path.stat().st_mtime_ns == stamp
    assert np.array_equal(cached.strategy, solved)
    assert cached.settings["tilt_win"] == 0.0 and cached.settings["tilt_opp_fold"] == 7.0
    path.write_bytes(path.read_bytes()[:100])
    again = load_or_solve(LEDUC, tilt, 60, cache_dir=tmp_path).strategy
    assert np.array_equal(again, solved)
    assert cache_path(LEDUC, PRESETS["orange"], 60, tmp_path) != path


def test_policy_is_the_solved_rows(tree: Tree, tmp_path: Path) -> None:
    strategy = TiltStrategy(LEDUC, PRESETS["orange"], 200, cache_dir=tmp_path)
    assert np.array_equal(strategy_from_policy(tree, strategy), solve_tilt(tree, PRESETS["orange"], 200))


def test_tilt_plays_a_leduc_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    argv = ["leduc", "--hands", "60", "--seed", "3", "tilt:preset=orange,iterations=200", "random", "--in-process"]
    assert match_main([*argv, "--run-dir", str(run)]) == 0
    agents = json.loads((run / "results.json").read_text())["agents"]
    assert [a["total_chips"] for a in agents][0] == -[a["total_chips"] for a in agents][1]
    assert "WARNING" not in (run / "match.log").read_text()
