"""Local best response on heads-up limit hold'em against always-call and random,
with its 95% interval and timing (Lisý & Bowling 2017; :mod:`strategies.lbr`).

LBR acts by its rule on every round (``fcpa``: in limit, fold / call / raise;
preflop win probabilities from 1000 sampled run-outs, later rounds exact).
Anchor: the exact best-response value against always-call (mean over both
seats), computed in the same run by
:func:`strategies.cfr.best_response.blind.blind_best_responses` (about 160-200 s
on 2 cores; Johanson 2016 thesis, Table 2.1, publishes 1163.48 mbb/g, printed
beside it). LBR is a legal strategy, so its expectation is a lower bound on
it: the last line gives the ratio.

Usage: ``.venv/bin/python benchmarks/lbr.py [--hands 3000] [--workers 2] [--seed 1]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from poker.gamedef import load_game  # noqa: E402
from poker.stats import unit_of  # noqa: E402
from strategies.base import make_strategy  # noqa: E402
from strategies.cfr.best_response.blind import blind_best_responses  # noqa: E402
from strategies.lbr import LbrConfig, run_lbr  # noqa: E402

#: Johanson thesis Table 2.1: best response to always-call in HULHE, mbb/g
#: (published figure, printed beside the value measured here).
PUBLISHED_ALWAYS_CALL_BR = 1163.48


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    game = load_game("hulhe")
    unit = unit_of(game)
    config = LbrConfig("fcpa", frozenset(range(game.num_rounds)))
    means = {}
    for spec in ("always-call", "random"):
        result = run_lbr(game, spec, args.hands, seed=args.seed, config=config, workers=args.workers)
        estimate = result.estimate.scaled(unit.per_chip)
        means[spec] = estimate.mean
        print(
            f"LBR (fcpa, rounds 1-4) vs {spec}: {estimate.mean:.1f} ± {estimate.half_width:.1f} {unit.name}"
            f" over {args.hands} duplicate pairs; {result.seconds:.1f} s with {args.workers} workers"
            f" ({1000 * result.seconds / (2 * args.hands):.1f} ms per hand played)",
            flush=True,
        )
    started = time.perf_counter()
    (exact,) = blind_best_responses(game, [make_strategy("always-call", game)], workers=args.workers)
    seconds = time.perf_counter() - started
    exact_br = exact.exploitability * unit.per_chip
    print(
        f"exact best response to always-call (blind_best_responses, mean of both seats): {exact_br:.2f} {unit.name}"
        f" in {seconds:.0f} s with {args.workers} workers (Johanson Table 2.1 publishes {PUBLISHED_ALWAYS_CALL_BR})",
        flush=True,
    )
    x = means["always-call"]
    ratio = x / exact_br
    print(f"LBR vs always-call HULHE: {x:.1f} mbb/g vs exact best response {exact_br:.2f} ratio {ratio:.3f}")


if __name__ == "__main__":
    main()
