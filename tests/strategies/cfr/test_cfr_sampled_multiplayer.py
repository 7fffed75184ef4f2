"""Sampled three-player CFR (external-sampling MCCFR over card buckets) and its
``three-player-buckets`` strategy files: the betting graph against the explicit
three-player tree, convergence to the exact solver's seven-step epsilon on 3p
Kuhn and Leduc, deterministic builds and resumes, the agent over TCP, calling
past the betting cut, and refused files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import msgpack
import numpy as np
import pytest

from arena.commands import match
from arena.commands import solve as cli
from poker.deal import private_hands
from poker.gamedef import format_game, load_game, parse_game
from poker.protocol import MatchState
from poker.state import CALL, Action, ActionType, State
from strategies.base import PublicState
from strategies.cfr.solvers.multiplayer import MultiCFR, seven_step_epsilon
from strategies.cfr.solvers.sampled_files import Epsilon, sampled_file
from strategies.cfr.solvers.sampled_multiplayer import SampledCFR, expand, make_table, policy_rows
from strategies.cfr.strategy_file import StrategyFileError, load_strategy, save_strategy
from strategies.cfr.tree.betting_graph import build_betting_graph, parse_cut
from strategies.cfr.tree.multi import build_multi_tree
from strategies.cfr.tree.public import TreeError
from strategies.equilibrium import EquilibriumStrategy, load_table

KUHN3P = load_game("kuhn3p")
LEDUC3P = load_game("leduc.limit.3p")
HOLDEM3P = load_game("holdem.limit.3p")
RAISE = Action(ActionType.RAISE)


def test_graph_counts_the_explicit_trees_decisions() -> None:
    """The graph's per-round decision counts and node numbering agree with the
    explicit three-player tree (built node by node from poker.state): every
    betting state of the tree is located, and distinct bettings get distinct
    (round, index) slots filling 0..D_r - 1."""
    for game in (KUHN3P, LEDUC3P):
        graph = build_betting_graph(game)
        tree = build_multi_tree(game)
        slots: dict[str, tuple[int, int]] = {}
        for node in tree.decision_nodes:
            state = tree.states[int(node)]
            located = graph.locate(state)
            assert located is not None
            r = int(graph.round[located[0]])
            slots[state.betting_string()] = (r, located[1][r])
        for r, count in enumerate(graph.decisions):
            assert sorted(i for q, i in slots.values() if q == r) == list(range(count))
    # 3p limit hold'em: 9,711,806 decisions with the full caps, 5,074,280 with PR2's river cut
    assert sum(build_betting_graph(HOLDEM3P).decisions) == 9_711_806
    assert build_betting_graph(HOLDEM3P, (3, 4, 4, 3)).decisions == (90, 4412, 205962, 4863816)


def test_cut_parsing() -> None:
    assert parse_cut("3,4,4,3", HOLDEM3P) == (3, 4, 4, 3)
    for bad in ("3,4,4", "3,4,4,5", "0,4,4,4", "x"):
        with pytest.raises(TreeError):
            parse_cut(bad, HOLDEM3P)


def _epsilon(game_name: str, iterations: int, seed: int = 0) -> tuple[float, float]:
    """(seven-step epsilon of the sampled solve, of the uniform profile)."""
    game = load_game(game_name)
    table = make_table(game, "none", None)
    solver = SampledCFR(table, seed=seed)
    exact = MultiCFR(build_multi_tree(game))
    uniform = seven_step_epsilon(exact, expand(table, solver.average_strategy(), exact.tree)).epsilon
    solver.run(iterations)
    return seven_step_epsilon(exact, expand(table, solver.average_strategy(), exact.tree)).epsilon, uniform


def test_kuhn3p_converges() -> None:
    """20,000 iterations, seed 0: epsilon 0.00743 (measured), against 0.6875 for
    uniform play; the exact CFR+ reaches 3.8e-5 in 10,000 full iterations."""
    sampled, uniform = _epsilon("kuhn3p", 20_000)
    assert uniform == pytest.approx(0.6875)
    assert sampled < 0.01


def test_leduc3p_converges() -> None:
    """100,000 iterations, seed 0: epsilon 0.300 chips/hand (measured), against
    4.20 for uniform play (Abou Risk & Szafron's vanilla CFR: 0.12 after 10^8 iterations)."""
    sampled, uniform = _epsilon("leduc.limit.3p", 100_000)
    assert uniform == pytest.approx(4.2037, abs=1e-3)
    assert sampled < 0.35


def _solve(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / name
    argv = ["--algorithm", "es-mccfr", "--abstraction", "none", "--quiet", "-o", str(out), *extra]
    assert cli.main(argv) == 0
    return out


def test_same_seed_same_bytes_and_resume(tmp_path: Path) -> None:
    """Two solves with one seed write the same bytes; another seed does not; a
    checkpoint at 600 iterations resumed to 1,500 gives the bytes of 1,500 at once."""
    first = _solve(tmp_path, "a.strategy", "kuhn3p", "--iterations", "1500", "--seed", "3")
    again = _solve(tmp_path, "b.strategy", "kuhn3p", "--iterations", "1500", "--seed", "3")
    other = _solve(tmp_path, "c.strategy", "kuhn3p", "--iterations", "1500", "--seed", "4")
    assert first.read_bytes() == again.read_bytes() != other.read_bytes()
    solver = SampledCFR(make_table(KUHN3P, "none", None), seed=3)
    solver.run(600)
    checkpoint = tmp_path / "checkpoint.strategy"
    save_strategy(checkpoint, sampled_file(solver, Epsilon(solver).check(), final=False), solver.table.graph)
    resumed = tmp_path / "resumed.strategy"
    assert cli.main(["--resume", str(checkpoint), "--iterations", "1500", "--quiet", "-o", str(resumed)]) == 0
    assert resumed.read_bytes() == first.read_bytes()
    saved = load_strategy(first)
    assert saved.layout == "three-player-buckets" and list(saved.arrays) == ["strategy"]
    assert saved.gains is not None and saved.exploitability == pytest.approx(np.mean(saved.gains))


@pytest.fixture(scope="module")
def leduc_cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3p Leduc solved on a tree cut to one raise a round (the game allows two)."""
    out = tmp_path_factory.mktemp("cut") / "leduc3p-cut.strategy"
    argv = ["leduc.limit.3p", "--algorithm", "es-mccfr", "--abstraction", "none", "--max-raises", "1,1"]
    assert cli.main([*argv, "--iterations", "20000", "--quiet", "-o", str(out)]) == 0
    return out


def test_policy_is_the_tables_row_and_calls_past_the_cut(leduc_cut: Path) -> None:
    saved = load_strategy(leduc_cut)
    strategy = EquilibriumStrategy(LEDUC3P, load_table(leduc_cut), seed=1)
    table = strategy.table
    hands = private_hands(LEDUC3P)
    state = State(LEDUC3P)
    rows = strategy.policy(PublicState(state, (), tuple(state.legal_actions())))
    graph = saved.build_betting_graph()
    located = graph.locate(state)
    assert located is not None
    first = int(located[1][0] * len(hands))  # the root: round 0's decision 0
    assert np.array_equal(rows, saved.strategy[first : first + len(hands), : rows.shape[1]].astype(np.float64))
    # one raise: in the cut tree the next player may only fold or call; the real
    # game's raise column gets probability 0
    raised = state.apply(RAISE)
    rows = table.rows(raised, ())
    assert rows.shape == (len(hands), 3) and not rows[:, 2].any()
    assert np.allclose(rows.sum(axis=1), 1.0)
    # a second raise is past the cut: no row, and the agent calls
    past = raised.apply(RAISE)
    with pytest.raises(KeyError, match="past the strategy's betting cut"):
        table.rows(past, ())
    player = past.current_player()
    hole = tuple((int(hands[0][0]),) if p == player else () for p in range(3))
    for hand_id in range(20):
        assert strategy.act(MatchState(player, hand_id, past, hole, ())) == CALL


def test_three_player_match_over_tcp(leduc_cut: Path, tmp_path: Path) -> None:
    """A duplicate 3-player match (six seatings) through our dealer: no WARNING,
    every hand played."""
    run = tmp_path / "run"
    bots = [f"equilibrium:file={leduc_cut}", "always-raise", "always-call"]
    argv = ["leduc.limit.3p", *bots, "--hands", "60", "--seed", "5", "--duplicate", "--in-process"]
    assert match.main([*argv, "--run-dir", str(run)]) == 0
    warnings = [line for err in run.glob("*.err") for line in err.read_text().splitlines() if "WARNING" in line]
    assert warnings == []
    results = json.loads((run / "results.json").read_text())
    assert results


def test_holdem_policy_from_a_tiny_abstraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """3p limit hold'em with 2 imperfect-recall buckets and one raise a round:
    a few hundred iterations, then the policy of every hand at a river decision
    is its bucket's row (hands clashing with the board uniform). The deck keeps its
    6 highest ranks (24 cards): the abstraction is built in an empty cache in about
    2 s instead of 30 s for 52 cards, through the same hold'em code."""
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    game = parse_game(format_game(HOLDEM3P).replace("numRanks = 13", "numRanks = 6"))
    assert len(game.deck()) == 24
    table = make_table(game, "ehs2:2:imperfect", (1, 1, 1, 1))
    solver = SampledCFR(table, seed=0)
    solver.run(300)
    strategy = solver.average_strategy()
    state = State(game)
    while state.round < 3:  # everyone calls to the river
        state = state.apply(CALL)
    assert state.round == 3 and not state.finished
    board = tuple(game.deck()[i] for i in (0, 5, 10, 15, 20))
    rows = policy_rows(table, strategy, state, board)
    buckets = table.hand_buckets(3, board)
    located = table.graph.locate(state)
    assert located is not None
    first = table.first_row(located)
    ok = buckets >= 0
    assert ok.any() and not ok.all()  # both kinds of hand: bucketed, and clashing with the board
    assert np.array_equal(rows[ok][:, :2], strategy[first + buckets[ok], :2].astype(np.float64))
    assert rows.shape[1] == 2 and np.allclose(rows[~ok], 1 / 2)  # check or bet: nobody has bet


def _mutated(path: Path, tmp_path: Path, **changes: object) -> Path:
    with open(path, "rb") as stream:
        header, arrays = msgpack.Unpacker(stream, raw=False, max_buffer_size=1 << 26)
    settings = changes.pop("settings", None)
    if settings is not None:
        header["settings"] = {**header["settings"], **settings}  # type: ignore[dict-item]
    header.update(changes)
    out = tmp_path / "mutated.strategy"
    out.write_bytes(msgpack.packb(header, use_bin_type=True) + msgpack.packb(arrays, use_bin_type=True))
    return out


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"settings": {"betting_cut": "2,2"}}, "different betting tree"),
        ({"settings": {"betting_cut": "3,3"}}, "each cap must be in"),
        ({"settings": {"betting_cut": None}}, "not the raise caps per round"),
        ({"card_abstraction": "ehs2:2:imperfect"}, "shape"),
        ({"card_abstraction": "ehs2:x:imperfect"}, "buckets"),
        ({"layout": "three-player"}, "need at least"),
    ],
)
def test_mismatched_files_are_refused_in_one_line(
    leduc_cut: Path, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    bad = _mutated(leduc_cut, tmp_path, **changes)
    with pytest.raises(StrategyFileError, match=message) as caught:
        load_strategy(bad)
    assert "\n" not in str(caught.value)


def test_another_abstraction_of_the_same_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leduc_cut: Path
) -> None:
    """The file records its abstraction's digest; one made differently under the
    same name is refused when the agent loads the file."""
    saved = load_strategy(leduc_cut)
    recorded = dataclasses.replace(saved, settings={**saved.settings, "abstraction_digest": "0" * 16})
    path = tmp_path / "other.strategy"
    save_strategy(path, recorded, saved.build_betting_graph())
    with pytest.raises(StrategyFileError, match="not the one the strategy was solved with") as caught:
        load_table(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--max-raises", "1,x"), "is not a comma-separated list of raise caps"),
        (("--max-raises", "1"), "has 1 caps; the game has 2 rounds"),
        (("--max-raises", "1,3"), "each cap must be in 1..the game's"),
    ],
)
def test_bad_betting_cuts_fail_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], message: str
) -> None:
    argv = ["leduc.limit.3p", "--algorithm", "es-mccfr", "--abstraction", "none", "--iterations", "10", "--quiet"]
    assert cli.main([*argv, *extra, "-o", str(tmp_path / "x.strategy")]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.strategy").exists()


def test_max_raises_needs_the_sampled_algorithm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["leduc.limit.3p", "--max-raises", "1,1", "--iterations", "10", "--quiet", "-o", str(tmp_path / "x")]
    assert cli.main(argv) == 2  # usage: docs/exit-statuses.md
    assert "--max-raises applies to --algorithm es-mccfr only" in capsys.readouterr().err
