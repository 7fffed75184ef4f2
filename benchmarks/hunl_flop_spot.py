"""What local best response gains at the HUNL bot's biggest leak, in a minute:
the flop after a called pre-flop pot raise, the bot (big blind) having checked.

Why: LBR's winnings against ``hunl-modicum`` come most from one line (LBR's
pot raise called, then a flop bet the bot folds to: docs/results.md, *by
line*), but measuring the whole match takes 300 duplicate pairs a quarter of an
hour and 4500 pairs to see ±250 mbb/g. Here the spot itself is measured with no
cards left to luck: for ``--flops`` flops (the first deals of ``--seed``) and
``--holdings`` of LBR's holdings on each (drawn uniformly from those the flop
leaves, the same for every bot), LBR's own valuation of its actions
(:func:`strategies.lbr.decide`, fcpa, against the bot's range after its pre-flop
call and its check, as LBR tracks it in a match) gives the gain of its best
action over checking: ``max(u) - u(check)``, chips, shown in mbb (a
thousandth of the big blind) per spot. Zero would mean no bet of LBR's beats
checking. Beside it: the bot's fold share against the pot-size bet (over its
range) and the share of LBR's holdings that bet. The bot is asked exactly as
LBR asks it in a match (the policy at the public state, every private hand).

What this does not measure: the rest of the hand (LBR's valuation assumes a
called bet is checked down), the other lines, and how often the spot comes; a
change that closes this spot may open another. It screens a change to the
bot's play before the 4500-pair run (``benchmarks/hunl_lbr.py``) that decides.

Run: ``.venv/bin/python benchmarks/hunl_flop_spot.py [--bot hunl-modicum]
[--anchor resolve:evaluator=equity] [--flops 20] [--holdings 15] [--seed 8]``
(about a minute for the bot, two for the anchor, on 2 cores). The anchor is
continual re-solving with check-down equity at the street's end, measured on
the same flops and holdings. Last line: ``HUNL flop spot, LBR's gain over
checking: ours vs anchor ratio r`` with r = anchor's gain / ours (above 1: ours
gives away less).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

import numpy as np  # noqa: E402

from poker.deal import Dealer, private_hands  # noqa: E402
from poker.gamedef import Game, load_game  # noqa: E402
from poker.state import CALL, FOLD, State  # noqa: E402
from strategies.base import Strategy, StrategyError, make_strategy  # noqa: E402
from strategies.lbr import Rollouts, _columns, _policy, bayes_update, decide, initial_range, raise_candidates  # noqa: E402

BOT = "hunl-modicum"
ANCHOR = "resolve:evaluator=equity"


@dataclass(frozen=True)
class Spot:
    """One bot's figures over the flops: LBR's gain per flop (mbb), fold and bet shares."""

    gains: np.ndarray
    folds: float
    bets: float
    seconds: float


def flops(game: Game, seed: int, count: int) -> list[tuple[int, ...]]:
    """The flops of the first ``count`` deals of ``seed``."""
    dealer = Dealer(game, seed=seed)
    return [tuple(int(c) for c in dealer.next_hand().board[:3]) for _ in range(count)]


def holdings(game: Game, board: tuple[int, ...], count: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``count`` of LBR's holdings, uniform over those ``board`` leaves."""
    live = [tuple(int(c) for c in h) for h in private_hands(game) if not set(int(c) for c in h) & set(board)]
    return [live[i] for i in rng.choice(len(live), size=count, replace=False)]


def measure(bot: Strategy, game: Game, boards: list[tuple[int, ...]], draws: list[list[tuple[int, ...]]]) -> Spot:
    """LBR's gain over checking at the spot (module docstring) on each flop, and the shares."""
    started = time.perf_counter()
    pot_raise = raise_candidates(State(game), "fcpa")[0]  # LBR's pot raise from the small blind: to 300
    raised = State(game).apply(pot_raise)
    columns = _columns(bot, raised)
    called = _policy(bot, raised, (), columns)[:, columns.index(CALL)]
    flop = raised.apply(CALL)
    gains, folds, bets = [], [], []
    for board, draw in zip(boards, draws):
        columns = _columns(bot, flop)
        checked = _policy(bot, flop, board, columns)[:, columns.index(CALL)]
        spot = flop.apply(CALL)
        pot_bet = spot.apply(raise_candidates(spot, "fcpa")[0])  # LBR's pot-size bet: to 300 + 600
        bet_columns = _columns(bot, pot_bet)
        folding = _policy(bot, pot_bet, board, bet_columns)[:, bet_columns.index(FOLD)]
        flop_gains = []
        for hole in draw:
            range_ = bayes_update(bayes_update(initial_range(game, hole, board), called), checked)
            utilities = decide(spot, board, range_, bot, Rollouts(game, hole, board), "fcpa").utilities
            flop_gains.append((max(utilities.values()) - utilities[CALL]) * 1000 / max(game.blind))
            folds.append(float(range_ @ folding))
            bets.append(max(utilities, key=lambda a: utilities[a]) != CALL)
        gains.append(float(np.mean(flop_gains)))
    return Spot(np.array(gains), float(np.mean(folds)), float(np.mean(bets)), time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bot", default=BOT, help=f"the bot measured (default {BOT})")
    parser.add_argument("--anchor", default=ANCHOR, help=f"measured beside it on the same spots (default {ANCHOR})")
    parser.add_argument("--flops", type=int, default=20)
    parser.add_argument("--holdings", type=int, default=15, help="LBR's holdings per flop")
    parser.add_argument("--seed", type=int, default=8, help="deals the flops and draws the holdings")
    args = parser.parse_args()
    if args.flops < 2 or not 1 <= args.holdings <= 1000:
        parser.error(f"--flops must be at least 2 (an interval) and --holdings 1 to 1000, got {args.flops} and {args.holdings}")
    game = load_game("hunl")
    try:
        bots = [make_strategy(spec, game, seed=args.seed) for spec in (args.bot, args.anchor)]
    except StrategyError as error:
        parser.error(str(error))
    boards = flops(game, args.seed, args.flops)
    rng = np.random.default_rng(args.seed)
    draws = [holdings(game, board, args.holdings, rng) for board in boards]
    results = []
    for spec, bot in zip((args.bot, args.anchor), bots):
        spot = measure(bot, game, boards, draws)
        half = 1.96 * float(spot.gains.std(ddof=1)) / np.sqrt(len(spot.gains))
        print(
            f"{spec}: LBR's gain over checking {spot.gains.mean():.0f} ± {half:.0f} mbb a spot ({args.flops} flops x"
            f" {args.holdings} holdings); the bot folds {spot.folds:.3f} of its range to a pot bet; LBR bets with"
            f" {spot.bets:.2f} of its holdings ({spot.seconds:.0f} s)",
            flush=True,
        )
        results.append(float(spot.gains.mean()))
    ours, anchor = results
    ratio = anchor / ours if ours > 0 else float("inf")
    print(f"HUNL flop spot, LBR's gain over checking: {ours:.0f} vs {anchor:.0f} ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
