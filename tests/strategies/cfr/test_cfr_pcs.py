"""Public chance sampling: against vanilla CFR, a per-pair reference, convergence on Leduc."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from poker.deal import private_hands
from poker.evaluate import rank_hand
from poker.gamedef import load_game
from strategies.base import PublicState
from strategies.cfr.abstraction.card_abstraction import Abstraction, load_abstraction
from strategies.cfr.best_response.exact import exploitability, strategy_from_policy
from strategies.cfr.solvers.pcs import (
    LosslessAbstraction,
    PCSError,
    PCSSolver,
    PCSStrategy,
    board_scale,
    bucket_strategy,
    tree_strategy,
)
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.strategy_file import StrategyFileError, load_strategy
from strategies.cfr.tree.betting import BettingTree, build_betting_tree
from strategies.cfr.tree.public import NodeKind, build_tree

LEDUC = load_game("leduc")
KUHN = load_game("kuhn")


@pytest.fixture(scope="module")
def leduc_buckets(tmp_path_factory: pytest.TempPathFactory) -> Abstraction:
    """A bucketed Leduc abstraction: 2 E[HS] buckets per round, perfect recall (2 then 4)."""
    return load_abstraction("ehs:2:perfect", LEDUC, cache_dir=tmp_path_factory.mktemp("abstraction"))


def reference_iteration(
    tree: BettingTree,
    abstraction: Abstraction,
    board: tuple[int, ...],
    regret: dict[tuple[int, int, int], float],
    cumulative: dict[tuple[int, int, int], float],
) -> None:
    """One alternating PCS iteration per hand pair, with no vectors and no card-removal
    formulas: tables keyed by (decision row, bucket column, action)."""
    game = tree.game
    hands = [tuple(int(c) for c in h) for h in private_hands(game)]
    valid = [i for i, h in enumerate(hands) if not set(h) & set(board)]
    scale = board_scale(game)
    buckets = abstraction.bucket_rounds(list(board)) if board else np.array([abstraction.buckets(0, [])])

    def sigma(node: int, h: int) -> list[float]:
        d, n = int(tree.decision_index[node]), int(tree.num_children[node])
        b = int(buckets[tree.round[node], h])
        positive = [max(regret[(d, b, a)], 0.0) for a in range(n)]
        total = sum(positive)
        return [p / total for p in positive] if total > 0 else [1.0 / n] * n

    def utility(node: int, h: int, o: int, position: int) -> float:
        if tree.kind[node] == NodeKind.FOLD:
            return float(tree.payoff[node, position, 0])
        mine = rank_hand(list(hands[h]) + list(board))
        theirs = rank_hand(list(hands[o]) + list(board))
        return float(tree.payoff[node, position, 0 if mine > theirs else 1 if mine == theirs else 2])

    def walk(node: int, reach: list[dict[int, float]], position: int) -> dict[int, float]:
        if tree.kind[node] != NodeKind.DECISION:
            return {
                h: scale
                * sum(
                    reach[1 - position][o] * utility(node, h, o, position)
                    for o in valid
                    if not set(hands[o]) & set(hands[h])
                )
                for h in valid
            }
        actor = int(tree.player[node])
        strategies = {h: sigma(node, h) for h in valid}
        children = []
        for a in range(int(tree.num_children[node])):
            below = [dict(reach[0]), dict(reach[1])]
            for h in valid:
                below[actor][h] *= strategies[h][a]
            children.append(walk(int(tree.first_child[node]) + a, below, position))
        if actor != position:
            return {h: sum(c[h] for c in children) for h in valid}
        values = {h: sum(s * c[h] for s, c in zip(strategies[h], children, strict=True)) for h in valid}
        d = int(tree.decision_index[node])
        for h in valid:
            b = int(buckets[tree.round[node], h])
            for a, c in enumerate(children):
                regret[(d, b, a)] += c[h] - values[h]
                cumulative[(d, b, a)] += reach[position][h] * strategies[h][a]
        return values

    for position in range(2):
        walk(0, [{h: 1.0 for h in valid}, {h: 1.0 for h in valid}], position)


def test_pcs_without_board_cards_is_vanilla_cfr() -> None:
    """Kuhn deals no board, so PCS samples nothing and must equal vanilla CFR
    (regret matching, uniform average, alternating updates) to rounding."""
    pcs = PCSSolver(KUHN)
    pcs.run(50)
    cfr = Solver(build_tree(KUHN), "cfr")
    cfr.run(50)
    tree = build_tree(KUHN)
    ours = pcs.strategy().tree_strategy(tree)
    assert np.allclose(ours, cfr.average_strategy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("bucketed", [False, True], ids=["lossless", "ehs-2-perfect"])
def test_pcs_kernel_matches_per_pair_reference_on_leduc(bucketed: bool, leduc_buckets: Abstraction) -> None:
    abstraction = leduc_buckets if bucketed else LosslessAbstraction(LEDUC)
    solver = PCSSolver(LEDUC, abstraction)
    regret: dict[tuple[int, int, int], float] = defaultdict(float)
    cumulative: dict[tuple[int, int, int], float] = defaultdict(float)
    for board in [(42,), (51,), (43,), (42,)]:
        solver.iterate(board)
        reference_iteration(solver.tree, abstraction, board, regret, cumulative)
    expected_regret = np.zeros_like(solver.regret)
    expected_cumulative = np.zeros_like(solver.cumulative)
    for (d, b, a), value in regret.items():
        expected_regret[a, solver.row_start[d] + b] = value
    for (d, b, a), value in cumulative.items():
        expected_cumulative[a, solver.row_start[d] + b] = value
    assert np.allclose(solver.regret, expected_regret, rtol=1e-12, atol=1e-12)
    assert np.allclose(solver.cumulative, expected_cumulative, rtol=1e-12, atol=1e-12)


def test_pcs_converges_on_leduc() -> None:
    """Vanilla PCS, no card abstraction, seed 1: exact exploitability of the
    average strategy 0.0098 chips/hand after 50000 iterations (0.0137 after
    30000; about 3 s)."""
    tree = build_tree(LEDUC)
    solver = PCSSolver(LEDUC, seed=1)
    solver.run(50_000)
    assert exploitability(tree, solver.strategy().tree_strategy(tree)) < 0.01


def test_pcs_is_deterministic_for_a_seed() -> None:
    runs = []
    for seed in (7, 7, 8):
        solver = PCSSolver(LEDUC, seed=seed)
        solver.run(300)
        runs.append(solver.cumulative)
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_bucketed_leduc_end_to_end(leduc_buckets: Abstraction) -> None:
    tree = build_tree(LEDUC)
    solver = PCSSolver(LEDUC, leduc_buckets, seed=3)
    assert solver.regret.shape == (3, 2 * 6 + 4 * 30)  # 6 round-0 and 30 round-1 decisions
    solver.run(2000)
    strategy = solver.strategy()
    table = strategy.tree_strategy(tree)
    assert np.array_equal(table, strategy_from_policy(tree, strategy))
    # Two hands of one bucket play alike: Js (42) and Jh (43) preflop.
    rows = strategy.policy(PublicState(tree.states[0]))
    assert np.array_equal(rows[0], rows[1])
    value = exploitability(tree, table)
    assert 0.0 < value < 4.0


def test_pcs_resume_continues_the_same_run() -> None:
    whole = PCSSolver(LEDUC, seed=5)
    whole.run(400)
    half = PCSSolver(LEDUC, seed=5)
    half.run(150)
    resumed = PCSSolver.resume(
        LEDUC, half.abstraction, half.settings, iteration=150, regret=half.regret, cumulative=half.cumulative
    )
    resumed.run(250)
    assert np.array_equal(whole.cumulative, resumed.cumulative)


def test_pcs_errors() -> None:
    with pytest.raises(PCSError, match="averaging delay must be non-negative"):
        PCSSolver(LEDUC, delay=-1)
    with pytest.raises(PCSError, match="too many to solve without a card abstraction"):
        LosslessAbstraction(load_game("holdem.limit.2p.reverse_blinds"))
    solver = PCSSolver(LEDUC)
    with pytest.raises(PCSError, match="checkpoint arrays have shapes"):
        PCSSolver.resume(LEDUC, solver.abstraction, {}, iteration=1, regret=np.zeros((1, 1)), cumulative=np.zeros((1, 1)))


def test_betting_tree_counts() -> None:
    tree = build_betting_tree(load_game("holdem.limit.2p.reverse_blinds"))
    assert (tree.num_nodes, tree.num_decisions) == (16584, 6378)
    assert np.bincount(tree.round[tree.decision_nodes]).tolist() == [8, 70, 630, 5670]


def test_cli_pcs_solve_resume_and_exploitability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.commands import exploitability as cli_exploitability
    from arena.commands import solve as cli

    whole, half, rest = tmp_path / "whole", tmp_path / "half", tmp_path / "rest"
    base = ["leduc", "--algorithm", "pcs", "--seed", "4", "--quiet"]
    assert cli.main([*base, "--iterations", "600", "--every", "300", "-o", str(whole)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("iteration 300: exploitability ")
    assert printed[-1].startswith("pcs 600 iterations (board seed 4): exploitability ")
    assert cli.main([*base, "--iterations", "250", "-o", str(half)]) == 0
    assert cli.main(["--resume", str(half), "--iterations", "600", "-o", str(rest), "--quiet"]) == 0
    a, b = load_strategy(whole), load_strategy(rest)
    assert (b.layout, b.algorithm, b.card_abstraction, b.iterations) == ("buckets", "pcs", "none", 600)
    assert np.array_equal(a.arrays["cumulative"], b.arrays["cumulative"])
    tree = build_tree(LEDUC)
    assert a.exploitability == pytest.approx(exploitability(tree, tree_strategy(a, tree)), abs=1e-12)
    capsys.readouterr()
    assert cli_exploitability.main([str(whole)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "pcs, 600 iterations; betting abstraction: limit: every legal action; card abstraction: none"
    )


def test_cli_pcs_with_a_card_abstraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.commands import solve as cli

    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bucketed"
    assert cli.main(["leduc", "--algorithm", "pcs", "--abstraction", "ehs:2:perfect", "--iterations", "50",
                     "-o", str(out), "--quiet"]) == 0  # fmt: skip
    saved = load_strategy(out)
    assert saved.card_abstraction == "ehs:2:perfect" and saved.arrays["strategy"].shape == (3, 132)
    strategy = bucket_strategy(saved)
    assert isinstance(strategy, PCSStrategy) and strategy.table is saved.arrays["strategy"]
    with pytest.raises(StrategyFileError, match="a 'buckets' strategy file is a bucket table"):
        saved.strategy


def test_cli_abstraction_needs_pcs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.commands import solve as cli

    assert cli.main(["leduc", "--abstraction", "ehs:2:perfect", "--iterations", "3", "-o", str(tmp_path / "x")]) == 2  # usage
    assert "--abstraction applies to --algorithm pcs and abstract only" in capsys.readouterr().err
