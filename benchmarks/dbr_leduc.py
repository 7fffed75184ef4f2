"""RNR and DBR on Leduc, exactly computed: the shape of Johanson (2016) thesis
'Robust Strategies and Counter-Strategies', Figures 6.1 and 6.2.

The real opponent is a *chump*: a fixed, card-dependent random strategy (each
information set's row drawn from a flat Dirichlet with ``--seed``). It plays
``--hands`` hands against the CFR+ equilibrium, seats alternating; the hands are
written as an ACPC ``.log`` (every hole card shown, as the dealers write them)
and read back with :func:`analysis.logs.read_log`, and the opponent model is
counted from the first 100, 1k, 10k (and 100k) of them with
:func:`strategies.dbr.count_model`. For each data size, RNR (``p``) and DBR
(0-10 Linear, ``P_max``) counter-strategies over p in {0, .5, .7, .8, .9, .93,
.97, .99, 1} are solved (CFR+, ``--iterations`` per seat) and measured exactly:
*exploitation* of the real chump (our chips per hand against it, averaged over
both seats, so the game value cancels) and of the model, and *exploitability*
(the mean of the two best-response values against our strategy), in chips per
hand. The best response to the real chump (a restricted solve with full
confidence in the true strategy) is the reference: the last line says how much
of its exploitation DBR at P_max = 1 recovers with the most data.

Usage: ``.venv/bin/python benchmarks/dbr_leduc.py [--hands 100000] [--iterations 4000] [--plot benchmarks/out/dbr_leduc.png]``
(writes the PNG only where matplotlib is installed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from analysis.logs import read_log  # noqa: E402
from poker.cards import card_to_text  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from strategies.cfr.best_response.exact import best_response, exploitability  # noqa: E402
from strategies.cfr.solvers.solver import Solver  # noqa: E402
from strategies.cfr.tree.public import NodeKind, Tree, build_tree  # noqa: E402
from strategies.dbr import OpponentModel, count_model, counter_strategy, exploitation, random_strategy  # noqa: E402

GRID = (0.0, 0.5, 0.7, 0.8, 0.9, 0.93, 0.97, 0.99, 1.0)
Array = npt.NDArray[np.float64]


def simulate_log(tree: Tree, equilibrium: Array, opponent: Array, hands: int, seed: int, path: Path) -> None:
    """``hands`` hands of ``opponent`` ("chump") against ``equilibrium`` ("eq"),
    seats alternating, as an ACPC ``.log``."""
    rng = np.random.default_rng(seed + 1)
    deck = np.array(sorted(int(c) for c in tree.game.deck()))
    index = {int(row[0]): h for h, row in enumerate(tree.hands)}
    chance_child = {
        (int(n), tree.boards[tree.board_index[c]][-1]): c
        for n in np.flatnonzero(tree.kind == NodeKind.CHANCE)
        for c in tree.children(int(n))
    }
    lines = [f"# name/game/hands/seed bench leduc {hands} {seed}"]
    for hand in range(hands):
        cards = rng.choice(deck, size=3, replace=False)
        holes = [index[int(cards[0])], index[int(cards[1])]]
        chump_seat = hand % 2
        node = 0
        while tree.kind[node] in (NodeKind.DECISION, NodeKind.CHANCE):
            if tree.kind[node] == NodeKind.CHANCE:
                node = chance_child[node, int(cards[2])]
                continue
            actor = int(tree.player[node])
            table = opponent if actor == chump_seat else equilibrium
            row = table[int(tree.decision_index[node]), : int(tree.num_children[node]), holes[actor]]
            node = int(tree.action_child[node, rng.choice(len(row), p=row / row.sum())])
        spent = tree.spent[node]
        if tree.kind[node] == NodeKind.FOLD:
            folder = int(tree.player[node])
            won = [0.0, 0.0]
            won[folder], won[1 - folder] = -float(spent[folder]), float(spent[folder])
        else:
            rank = tree.hand_rank[tree.board_index[node]]
            sign = np.sign(int(rank[holes[0]]) - int(rank[holes[1]]))
            won = [float(sign * spent[0]), float(-sign * spent[0])]
        board = "/" + card_to_text(int(cards[2])) if tree.round[node] >= 1 else ""
        names = ["chump", "eq"] if chump_seat == 0 else ["eq", "chump"]
        lines.append(
            f"STATE:{hand}:{tree.states[node].betting_string()}:{card_to_text(int(cards[0]))}|"
            f"{card_to_text(int(cards[1]))}{board}:{won[0]:g}|{won[1]:g}:{names[0]}|{names[1]}"
        )
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=100_000, help="observed hands at most (default 100000)")
    parser.add_argument("--iterations", type=int, default=4000, help="CFR+ iterations per seat (default 4000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mix", type=float, default=0.5, help="weight of the random part of the chump (default 0.5)")
    parser.add_argument("--plot", type=Path, default=Path(__file__).parent / "out" / "dbr_leduc.png")
    args = parser.parse_args()
    start = time.perf_counter()
    tree = build_tree(load_game("leduc"))
    solver = Solver(tree)
    solver.run(args.iterations)
    equilibrium = solver.average_strategy()
    real = args.mix * random_strategy(tree, args.seed) + (1.0 - args.mix) * equilibrium
    reference = counter_strategy(OpponentModel(tree, real, 1), "rnr", 1.0, iterations=args.iterations)
    br_value = float(np.mean(best_response(tree, real).values))
    br_exploitation = exploitation(tree, reference, real)
    br_risk = exploitability(tree, reference)
    print(
        f"Leduc; chump = {args.mix:g} x a card-dependent Dirichlet(1) strategy (seed {args.seed}) + {1 - args.mix:g} x"
        f" the equilibrium, mixed per information set; equilibrium exploitability"
        f" {exploitability(tree, equilibrium):.2e}; chips/hand throughout"
    )
    print(
        f"best response to the chump: exploitation {br_exploitation:.4f} (exact BR value {br_value:.4f}),"
        f" exploitability {br_risk:.4f}"
    )
    sizes = [n for n in (100, 1000, 10_000, 100_000) if n <= args.hands]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "chump.log"
        simulate_log(tree, equilibrium, real, max(sizes), args.seed, log)
        hands = read_log(log)
    results: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    print(f"\n{'method':<6} {'hands':>7} {'p/P_max':>7} {'vs chump':>9} {'vs model':>9} {'exploitability':>14}")
    for n in sizes:
        model = count_model(tree, hands.take(np.arange(n)), "chump")
        fixed = model.strategy()
        for method in ("rnr", "dbr"):
            rows = results.setdefault((method, n), [])
            for p in GRID:
                ours = counter_strategy(model, method, p, "0-10-linear", iterations=args.iterations)
                row = (exploitation(tree, ours, real), exploitation(tree, ours, fixed), exploitability(tree, ours))
                rows.append(row)
                print(f"{method:<6} {n:>7} {p:>7g} {row[0]:>9.4f} {row[1]:>9.4f} {row[2]:>14.4f}")
    print()
    small = min(sizes)
    rnr = results["rnr", small]
    dbr = results["dbr", small]
    print(
        f"RNR {small} hands, p 0 -> 1: vs model {rnr[0][1]:.4f} -> {rnr[-1][1]:.4f},"
        f" vs chump {rnr[0][0]:.4f} -> {rnr[-1][0]:.4f} (max {max(r[0] for r in rnr):.4f}),"
        f" exploitability {rnr[0][2]:.4f} -> {rnr[-1][2]:.4f}"
    )
    print(
        f"DBR {small} hands, P_max 0 -> 1: vs chump {dbr[0][0]:.4f} -> {dbr[-1][0]:.4f}"
        f" (min {min(r[0] for r in dbr):.4f}), exploitability {dbr[0][2]:.4f} -> {dbr[-1][2]:.4f}"
    )
    _plot(results, sizes, br_exploitation, br_risk, args.plot)
    big = max(sizes)
    top = results["dbr", big][-1]
    share = 100.0 * top[0] / br_exploitation
    print(
        f"DBR P_max=1 {big} hands: exploitation {top[0]:.4f}, exploitability {top[2]:.4f}"
        f" (best response: {br_exploitation:.4f}, {br_risk:.4f}; less exploitable: {top[2] < br_risk});"
        f" {time.perf_counter() - start:.0f} s"
    )
    print(f"DBR P_max=1 {big} hands recovers {share:.1f}% of the best response's exploitation vs 50% target ratio {share / 50:.2f}")


def _plot(
    results: dict[tuple[str, int], list[tuple[float, float, float]]],
    sizes: list[int],
    br_exploitation: float,
    br_risk: float,
    path: Path,
) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    figure, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    for axis, method, title in zip(axes, ("rnr", "dbr"), ("RNR (Fig 6.1)", "DBR 0-10 Linear (Fig 6.2)"), strict=True):
        for n in sizes:
            rows = results[method, n]
            axis.plot([r[2] for r in rows], [r[0] for r in rows], marker="o", label=f"{n} hands")
        axis.scatter([br_risk], [br_exploitation], marker="*", s=120, color="black", label="best response")
        axis.set_title(title)
        axis.set_xlabel("exploitability (chips/hand)")
        axis.set_xscale("symlog", linthresh=1e-2)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("exploitation of the chump (chips/hand)")
    axes[1].legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
