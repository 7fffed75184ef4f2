"""Variance of imaginary-observation estimators on a fixed Leduc match (Johanson ch7, Table 7.1).

The match: **Leduc hold'em** (``leduc.limit.2p``; no hold'em equilibrium is in
hand yet) between an equilibrium, CFR+ solved on the public tree for
``--iterations`` iterations, and a chump (``--chump``, default
``always-raise``), ``--hands`` hands with seats alternating, cards and actions
seeded by ``--seed``. The equilibrium's per-hand results are then estimated
on-policy with full information (every card known, as in a dealer's log), where
every estimator is unbiased: raw money, basic importance sampling (the same
numbers on-policy), Early Folds, All Cards and All Cards + Early Folds
(:mod:`analysis.importance`), and AIVAT (:mod:`analysis.aivat`) with the
value function fixed in advance as the equilibrium's exact values against
itself (it knows nothing of the chump). Duplicate: the same cards (same seed) played
again with the seats swapped; its row is each hand's two results averaged (one
value per pair of hands, so its per-hand cost is two hands), and "duplicate +
AC+EF" and "duplicate + aivat" average those estimators over the two seatings.

The table prints each estimator's mean, standard deviation per value, 95%
interval and the ratio of raw money's std-dev to its own (the std-dev
reduction; hands needed fall by its square), then the same ratio per hand
played (a duplicate value costs two hands: its std-dev counts sqrt(2) times),
beside the exact value from the tree. The last line takes the best ratio per
hand played and compares it with Johanson's Table 7.1 on-policy figure,
5103 -> 1778 mbb/hand (2.9x), which also used BC-DIVAT (not implemented here)
and was measured on hold'em; the line before it compares AIVAT's ratio with
the AIVAT paper's HUNL figure (85% lower std-dev, about 6.7x).

**HULHE** (``holdem.limit.2p.reverse_blinds``; no HULHE equilibrium is built
in the test-sized budget, so a chump pair): ``always-call`` against
``--holdem-opponent`` (default ``random``, the reference's example player),
``--holdem-hands`` hands and the duplicate seating, estimated for always-call
with raw money, duplicate and AIVAT with :class:`analysis.aivat.EquityValues`
(pot share by showdown equity, fixed before the data; pre-flop equities
sampled without bias). Its line compares AIVAT's per-hand ratio with the
paper's HUNL 6.7x. The opponent's raises are not corrected (its policy is not
σ's) and the value at the deal does not foresee how the pot will grow, so the
opponent's holding still counts at the final pot's size: the ratio is lower
than against a passive opponent (always-call against itself: about 20x in
``tests/analysis/test_aivat.py``).

Usage: ``.venv/bin/python benchmarks/variance.py [--hands N] [--seed S] [--iterations T] [--chump NAME]
[--holdem-hands N] [--holdem-opponent NAME]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# benchmarks/dealer.py would shadow the dealer package: the repository root goes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies  # noqa: E402, F401  (registers the built-in strategies)
from analysis.aivat import EquityValues, TreeValues, aivat  # noqa: E402
from analysis.importance import estimate, simulate_hands, tree_policy  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from poker.stats import mean_ci  # noqa: E402
from strategies.base import make_strategy  # noqa: E402
from strategies.cfr.best_response.exact import exploitability, profile_values, strategy_from_policy  # noqa: E402
from strategies.cfr.solvers.solver import Solver  # noqa: E402
from strategies.cfr.tree.public import build_tree  # noqa: E402

JOHANSON_RATIO = 5103 / 1778  # Table 7.1, S2298 on-policy: Basic vs AC+EF+BC-DIVAT std-dev
AIVAT_RATIO = 1 / (1 - 0.85)  # AIVAT paper (HUNL, DeepStack match): 85% lower std-dev, about 6.7x


def holdem_rows(hands: int, seed: int, opponent: str) -> tuple[str, dict[str, np.ndarray]]:
    """The HULHE match of the module docstring: (title, estimator -> values)."""
    game = load_game("holdem.limit.2p.reverse_blinds")
    call = make_strategy("always-call", game, seed=seed)
    other = make_strategy(opponent, game, seed=seed)
    start = time.perf_counter()
    first = simulate_hands(game, [call, other], hands, seed=seed, names=("always-call", opponent))
    second = simulate_hands(game, [other, call], hands, seed=seed, names=(opponent, "always-call"))
    values = EquityValues(game)
    one = aivat(first, "always-call", call, values)
    two = aivat(second, "always-call", call, values)
    seconds = time.perf_counter() - start
    title = (
        f"HULHE (holdem.limit.2p.reverse_blinds): always-call vs {opponent}, {hands} hands, seed {seed}; AIVAT value"
        f" function: EquityValues (pot share by showdown equity, pre-flop sampled); {seconds:.1f} s; mbb/hand = chips x 100"
    )
    rows = {
        "raw": one.raw,
        "duplicate": (one.raw + two.raw) / 2,
        "aivat": one.estimate,
        "duplicate + aivat": (one.estimate + two.estimate) / 2,
    }
    return title, rows


def print_table(rows: dict[str, np.ndarray], *, unit: str = "chips/hand", scale: float = 1.0, digits: int = 4) -> dict[str, float]:
    """Print one line per estimator (chips/hand, or ``unit``: chips times
    ``scale``, ``digits`` decimals) and return each one's std-dev ratio to raw
    money's per hand played: a duplicate value costs two hands, so its std-dev
    counts sqrt(2) times."""
    raw_std = float(np.std(rows["raw"], ddof=1))
    print(f"{'estimator':24s} {unit:>10s} {'std-dev':>8s} {'95% CI':>9s} {'raw/std':>8s} {'per hand':>8s}")
    ratios = {}
    for label, values in rows.items():
        ci = mean_ci(values).scaled(scale)
        std = float(np.std(values, ddof=1))
        ratios[label] = raw_std / (std * np.sqrt(2 if label.startswith("duplicate") else 1))
        print(
            f"{label:24s} {ci.mean:+10.{digits}f} {std * scale:8.{digits}f} {'±' + format(ci.half_width, f'.{digits}f'):>9s}"
            f" {raw_std / std:8.2f} {ratios[label]:8.2f}"
        )
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=2_000)
    parser.add_argument("--chump", default="always-raise")
    parser.add_argument("--holdem-hands", type=int, default=1_000)
    parser.add_argument("--holdem-opponent", default="random")
    args = parser.parse_args()

    game = load_game("leduc.limit.2p")
    start = time.perf_counter()
    tree = build_tree(game)
    solver = Solver(tree, "cfr+")
    solver.run(args.iterations)
    average = solver.average_strategy()
    equilibrium = tree_policy(tree, average)
    chump = make_strategy(args.chump, game, seed=args.seed)
    mine, theirs = average, strategy_from_policy(tree, chump)
    exact = sum(
        profile_values(tree, np.where((tree.decision_player == p)[:, None, None], mine, theirs))[p] for p in (0, 1)
    ) / 2
    solve_s = time.perf_counter() - start

    start = time.perf_counter()
    first = simulate_hands(game, [equilibrium, chump], args.hands, seed=args.seed, names=("equilibrium", args.chump))
    second = simulate_hands(game, [chump, equilibrium], args.hands, seed=args.seed, names=(args.chump, "equilibrium"))
    play_s = time.perf_counter() - start
    start = time.perf_counter()
    one = estimate(first, "equilibrium", equilibrium)
    two = estimate(second, "equilibrium", equilibrium)
    # AIVAT's value function: the equilibrium against itself (no knowledge of the chump), fixed before the data.
    value_function = TreeValues(tree, equilibrium, equilibrium)
    aivat_one = aivat(first, "equilibrium", equilibrium, value_function).estimate
    aivat_two = aivat(second, "equilibrium", equilibrium, value_function).estimate
    estimate_s = time.perf_counter() - start

    rows = dict(one.columns())
    rows["duplicate"] = (one.raw + two.raw) / 2
    rows["duplicate + AC+EF"] = (one.all_cards_early_folds + two.all_cards_early_folds) / 2
    rows["aivat"] = aivat_one
    rows["duplicate + aivat"] = (aivat_one + aivat_two) / 2
    holdem = holdem_rows(args.holdem_hands, args.seed, args.holdem_opponent)

    print(
        f"Leduc (leduc.limit.2p): CFR+ equilibrium ({args.iterations} iterations, exploitability"
        f" {exploitability(tree, average):.2e} chips/hand) vs {args.chump}, {args.hands} hands, seed {args.seed};"
        f" on-policy, full information"
    )
    print(f"exact value of the equilibrium (tree): {exact:+.4f} chips/hand")
    per_hand = print_table(rows)
    print(f"(solve {solve_s:.1f} s, play 2 x {args.hands} hands {play_s:.1f} s, estimate {estimate_s:.2f} s)")
    print(holdem[0])
    holdem_ratio = print_table(holdem[1])["aivat"]
    print(
        f"AIVAT std ratio: {per_hand['aivat']:.2f} (per hand played) vs the AIVAT paper's HUNL 6.7"
        f" ratio {per_hand['aivat'] / AIVAT_RATIO:.2f}"
    )
    print(
        f"HULHE AIVAT (equity values) std ratio: {holdem_ratio:.2f} (per hand played) vs the AIVAT paper's HUNL 6.7"
        f" ratio {holdem_ratio / AIVAT_RATIO:.2f}"
    )
    best = max((name for name in rows if name != "raw"), key=per_hand.__getitem__)
    ratio = per_hand[best]
    print(
        f"variance reduction (best estimator std ratio): {ratio:.2f} ({best}, per hand played)"
        f" vs Johanson Table 7.1 2.9 ratio {ratio / JOHANSON_RATIO:.2f}"
    )


if __name__ == "__main__":
    main()
