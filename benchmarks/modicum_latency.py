"""Decision time of the HUNL bot (``hunl-modicum``: continual re-solving with
continuation leaves; ``--bot SPEC`` another, e.g. ``modicum``) in heads-up no-limit
hold'em: issue 22's p99 <= 2 s a decision on 2 cores and the ACPC's 7 s a hand
on average.

The bot plays hands in one process, without sockets, against ``random:size=uniform``
(nearly every opposing raise off the blueprint's tree and the re-solve's sizes)
and ``always-call`` (hands that reach the river), alternating positions; each
call of ``Strategy.act`` is timed with the view the agent would get, including
every re-solve (pre-flop too). The
first hand (numba kernels loading, the card abstraction, the blueprint's
continuation tables) is not counted. Wall time and the process's CPU time are
both kept: on a shared, loaded machine the CPU time is what a quiet core would
take (the re-solve runs on one thread).

Run: ``.venv/bin/python benchmarks/modicum_latency.py [--hands 20] [--seed 1] [--bot SPEC]``.
A line gives the CPU time by street (the turn, whose all-in
showdowns are valued over all 48 rivers, is the slowest). The last line is the
figure: p99 CPU seconds a decision against the 2 s target, ratio = 2 / ours
(above 1: within the target).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from poker.deal import Dealer  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from poker.protocol import MatchState  # noqa: E402
from poker.state import State  # noqa: E402
from strategies import make_strategy  # noqa: E402

TARGET_S = 2.0
HAND_LIMIT_S = 7.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=20, help="hands against each opponent (default 20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot", default="hunl-modicum", help="the strategy timed (default hunl-modicum)")
    args = parser.parse_args()
    game = load_game("hunl")
    decisions: list[float] = []
    cpu: list[float] = []
    hands: list[float] = []
    by_round: dict[int, list[float]] = {}
    for opponent_spec in ("random:size=uniform", "always-call"):
        ours = make_strategy(args.bot, game, seed=args.seed)
        opponent = make_strategy(opponent_spec, game, seed=args.seed + 1)
        dealer = Dealer(game, seed=args.seed)
        for hand_id in range(args.hands + 1):
            deal = dealer.next_hand()
            me = hand_id % 2
            state = State(game)
            spent = 0.0
            ours.new_hand(MatchState(me, hand_id, state, tuple(deal.hole[p] if p == me else () for p in range(2)), ()))
            while not state.finished:
                player = state.current_player()
                hole = tuple(deal.hole[p] if p == player else () for p in range(2))
                view = MatchState(player, hand_id, state, hole, deal.board[: game.total_board_cards(state.round)])
                if player == me:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    action = ours.act(view)
                    seconds = time.perf_counter() - start
                    if hand_id:
                        decisions.append(seconds)
                        cpu.append(time.process_time() - start_cpu)
                        by_round.setdefault(state.round, []).append(cpu[-1])
                    spent += seconds
                else:
                    action = opponent.act(view)
                state = state.apply(action)
            if hand_id:
                hands.append(spent)
        print(
            f"{args.bot} vs {opponent_spec}: {args.hands} hands, median {statistics.median(decisions):.2f} s a decision,"
            f" mean {np.mean(hands):.2f} s a hand so far, max {max(decisions):.2f} s",
            flush=True,
        )
    p99, p99_cpu = float(np.percentile(decisions, 99)), float(np.percentile(cpu, 99))
    streets = ", ".join(
        f"round {r}: {len(t)} decisions, median {statistics.median(t):.2f} s, max {max(t):.2f} s" for r, t in sorted(by_round.items())
    )
    print(f"CPU time by street: {streets}")
    print(
        f"{len(decisions)} decisions: mean {np.mean(hands):.2f} s a hand (wall) vs the ACPC's {HAND_LIMIT_S:g} s,"
        f" p99 {p99:.2f} s wall, {p99_cpu:.2f} s CPU, max {max(decisions):.2f} s wall"
    )
    print(f"{args.bot} p99 decision time (CPU): {p99_cpu:.2f} s vs {TARGET_S:g} s target ratio {TARGET_S / p99_cpu:.2f}")


if __name__ == "__main__":
    main()
