"""``arena lbr AGENT``: local best response against a strategy, a sampled lower
bound on its exploitability (Lisý & Bowling 2017; :mod:`strategies.lbr`).

AGENT is a strategy spec (``always-call``, ``equilibrium:file=PATH``, …) whose
strategy states its policy for every private hand (:meth:`Strategy.policy`).
``--hands N`` deals N hands from ``--seed`` (the cards ``arena match`` deals with
that seed) and plays each twice, LBR in either position (duplicate pairs); the
result is LBR's mean winnings per hand in the game's unit (mbb/g with blinds,
chips/hand with antes) with its 95% interval, and per position. ``--streets``
names the 1-based rounds where LBR applies its rule (default all; ``3-4`` on
hold'em: turn and river, check/call before). ``--workers K`` plays chunks of
hands in K processes; the figures do not depend on K.

Exit status 0 with the results; 2 on a bad argument or a target whose policy
LBR cannot read (before anything else is printed).
"""

from __future__ import annotations

import sys

from tqdm import tqdm

from poker.stats import unit_of
from arena.commands._kit import EXIT_OK, EXIT_USAGE, UsageParser, fail, parse, whole
from poker.gamedef import GameDefError, load_game
from poker.stats import unit_of
from strategies.base import StrategyError
from strategies.cfr import compile_notice
from strategies.lbr import ACTION_SETS, LbrConfig, LbrError, check_target, parse_streets, run_lbr

__all__ = ["main"]

PROG = "arena lbr"
_positive = whole(1)


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("agent", help="the target strategy spec (it must give Strategy.policy)")
    parser.add_argument("--game", required=True, help="game name or .game file (two players)")
    parser.add_argument(
        "--hands", type=_positive, default=1000, help="hands dealt, each played in both seatings (default 1000)"
    )
    parser.add_argument("--actions", choices=ACTION_SETS, default="fcpa", help="LBR's action set (default fcpa)")
    parser.add_argument(
        "--streets", default=None, help="1-based rounds where LBR acts by its rule, e.g. 3-4 (default all)"
    )
    parser.add_argument("--seed", type=int, default=1, help="deal and sampling seed (default 1)")
    parser.add_argument("--workers", type=_positive, default=1, help="processes (default 1)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    compile_notice.install()  # the hand evaluator's kernels compile in the first hand, here (none imports them)
    try:
        game = load_game(args.game)
        streets = args.streets or f"1-{game.num_rounds}"
        config = LbrConfig(args.actions, parse_streets(streets, game.num_rounds))
        check_target(game, args.agent, args.hands, seed=args.seed)
        print(
            f"LBR ({args.actions}, acting on rounds {streets}) vs {args.agent} on {args.game}:"
            f" {args.hands} hands x 2 seatings, seed {args.seed}, {args.workers} worker(s)",
            flush=True,
        )
        with tqdm(total=args.hands, unit="hand", disable=args.no_progress or None, file=sys.stderr) as bar:
            result = run_lbr(
                game, args.agent, args.hands, seed=args.seed, config=config, workers=args.workers, progress=bar.update
            )
    except (OSError, GameDefError, StrategyError, LbrError, ValueError) as error:
        return fail(PROG, error, EXIT_USAGE)
    unit = unit_of(game)
    estimate = result.estimate.scaled(unit.per_chip)
    print(f"LBR winnings: {estimate.mean:.6g} {unit.name} ± {estimate.half_width:.4g} (95% CI)")
    for position in (0, 1):
        part = result.position(position).scaled(unit.per_chip)
        print(f"  LBR in position {position}: {part.mean:.6g} ± {part.half_width:.4g}")
    print(f"time: {result.seconds:.1f} s ({1000 * result.seconds / (2 * args.hands):.2f} ms per hand played)")
    return EXIT_OK
