"""LBR in heads-up no-limit hold'em (HUNL): Lisý & Bowling's acceptance figures
and LBR against the continual re-solving agent (Lisý & Bowling, 'Equilibrium
Approximation Quality of Current No-Limit Poker Bots' (2017); Burch (2017) thesis
ch6).

Lines:

1. LBR (fcpa, every street) against always-fold: exactly 750 mbb/g (it wins the
   blinds, 50 and 100 chips, in the two seatings; the paper's table: 750 ± 0);
2. LBR against our re-solving agent (``resolve:evaluator=equity``, the named
   heuristic at each street's end; see README "Continual re-solving") with its
   95 % interval, and the agent's median seconds per action in those hands;
3. last: LBR (fcpa) acting only on the river (``--streets 4``) against
   always-call, in big blinds per hand, vs Lisý & Bowling's "about 50 big
   blinds a hand" (ratio ours / theirs: 1 is a reproduction).

Usage: ``.venv/bin/python benchmarks/resolve_hunl.py [--hands 40] [--call-hands 1000]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from poker.gamedef import load_game  # noqa: E402
from strategies.lbr import LbrConfig, run_lbr  # noqa: E402

#: Lisý & Bowling: LBR acting on the river only wins about 50 big blinds a hand from always-call.
ALWAYS_CALL_BB = 50.0
SPEC = "resolve:evaluator=equity,iterations=100,boards=16"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=40, help="LBR hands against the re-solving agent")
    parser.add_argument("--call-hands", type=int, default=1000, help="LBR hands against always-call")
    args = parser.parse_args()
    hunl = load_game("hunl")
    big_blind = max(hunl.blind)
    everywhere = LbrConfig("fcpa", frozenset({0, 1, 2, 3}))

    fold = run_lbr(hunl, "always-fold", 100, seed=1, config=everywhere).estimate
    print(f"LBR vs always-fold, HUNL: {fold.mean * 1000 / big_blind:.1f} ± {fold.half_width * 1000 / big_blind:.1f} mbb/g"
          " vs Lisý & Bowling 750 ± 0")

    from strategies.base import make_strategy
    from strategies.resolve.agent import ResolvingStrategy

    timing = make_strategy(SPEC, hunl, seed=1)
    assert isinstance(timing, ResolvingStrategy)
    resolve = run_lbr(hunl, SPEC, args.hands, seed=1, config=everywhere)
    estimate = resolve.estimate
    # Seconds per action on this machine: re-solve a few public states the way act() does.
    from poker.state import CALL, State

    state = State(hunl).apply(CALL)
    for board in ((), (0, 13, 26)):
        timing.resolution(state if not board else state.apply(CALL), board)
    print(
        f"LBR (fcpa, every street) vs {SPEC}, HUNL: {estimate.mean * 1000 / big_blind:.0f} ±"
        f" {estimate.half_width * 1000 / big_blind:.0f} mbb/g over {args.hands} duplicate pairs"
        f" ({resolve.seconds / (2 * args.hands):.2f} s a hand); re-solve median"
        f" {statistics.median(timing.solve_seconds):.2f} s"
    )

    river = run_lbr(hunl, "always-call", args.call_hands, seed=1, config=LbrConfig("fcpa", frozenset({3}))).estimate
    ours = river.mean / big_blind
    print(
        f"LBR acting on the river only vs always-call, HUNL, big blinds per hand: {ours:.1f} ±"
        f" {river.half_width / big_blind:.1f} vs Lisý & Bowling about {ALWAYS_CALL_BB:g} ratio {ours / ALWAYS_CALL_BB:.2f}"
    )


if __name__ == "__main__":
    main()
