"""Exact exploitability of the card-blind chumps in heads-up limit hold'em.

Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', Table 2.1, game
``holdem.limit.2p.reverse_blinds`` (blinds 10/5, raises 10/10/20/20): always-fold
750, always-call 1163.48, always-raise 3697.69, 50% call / 50% raise 2406.55
mbb/g (exploitability = mean of the two best-response values; 1 mbb/g = 0.01
chips per hand here).

Method: :func:`strategies.cfr.best_response.blind.blind_best_responses` — an exact
public-tree best response that uses the strategies' card-blindness (the
opponent's range stays uniform), last-round tables over W - L counts and suit
isomorphism on the flop (1755 canonical flops). All four strategies and both
seats are computed in one sweep over the boards; ``--workers`` threads share the
flops (2 cores here).

Usage: ``.venv/bin/python benchmarks/br_holdem.py [--workers 2] [--only NAME ...]``
"""

from __future__ import annotations

import argparse
import sys
import time

from poker.gamedef import load_game
from strategies.base import make_strategy
from strategies.cfr.best_response.blind import blind_best_responses

# Johanson thesis Table 2.1, mbb/g, and the strategy spec that plays it here.
TABLE_2_1 = {
    "always-fold": ("always-fold", 750.0),
    "always-call": ("always-call", 1163.48),
    "always-raise": ("always-raise", 3697.69),
    "50/50 call/raise": ("probe", 2406.55),  # probe: never folds, call or raise 1/2 each
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="*", choices=list(TABLE_2_1), help="a subset of the strategies")
    args = parser.parse_args()
    names = args.only or list(TABLE_2_1)
    game = load_game("holdem.limit.2p.reverse_blinds")
    strategies = [make_strategy(TABLE_2_1[name][0], game) for name in names]
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done % 25 == 0 or done == total:
            elapsed = time.perf_counter() - started
            print(f"\r{done}/{total} canonical flops, {elapsed:.0f}s", end="", file=sys.stderr, flush=True)

    results = blind_best_responses(game, strategies, workers=args.workers, progress=progress)
    elapsed = time.perf_counter() - started
    print(file=sys.stderr)
    worst = 0.0
    for name, result in zip(names, results, strict=True):
        mbb = 1000.0 * result.exploitability / game.big_blind
        expected = TABLE_2_1[name][1]
        worst = max(worst, abs(round(mbb, 2) - expected))
        seats = ", ".join(f"{1000.0 * v / game.big_blind:.2f}" for v in result.values)
        print(f"{name:<18} {mbb:9.2f} mbb/g (Johanson {expected:.2f}); best responses by position {seats}")
    print(f"{len(names)} strategies, both seats, one sweep: {elapsed:.0f}s on {args.workers} worker(s)")
    print(f"HULHE chump exploitability: largest difference from Table 2.1 {worst:.2f} mbb/g in {elapsed:.0f}s")


if __name__ == "__main__":
    main()
