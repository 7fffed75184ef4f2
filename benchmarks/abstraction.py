"""Time to build the 5-bucket perfect-recall E[HS²] card abstraction of HULHE.

Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', ch5, uses this percentile
E[HS²] abstraction (5 buckets per round, nested: 5, 25, 125 and 625 bucket
sequences) for the 2009 DBR experiments (L71). The thesis gives no time for
building it, so this prints our time alone. The build is exact: every
canonical flop's 1176 run-outs, every canonical turn's 48 rivers, and every
canonical river's 20 deal orders for the nested river split (see
:mod:`strategies.cfr.abstraction.bucketing`). The preflop sums are computed too (not read
from a cache), and the numba kernels are warmed up first on a small game.

Usage: ``.venv/bin/python benchmarks/abstraction.py [--workers 2] [--spec ehs2:5:perfect] [-o FILE]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from poker.gamedef import load_game
from strategies.cfr.abstraction.bucketing import AbstractionSpec
from strategies.cfr.abstraction.card_abstraction import CardAbstraction, parse_abstraction_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spec", default="ehs2:5:perfect")
    parser.add_argument("-o", "--output", type=Path, help="also save the abstraction here")
    args = parser.parse_args()
    spec = parse_abstraction_spec(args.spec)
    if not isinstance(spec, AbstractionSpec):
        parser.error("--spec must name a bucketed abstraction, not 'none'")
    game = load_game("holdem.limit.2p.reverse_blinds")
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        CardAbstraction.build(load_game("leduc"), spec, cache_dir=Path(scratch), workers=args.workers)
        print(f"warm-up (numba compile or cache load): {time.perf_counter() - started:.2f}s")
        stage_started: dict[str, float] = {}

        def progress(stage: str, done: int, total: int) -> None:
            stage_started.setdefault(stage, time.perf_counter())
            elapsed = time.perf_counter() - stage_started[stage]
            print(f"\r{stage}: {done}/{total} chunks, {elapsed:.0f}s   ", end="", file=sys.stderr, flush=True)
            if done == total:
                print(file=sys.stderr)

        started = time.perf_counter()
        abstraction = CardAbstraction.build(game, spec, cache_dir=Path(scratch), workers=args.workers, progress=progress)
        elapsed = time.perf_counter() - started
    if args.output:
        abstraction.save(args.output)
    sizes = ", ".join(str(abstraction.num_buckets(r)) for r in range(game.num_rounds))
    print(f"bucket counts per round: {sizes}; workers {args.workers}")
    print(f"HULHE {abstraction.name} abstraction: {elapsed:.1f}s (the thesis gives no build time to compare)")


if __name__ == "__main__":
    main()
