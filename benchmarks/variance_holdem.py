"""Hold'em AIVAT with the hosted bot's own values against raw money and duplicate (issue 45).

**HULHE** (``holdem.limit.2p.reverse_blinds``): the hosted equilibrium bot
``hulhe-ir50`` against each of ``--opponents`` (default ``always-call``, a chump
whose own decisions add no variance, and ``hulhe-ir50`` itself seeded apart,
an equilibrium bot), ``--hands`` hands a seating, seats alternating, cards
from ``--seed``, and the duplicate seating (the same cards, the seats
swapped; each seating draws its own actions, as agents do). Each hand of the hosted bot is estimated by AIVAT with the value
function the scoring function uses for it (:mod:`analysis.known_values`:
:class:`analysis.policy_values.LookaheadValues`, its own policy for both
players to the end of the street, leaves by showdown equity), fixed before the
data; the opponent's decisions are not corrected (its policy is not known to a
host). Per pair: raw, duplicate, AIVAT and duplicate + AIVAT (mean, standard
deviation per value, 95% interval in mbb/g, and the ratio of raw's standard
deviation to each per hand played: a duplicate value costs two hands, so its
standard deviation counts sqrt(2) times).

The last lines pool the pairs' hands: AIVAT's standard-deviation ratio per hand
played against the AIVAT paper's HUNL figure (DeepStack's evaluation: 85%
lower, about 6.7x) and AIVAT minus raw over the same hands with its 95%
interval, which must contain 0 (the estimate is unbiased). HUNL's lines are
``benchmarks/variance_hunl.py``'s (``hunl-modicum``'s recorded values).

The seatings run in two processes. The first run also builds the pre-flop
equity table into the cache directory (about 40 s on two cores; see
:mod:`analysis.policy_values`).

    python benchmarks/variance_holdem.py --hands 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

# benchmarks/dealer.py would shadow the dealer package: the repository root goes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from poker.stats import mean_ci  # noqa: E402
from variance import print_table  # noqa: E402  (benchmarks/variance.py: the same table for Leduc and hold'em)

FloatArray = npt.NDArray[np.float64]
#: DeepStack's evaluation with AIVAT: 85% lower standard deviation (Burch et al. 2018).
AIVAT_RATIO = 1 / (1 - 0.85)
GAME = "holdem.limit.2p.reverse_blinds"
BOT = "hulhe-ir50"
#: Hands simulated at once.
CHUNK = 250


def seating(opponent: str, hands: int, seed: int, bot_first: bool) -> tuple[FloatArray, FloatArray, float, str]:
    """One seating of ``BOT`` against ``opponent``: the bot's money and AIVAT per
    hand (chips, in hand order), the seconds AIVAT took, and its value function."""
    import strategies  # noqa: F401  (registers the built-in strategies and bots)
    from analysis.aivat import aivat
    from analysis.importance import simulate_hands
    from analysis.known_values import known_values
    from poker.gamedef import load_game
    from strategies.base import make_strategy

    game = load_game(GAME)
    bot, other = make_strategy(BOT, game, seed=seed + 1), make_strategy(opponent, game, seed=seed + 2)
    players, names = ([bot, other], (BOT, "opponent")) if bot_first else ([other, bot], ("opponent", BOT))
    raw, estimate, seconds, described = [], [], 0.0, ""
    for chunk in range(0, hands, CHUNK):  # a simulation caches every state's policy: chunks bound its memory
        cards = seed * 1000 + chunk // CHUNK
        played = simulate_hands(
            game, players, min(CHUNK, hands - chunk), seed=cards, names=names, action_seed=2 * cards + bot_first
        )
        known = known_values(game, BOT, played, BOT)
        assert known is not None
        start = time.perf_counter()
        result = aivat(played, BOT, known.sigma, known.values)
        seconds += time.perf_counter() - start
        raw.append(result.raw)
        estimate.append(result.estimate)
        described = known.description
    return np.concatenate(raw), np.concatenate(estimate), seconds, described


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=1000, help="hands a seating (each pair plays two)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--opponents", default=f"always-call,{BOT}", help="comma-separated strategy specs")
    args = parser.parse_args()
    from poker.gamedef import load_game

    mbb = 1000.0 / load_game(GAME).big_blind
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    start = time.perf_counter()
    jobs = [(opponent, args.hands, args.seed, first) for opponent in opponents for first in (True, False)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(seating, *zip(*jobs)))
    wall = time.perf_counter() - start
    raw_all, aivat_all = [], []
    for k, opponent in enumerate(opponents):
        (raw_one, est_one, s_one, described), (raw_two, est_two, s_two, _) = done[2 * k], done[2 * k + 1]
        print(
            f"HULHE ({GAME}): {BOT} vs {opponent}, {args.hands} hands a seating, duplicate, seed {args.seed};"
            f" AIVAT {(s_one + s_two) / (2 * args.hands):.3f} s a hand; value function: {described}"
        )
        print_table(
            {
                "raw": np.concatenate([raw_one, raw_two]),
                "duplicate": (raw_one + raw_two) / 2,
                "aivat": np.concatenate([est_one, est_two]),
                "duplicate + aivat": (est_one + est_two) / 2,
            },
            unit="mbb/g",
            scale=mbb,
            digits=1,
        )
        raw_all += [raw_one, raw_two]
        aivat_all += [est_one, est_two]
    raw, estimate = np.concatenate(raw_all), np.concatenate(aivat_all)
    ratio = float(np.std(raw, ddof=1) / np.std(estimate, ddof=1))
    difference = mean_ci(estimate - raw).scaled(mbb)
    print(f"(wall {wall:.0f} s on two processes, {raw.size} hands)")
    print(
        f"HULHE AIVAT std ratio: {ratio:.2f} (per hand played, {' and '.join(opponents)} vs {BOT} pooled)"
        f" vs the AIVAT paper's HUNL 6.7 ratio {ratio / AIVAT_RATIO:.2f}"
    )
    print(f"HULHE AIVAT - raw: {difference.mean:+.1f} ± {difference.half_width:.1f} mbb/g")


if __name__ == "__main__":
    main()
