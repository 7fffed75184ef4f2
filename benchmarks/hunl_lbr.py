"""Local best response against the depth-limited solving bot (``modicum``) in
heads-up no-limit hold'em, with AIVAT, beside DeepStack's figure; and the bot
head to head in duplicate against the continual re-solver with the equity
heuristic (Lisý & Bowling, 'Equilibrium Approximation Quality of Current
No-Limit Poker Bots' (2017); Moravčík et al., 'DeepStack' (2017); Brown,
Sandholm & Amos, 'Depth-Limited Solving for Imperfect-Information Games' (2018)).

Lines:

1. head to head, duplicate (both seatings of every deal), the bot against
   ``resolve:evaluator=equity``: raw money, and AIVAT on the bot's hands (value
   function: pot share by showdown equity, :class:`analysis.aivat.EquityValues`;
   both policies are known, so the re-solver's decisions get their corrections
   too), mbb/g with 95 % intervals;
2. LBR (fcpa: fold, call, pot, all-in; acting on every street) against the bot,
   duplicate pairs, raw money; AIVAT (line 3) uses the same hands and runs on the
   bot's side (its policy is known for every private hand: the re-solve at the
   public state) and LBR's result is its negation; LBR's own decisions are
   deterministic given its cards, so knowing its policy adds no correction.
3. LBR's result with AIVAT alone; AIVAT's value function assumes every hand is
   checked down from where it stands, so against all-in-heavy play (LBR's
   all-ins, the bot's rare ones, each priced at stack size) its corrections can
   add more variance than they remove: on short runs here its interval was
   ten times raw money's;
4. last: ``HUNL LBR fcpa every street vs modicum: X ± H mbb/g (95%, ESTIMATOR) vs DeepStack
   -383 ± 219`` (LBR could not beat DeepStack) ``ratio r``, with ``r = (750 -
   X) / (750 + 383)``: how far below 750 mbb/g (what LBR wins from a bot that
   always folds) LBR's result stays, relative to DeepStack's; r > 1: ours better.
   X is the AIVAT estimate or raw money, whichever has the narrower interval
   (both are unbiased; the line says which).

The issue's run is ``--hands 300 --h2h-hands 100``, meant to fit 45 minutes on two
quiet cores (not timed here: at a load average of 12 on 2 cores, ``--hands 30
--h2h-hands 10`` took 14.5 minutes, 8.2 s a LBR hand); ``--hands 4 --h2h-hands 2``
shows it works in a minute.

Usage: ``.venv/bin/python benchmarks/hunl_lbr.py [--hands 300] [--h2h-hands 100] [--workers 2] [--seed 1]``
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

import numpy as np  # noqa: E402

from analysis.aivat import EquityValues, aivat  # noqa: E402
from analysis.hands import NO_SEED, Hands  # noqa: E402
from analysis.importance import simulate_hands  # noqa: E402
from poker.deal import Dealer  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from poker.hand_rank import hand_values  # noqa: E402
from poker.stats import mean_ci  # noqa: E402
from strategies.base import make_strategy  # noqa: E402
from strategies.lbr import LbrConfig, lbr_hand  # noqa: E402

BOT = "modicum"
RESOLVER = "resolve:evaluator=equity,iterations=100,boards=16"
#: Moravčík et al. (2017), LBR against DeepStack, mbb/g and its 95 % half-width.
DEEPSTACK = (-383.0, 219.0)
#: What LBR wins from a bot that always folds, mbb/g (Lisý & Bowling's table: 750 ± 0).
ALWAYS_FOLD = 750.0


def lbr_chunk(job: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Hands ``start..stop-1`` of ``seed``, LBR in each position: LBR's money and
    its AIVAT estimate, ``float64[n, 2]`` each (chips)."""
    seed, start, stop = job
    game = load_game("hunl")
    bot = make_strategy(BOT, game, seed=seed)
    config = LbrConfig("fcpa", frozenset(range(game.num_rounds)))
    dealer = Dealer(game, seed=seed)
    for _ in range(start):
        dealer.next_hand()
    n = 2 * (stop - start)
    holes = np.empty((n, 2, game.num_hole_cards), dtype=np.int8)
    boards = np.full((n, sum(game.num_board_cards)), -1, dtype=np.int8)
    values = np.empty((n, 2))
    seating = np.empty((n, 2), dtype=np.int32)  # position -> 0 (lbr) or 1 (bot)
    bettings: list[str] = []
    for i in range(start, stop):
        deal = dealer.next_hand()
        for position in (0, 1):
            row = 2 * (i - start) + position
            state = lbr_hand(game, bot, deal, position, config, np.random.default_rng([seed, i, position]))
            shown = game.total_board_cards(state.round)
            holes[row], boards[row, :shown] = deal.hole, deal.board[:shown]
            values[row] = [float(v) for v in hand_values(state, deal.hole, deal.board)]
            seating[row] = (0, 1) if position == 0 else (1, 0)
            bettings.append(state.betting_string())
    hands = Hands(
        game=game,
        source=f"lbr(seed={seed})",
        hand_id=np.arange(n, dtype=np.int64),
        values=values,
        names=("lbr", "bot"),
        name_index=seating,
        hole=holes,
        board=boards,
        betting=tuple(bettings),
        line=np.arange(1, n + 1, dtype=np.int64),
        seed=np.full(n, NO_SEED, dtype=np.int64),
    )
    lbr_money = values[np.arange(n), np.argmin(seating, axis=1)]
    estimate = -aivat(hands, "bot", bot, EquityValues(game)).estimate
    return lbr_money.reshape(-1, 2), estimate.reshape(-1, 2)


