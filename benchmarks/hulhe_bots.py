"""Head-to-head duplicate match of two hold'em strategies (issue 9: "the HULHE
bot beats a 5-bucket perfect-recall bot significantly").

Each strategy is a spec as ``arena match`` takes it: a bot name of ``arena
bots`` (``hulhe-pcs-ir50``, ``hulhe-ehs2-5``) or ``equilibrium:file=PATH`` (a
checkpoint). Every deal is played twice, the two seatings swapped with the
same cards (:func:`strategies.portfolio.play_hands`, in this process, every
action checked for legality); the first strategy's result of a deal is its mean
over the two seatings, and the figure is the mean over the deals with a 95%
interval (1.96 s / sqrt(n)), in mbb/g. The deals are played in chunks with
fresh card seeds until ``--hands`` deals or ``--minutes`` have passed.

Run: ``.venv/bin/python benchmarks/hulhe_bots.py [OURS] [ANCHOR] [--hands N]
[--minutes M] [--seed S]`` (default ``hulhe-pcs-ir50`` against
``hulhe-ehs2-5``). The last line is the figure: ours' mbb/g against the anchor
vs the 95% interval's half-width, ratio mean / half-width (above 1: ours wins
significantly; below -1: the anchor does)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from poker.gamedef import load_game  # noqa: E402
from poker.stats import mean_ci, unit_of  # noqa: E402
from strategies import make_strategy  # noqa: E402


def duplicate_chunk(game_name: str, ours: str, anchor: str, deals: int, seed: int) -> np.ndarray:
    """``deals`` deals in both seatings; ours' chips per deal, the mean of the two."""
    from strategies.portfolio import play_hands

    game = load_game(game_name)
    total = np.zeros(deals)
    for k, (first, second) in enumerate(((ours, anchor), (anchor, ours))):
        players = [make_strategy(spec, game, seed=seed * 31 + k * 7 + i) for i, spec in enumerate((first, second))]
        chips = play_hands(game, players, deals, seed=seed)
        total += chips[:, 0 if first == ours else 1]
    return total / 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ours", nargs="?", default="hulhe-pcs-ir50")
    parser.add_argument("anchor", nargs="?", default="hulhe-ehs2-5")
    parser.add_argument("--game", default="hulhe")
    parser.add_argument("--hands", type=int, default=20000, help="deals, each in both seatings (default 20000)")
    parser.add_argument("--minutes", type=float, default=30.0, help="stop starting chunks after this (default 30)")
    parser.add_argument("--chunk", type=int, default=1000, help="deals per chunk (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    unit = unit_of(load_game(args.game))
    values: list[np.ndarray] = []
    started = time.perf_counter()
    done = 0
    while done < args.hands and time.perf_counter() - started < args.minutes * 60:
        deals = min(args.chunk, args.hands - done)
        values.append(duplicate_chunk(args.game, args.ours, args.anchor, deals, args.seed + 1_000_003 * len(values)))
        done += deals
        est = mean_ci(np.concatenate(values)).scaled(unit.per_chip)
        print(f"{done} deals: {est.mean:+.1f} ± {est.half_width:.1f} {unit.name}", flush=True)
    est = mean_ci(np.concatenate(values)).scaled(unit.per_chip)
    elapsed = time.perf_counter() - started
    verdict = "significant" if est.low > 0 or est.high < 0 else "not significant"
    print(f"{args.ours} vs {args.anchor}: {done} duplicate deals ({2 * done} hands) in {elapsed:.0f} s")
    print(f"{args.ours}: {est.mean:+.2f} ± {est.half_width:.2f} {unit.name} (95% interval, {verdict})")
    ratio = est.mean / est.half_width if est.half_width > 0 else float("nan")
    figure = f"duplicate {unit.name} vs {args.anchor}: {est.mean:+.2f} vs half-width {est.half_width:.2f}"
    print(f"{figure} ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
