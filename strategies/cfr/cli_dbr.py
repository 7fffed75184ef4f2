"""``arena dbr LOGS... --opponent NAME --method rnr|dbr --p P -o FILE``: a
counter-strategy to an opponent seen in match logs (Johanson 2016 thesis ch6).

Counts ``NAME``'s actions per information set over the hands of the ``.log``
files (or ``*.hands.msgpack`` records), then solves, for each of our seats, the
game in which ``NAME`` is restricted to that model: ``rnr`` with probability
``--p`` at every information set (restricted Nash response), ``dbr`` with
``P_conf(n_I)`` of the information set's observation count ``n_I``, scaled by
``P_max = --p`` (data-biased response; ``--pconf`` picks 0-10-linear, 1-step,
10-step or s-curve). Writes a strategy file for both seats (algorithm ``rnr`` or
``dbr``) and prints the model's size and the result's exact exploitability.
Every log must be of one game, whose public tree can be built (Kuhn, Leduc);
hold'em through a card abstraction is not supported. See :mod:`strategies.dbr`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.hands import HandsError, concat, read_hands
from analysis.stats import unit_of
from poker.gamedef import GameDefError, load_game
from strategies.cfr.best_response.exact import exploitability
from strategies.cfr.cli import _output_problem
from strategies.cfr.strategy_file import StrategyFile, save_strategy
from strategies.cfr.tree.public import TreeError, build_tree
from strategies.dbr import DEFAULT_ITERATIONS, METHODS, PCONF_FUNCTIONS, DBRError, count_model, counter_strategy

__all__ = ["main"]


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not in [0, 1]")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arena dbr", description=__doc__)
    parser.add_argument("logs", type=Path, nargs="+", help="ACPC .log files (or *.hands.msgpack records)")
    parser.add_argument("--opponent", required=True, help="the player to model, by its name in the logs")
    parser.add_argument("--method", choices=METHODS, default="dbr", help="rnr or dbr (default dbr)")
    parser.add_argument("--p", type=_probability, required=True, help="RNR's p, or DBR's P_max, in [0, 1]")
    parser.add_argument("--pconf", choices=PCONF_FUNCTIONS, default="0-10-linear", help="DBR's P_conf(n) (default 0-10-linear)")
    parser.add_argument("--s", type=float, default=1.0, help="the s of --pconf s-curve (default 1)")
    parser.add_argument("--game", help="the game, when the logs' headers do not name one")
    parser.add_argument("--showdown-only", action="store_true", help="count only hands that reached a showdown")
    parser.add_argument("--iterations", type=_positive, default=DEFAULT_ITERATIONS, help="CFR+ iterations per seat")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the strategy file to write")
    args = parser.parse_args(argv)
    problem = _output_problem(args.output)
    if problem:
        print(f"arena dbr: {args.output} {problem}", file=sys.stderr)
        return 1
    try:
        game = None if args.game is None else load_game(args.game)
        hands = concat([read_hands(path, game) for path in args.logs])
        tree = build_tree(hands.game)
        model = count_model(tree, hands, args.opponent, showdown_only=args.showdown_only)
        strategy = counter_strategy(model, args.method, args.p, args.pconf, s=args.s, iterations=args.iterations)
    except (HandsError, GameDefError, TreeError, DBRError) as error:
        print(f"arena dbr: {error}", file=sys.stderr)
        return 1
    unit = unit_of(tree.game)
    observed = model.observations
    value = exploitability(tree, strategy)
    settings: dict[str, bool | int | float | str | None] = {
        "method": args.method,
        "p": args.p,
        "pconf": args.pconf if args.method == "dbr" else None,
        "s": args.s,
        "opponent": args.opponent,
        "hands": model.hands,
        "showdown_only": args.showdown_only,
        "solver": "cfr+",
    }
    saved = StrategyFile(tree.game, None, args.method, args.iterations, value, {"strategy": strategy}, settings=settings)
    save_strategy(args.output, saved, tree)
    print(
        f"{args.opponent}: {model.hands} hands, {int(observed.sum())} decisions observed at"
        f" {int((observed > 0).sum())} information sets"
    )
    what = f"p={args.p}" if args.method == "rnr" else f"P_max={args.p}, P_conf {args.pconf}"
    print(f"{args.method} ({what}), {args.iterations} CFR+ iterations per seat; exploitability {unit.format(value, 6)}")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
