"""All-in adjustment (``analysis/allin.py``): its variance cut on simulated no-limit matches,
and its speed on heads-up hold'em pre-flop all-ins against an independent exact enumerator.

Variance: ``--hands`` simulated hands of no-limit Leduc (``random:size=max`` against
``always-call``: about a third all in before the board card) and of HUNL
(``always-raise:size=max`` against ``always-call``: every hand all in pre-flop),
seats alternating; per hand the money and the all-in adjusted value of the first
player, their means with 95% intervals (they estimate the same value) and the
std-dev ratio.

Speed: ``--allins`` HUNL pre-flop all-ins (hole cards from the seeded dealer), each
valued over all C(48, 5) = 1,712,304 boards by :func:`analysis.allin.allin_values`
(one numba pass counting outcomes) and, as the anchor, by
:func:`poker.evaluate.hand_vs_range_equity` with the opponent's hand as a one-hand
range (the same exact enumeration through ``range_showdown_totals``); the values
must agree to 1e-9 chips. The last line is the time per all-in, anchor over ours.

Usage: ``.venv/bin/python benchmarks/allin.py [--hands N] [--allins N] [--seed S]``
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
from analysis.allin import allin_values  # noqa: E402
from analysis.importance import simulate_hands  # noqa: E402
from poker.evaluate import hand_vs_range_equity, private_hands  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from poker.stats import mean_ci  # noqa: E402
from strategies.base import make_strategy  # noqa: E402


def variance(game_name: str, first: str, second: str, hands: int, seed: int) -> None:
    game = load_game(game_name)
    players = [make_strategy(first, game, seed=seed), make_strategy(second, game, seed=seed + 1)]
    table = simulate_hands(game, players, hands, seed=seed)
    start = time.perf_counter()
    result = allin_values(table)
    seconds = time.perf_counter() - start
    raw, adjusted = table.values[:, 0], result.values[:, 0]
    one, two = mean_ci(raw), mean_ci(adjusted)
    print(
        f"{game_name}: {first} vs {second}, {hands} hands, {int(result.adjusted.sum())} adjusted ({seconds:.2f} s):"
        f" money {one.mean:+.2f} ± {one.half_width:.2f} (std {np.std(raw, ddof=1):.1f}),"
        f" all-in adjusted {two.mean:+.2f} ± {two.half_width:.2f} (std {np.std(adjusted, ddof=1):.1f}),"
        f" std ratio {np.std(raw, ddof=1) / np.std(adjusted, ddof=1):.2f}"
    )


def speed(allins: int, seed: int) -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    shove = make_strategy("always-raise:size=max", game, seed=seed)
    table = simulate_hands(game, [shove, shove], allins, seed=seed)
    allin_values(table.take(np.arange(1)))  # compile the kernel outside the timing
    start = time.perf_counter()
    ours = allin_values(table)
    ours_s = (time.perf_counter() - start) / allins
    assert ours.adjusted.all() and (ours.runouts == 1_712_304).all()
    hands = private_hands(sorted(game.deck()), 2)
    rows = {tuple(int(c) for c in h): i for i, h in enumerate(hands)}
    stack = game.stack[0]
    start = time.perf_counter()
    for row in range(allins):
        mine, theirs = (tuple(sorted(int(c) for c in table.hole[row, p])) for p in (0, 1))
        weights = np.zeros(len(hands))
        weights[rows[theirs]] = 1.0
        equity = hand_vs_range_equity(mine, weights, (), deck=sorted(game.deck()), final_board_size=5)
        value = stack * (equity.win - (1 - equity.win - equity.tie))
        assert abs(value - ours.values[row, 0]) < 1e-9, (row, value, ours.values[row, 0])
    anchor_s = (time.perf_counter() - start) / allins
    print(
        f"all-in expectation of a HUNL pre-flop all-in (C(48,5) boards): {ours_s:.4f} s vs"
        f" hand_vs_range_equity {anchor_s:.4f} s ratio {anchor_s / ours_s:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--allins", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    variance("leduc.nolimit.2p", "random:size=max", "always-call", args.hands, args.seed)
    variance("holdem.nolimit.2p.reverse_blinds", "always-raise:size=max", "always-call", args.allins * 10, args.seed)
    speed(args.allins, args.seed)


if __name__ == "__main__":
    main()
