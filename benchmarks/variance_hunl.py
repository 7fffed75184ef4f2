"""HUNL: AIVAT with ``hunl-modicum``'s own re-solve values against its raw money (issue 45).

The match: **HUNL** (``hunl``) between the shipped re-solving bot
``hunl-modicum`` (the blueprint ``strategies/data/hunl-modicum.compact`` that
ships in the package, with ``record=``) and ``--opponent`` (default
:data:`OPPONENT`, continual re-solving with equity leaves: an agent of another
kind, as issue 45 asks; ``always-call`` is the hosted acceptance's, whose calls
of the bot's bets its values, which expect folds, cannot foresee),
``--hands`` hands in this process through the agent hooks, seats alternating,
cards from ``--seed``. The bot's recorded values (:mod:`strategies.resolve.recording`)
give AIVAT's terms (:mod:`analysis.recorded_values`); nothing is re-solved to
score. Printed: raw money and AIVAT (mean, standard deviation per hand, 95%
interval, in mbb/g) with the bot's own values everywhere (``own values``) and
with the board deals by showdown equity (``own + equity deals``, what a
match's score uses: :func:`analysis.recorded_values.recorded_source`), the
recording's overhead (its seconds against the re-solves') and the record's
size per hand, then the issue's two lines for the score's AIVAT: the
standard-deviation ratio against the AIVAT paper's HUNL figure (DeepStack's
evaluation: 85% lower, about 6.7x) and AIVAT minus raw over the same hands
(95%), which must contain 0.

    python benchmarks/variance_hunl.py --hands 150 --seed 8
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import strategies  # noqa: F401  (registers the built-in strategies and bots)
from analysis.aivat import EquityValues
from analysis.recorded_values import play_through_hooks, read_values, recorded_aivat
from poker.gamedef import load_game
from poker.stats import mean_ci
from strategies.base import make_strategy
from strategies.resolve.agent import ResolvingStrategy

#: DeepStack's evaluation with AIVAT: 85% lower standard deviation (Burch et al. 2018).
AIVAT_RATIO = 6.7
#: The default opponent: re-solving with equity leaves, as the README's head-to-head row plays it.
OPPONENT = "resolve:evaluator=equity,iterations=100,boards=16"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--opponent", default=OPPONENT)
    args = parser.parse_args()
    game = load_game("hunl")
    mbb = 1000.0 / game.big_blind
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hunl-modicum.values.msgpack"
        bot = make_strategy(f"hunl-modicum:record={path}", game, seed=3)
        assert isinstance(bot, ResolvingStrategy) and bot.recorder is not None
        opponent = make_strategy(args.opponent, game, seed=1)
        solved = len(bot.solve_seconds)
        start = time.perf_counter()
        hands = play_through_hooks(game, [bot, opponent], args.hands, seed=args.seed, names=("hunl-modicum", "opponent"))
        play_s = time.perf_counter() - start
        recorder = bot.recorder
        bot.close()
        size = path.stat().st_size
        start = time.perf_counter()
        records = read_values(path, game)
        own = recorded_aivat(hands, "hunl-modicum", records)
        terms = recorded_aivat(hands, "hunl-modicum", records, deals=EquityValues(game))
        score_s = time.perf_counter() - start
    solve_s = sum(bot.solve_seconds[solved:])
    raw, estimate = terms.raw * mbb, terms.estimate * mbb
    print(f"HUNL: hunl-modicum (shipped strategies/data/hunl-modicum.compact) vs {args.opponent}, {args.hands} hands, seed {args.seed}")
    for name, values in (("raw", raw), ("AIVAT, own values", own.estimate * mbb), ("AIVAT, own + equity deals", estimate)):
        ci = mean_ci(values)
        print(f"  {name:<26} mean {ci.mean:+9.1f} ± {ci.half_width:7.1f} mbb/g   std {np.std(values, ddof=1):8.1f} mbb/hand")
    print(
        f"(play {play_s:.0f} s: re-solves {solve_s:.0f} s, recording {recorder.seconds:.1f} s ="
        f" {100 * recorder.seconds / max(solve_s, 1e-9):.1f}% of the re-solves; record {size / args.hands / 1024:.0f} KB a hand;"
        f" scoring {score_s:.1f} s)"
    )
    ratio = float(np.std(raw, ddof=1) / np.std(estimate, ddof=1))
    difference = mean_ci(estimate - raw)
    print(f"HUNL AIVAT std ratio: {ratio:.2f} (per hand played) vs the AIVAT paper's HUNL 6.7 ratio {ratio / AIVAT_RATIO:.2f}")
    print(f"HUNL AIVAT - raw: {difference.mean:+.1f} ± {difference.half_width:.1f} mbb/g")


if __name__ == "__main__":
    main()