def head_to_head(job: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``hands`` deals of ``seed`` in both seatings, the bot against the re-solver:
    the bot's money and AIVAT estimate per deal (chips, mean of the seatings)."""
    seed, hands = job
    game = load_game("hunl")
    bot, resolver = make_strategy(BOT, game, seed=seed), make_strategy(RESOLVER, game, seed=seed)
    money, estimate = np.zeros(hands), np.zeros(hands)
    for players in ((bot, resolver), (resolver, bot)):
        names = ("bot", "resolver") if players[0] is bot else ("resolver", "bot")
        played = simulate_hands(game, list(players), hands, seed=seed, names=names, rotate=False)
        money += played.values[:, names.index("bot")] / 2
        estimate += aivat(played, "bot", bot, EquityValues(game), opponent=resolver).estimate / 2
    return money, estimate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=300, help="LBR duplicate pairs")
    parser.add_argument("--h2h-hands", type=int, default=100, help="head-to-head deals, each in both seatings")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    game = load_game("hunl")
    per_chip = 1000 / max(game.blind)  # mbb/g
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        h2h_jobs = [(args.seed + k, len(part)) for k, part in enumerate(np.array_split(np.arange(args.h2h_hands), args.workers)) if len(part)]
        lbr_jobs = [(args.seed, a, min(a + 5, args.hands)) for a in range(0, args.hands, 5)]
        h2h = list(pool.map(head_to_head, h2h_jobs))
        h2h_seconds = time.perf_counter() - started
        lbr = list(pool.map(lbr_chunk, lbr_jobs))
    lbr_seconds = time.perf_counter() - started - h2h_seconds
    money = mean_ci(np.concatenate([m for m, _ in h2h])).scaled(per_chip)
    reduced = mean_ci(np.concatenate([e for _, e in h2h])).scaled(per_chip)
    print(
        f"head to head, duplicate, {BOT} vs {RESOLVER}, HUNL: {money.mean:+.0f} ± {money.half_width:.0f} mbb/g raw,"
        f" {reduced.mean:+.0f} ± {reduced.half_width:.0f} mbb/g with AIVAT over {args.h2h_hands} deals x 2 seatings"
        f" ({h2h_seconds:.0f} s, {args.workers} workers)",
        flush=True,
    )
    raw = mean_ci(np.concatenate([m for m, _ in lbr]).mean(axis=1)).scaled(per_chip)
    x = mean_ci(np.concatenate([e for _, e in lbr]).mean(axis=1)).scaled(per_chip)
    print(
        f"LBR (fcpa, every street) vs {BOT}, HUNL: {raw.mean:+.0f} ± {raw.half_width:.0f} mbb/g raw over {args.hands}"
        f" duplicate pairs ({lbr_seconds:.0f} s, {lbr_seconds / (2 * args.hands):.1f} s a hand, {args.workers} workers)",
        flush=True,
    )
    print(f"LBR (fcpa, every street) vs {BOT}, HUNL, AIVAT: {x.mean:+.0f} ± {x.half_width:.0f} mbb/g", flush=True)
    best, kind = (x, "AIVAT") if x.half_width <= raw.half_width else (raw, "raw")
    ratio = (ALWAYS_FOLD - best.mean) / (ALWAYS_FOLD - DEEPSTACK[0])
    print(
        f"HUNL LBR fcpa every street vs {BOT}: {best.mean:.0f} ± {best.half_width:.0f} mbb/g (95%, {kind}) vs DeepStack"
        f" {DEEPSTACK[0]:.0f} ± {DEEPSTACK[1]:.0f} ratio {ratio:.2f}"
    )


if __name__ == "__main__":
    main()
