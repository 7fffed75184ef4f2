"""``arena dbr LOGS... --opponent NAME --method rnr|dbr --p P -o FILE``: a
counter-strategy to an opponent seen in match logs (Johanson 2016 thesis ch6).

Counts ``NAME``'s actions per information set over the hands of the ``.log``
files (or ``*.hands.msgpack`` records), then solves, for each of our seats, the
game in which ``NAME`` is restricted to that model: ``rnr`` with probability
``--p`` at every information set (restricted Nash response), ``dbr`` with
``P_conf(n_I)`` of the information set's observation count ``n_I``, scaled by
``P_max = --p`` (data-biased response; ``--pconf`` picks 0-10-linear, 1-step,
10-step or s-curve). Writes a strategy file for both seats (algorithm ``rnr`` or
``dbr``) and prints the model's size and the result's exploitability.

Without ``--abstraction`` the model is counted and solved on the game's public
tree (Kuhn, Leduc: :mod:`strategies.dbr`), and the exploitability is exact.
``--abstraction SPEC`` (``ehs2:5:perfect``...; ``none``: no card abstraction,
small games) counts per *abstract* information set (betting node and the
opponent's bucket sequence) and solves in the abstract game of that
perfect-recall card abstraction (:mod:`strategies.dbr_abstract`): what hold'em
needs. The file then has the bucket layout of ``arena solve --algorithm
abstract`` and plays through the equilibrium agent; the command prints the
abstract game's exploitability, the value against the model and that of a best
response to it (both in the abstract game), and the real game's exploitability
where the public tree can be built. No-limit logs are read through the
betting abstraction of ``--bet-sizes`` by the agent's action translation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from analysis.hand_files import read_hands
from analysis.hands import Hands, HandsError, concat
from poker.stats import unit_of
from analysis.tables import plural
from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    UsageParser,
    existing_path,
    fail,
    number,
    output_problem,
    parse,
    whole,
)
from poker.gamedef import GameDefError, load_game
from strategies.cfr.abstraction.card_abstraction import load_abstraction
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.best_response.exact import exploitability
from strategies.cfr.solvers.abstract_game import AbstractGameError
from strategies.cfr.solvers.abstract_solve import ABSTRACT_EXPLOITABILITY, AbstractSolve
from strategies.cfr.solvers.pcs import PCSError
from strategies.cfr.strategy_file import BUCKETS, StrategyFile, save_strategy
from strategies.cfr.tree.public import TreeError, build_tree, buildable_tree, parse_bet_sizes
from strategies.dbr import DEFAULT_ITERATIONS, METHODS, PCONF_FUNCTIONS, DBRError, count_model, counter_strategy
from strategies.dbr_abstract import abstract_counter_strategy, abstract_exploitation, count_abstract_model

__all__ = ["main"]

PROG = "arena dbr"


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("logs", type=existing_path, nargs="+", help="ACPC .log files (or *.hands.msgpack records, .phh/.phhs hand histories)")
    parser.add_argument("--opponent", required=True, help="the player to model, by its name in the logs")
    parser.add_argument("--method", choices=METHODS, default="dbr", help="rnr or dbr (default dbr)")
    parser.add_argument("--p", type=number(0.0, 1.0), required=True, help="RNR's p, or DBR's P_max, in [0, 1]")
    parser.add_argument("--pconf", choices=PCONF_FUNCTIONS, default="0-10-linear", help="DBR's P_conf(n) (default 0-10-linear)")
    parser.add_argument("--s", type=float, default=1.0, help="the s of --pconf s-curve (default 1)")
    parser.add_argument("--game", help="the game, when the logs' headers do not name one")
    parser.add_argument("--showdown-only", action="store_true", help="count only hands that reached a showdown")
    parser.add_argument("--iterations", type=whole(1), default=DEFAULT_ITERATIONS, help="CFR+ iterations per seat")
    parser.add_argument(
        "--abstraction",
        help="card abstraction spec (ehs2:5:perfect, ...; none: no abstraction): count per abstract information set"
        " and solve in its abstract game (hold'em needs one)",
    )
    parser.add_argument(
        "--bet-sizes",
        help="with --abstraction, no-limit: raises as comma-separated pot fractions (default 1: pot and all-in)",
    )
    parser.add_argument(
        "--float32", action="store_true", help="with --abstraction: terminal matrix products in float32 (faster)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the strategy file to write")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    problem = output_problem(args.output)
    if problem:
        return fail(PROG, f"-o {args.output}: {problem}", EXIT_USAGE)
    try:
        game = None if args.game is None else load_game(args.game)
        hands = concat([read_hands(path, game) for path in args.logs])
        if args.abstraction is None:
            if args.bet_sizes is not None or args.float32:
                raise DBRError("--bet-sizes and --float32 apply only with --abstraction")
            lines = _public(args, hands)
        else:
            lines = _abstract(args, hands)
    except GameDefError as error:
        return fail(PROG, error, EXIT_USAGE)
    except (HandsError, TreeError, DBRError, AbstractionError, AbstractGameError, PCSError) as error:
        return fail(PROG, error, EXIT_FAILED)
    for line in lines:
        print(line)
    print(f"wrote {args.output}")
    return EXIT_OK


def _settings(args: argparse.Namespace, played: int) -> dict[str, bool | int | float | str | None]:
    return {
        "method": args.method,
        "p": args.p,
        "pconf": args.pconf if args.method == "dbr" else None,
        "s": args.s,
        "opponent": args.opponent,
        "hands": played,
        "showdown_only": args.showdown_only,
        "solver": "cfr+",
    }


def _summary(args: argparse.Namespace, played: int, observed: np.ndarray, where: str) -> list[str]:
    what = f"p={args.p}" if args.method == "rnr" else f"P_max={args.p}, P_conf {args.pconf}"
    return [
        f"{args.opponent}: {plural(played, 'hand')}, {observed.sum():.10g} decisions observed at"
        f" {int((observed > 0).sum())} {where}information sets",
        f"{args.method} ({what}), {args.iterations} CFR+ iterations per seat",
    ]


def _public(args: argparse.Namespace, hands: Hands) -> list[str]:
    """Count and solve on the public tree; write the file; the lines to print."""
    try:
        tree = build_tree(hands.game)
    except TreeError as error:
        raise TreeError(f"{error}; or count and solve through a card abstraction: --abstraction ehs2:5:perfect") from None
    model = count_model(tree, hands, args.opponent, showdown_only=args.showdown_only)
    strategy = counter_strategy(model, args.method, args.p, args.pconf, s=args.s, iterations=args.iterations)
    unit = unit_of(tree.game)
    value = exploitability(tree, strategy)
    settings = _settings(args, model.hands)
    saved = StrategyFile(tree.game, None, args.method, args.iterations, value, {"strategy": strategy}, settings=settings)
    save_strategy(args.output, saved, tree)
    lines = _summary(args, model.hands, model.observations, "")
    lines[-1] += f"; exploitability {unit.format(value, 6)}"
    return lines


def _abstract(args: argparse.Namespace, hands: Hands) -> list[str]:
    """Count per abstract information set and solve in the abstract game; write
    the bucket-layout file; the lines to print."""
    game = hands.game
    if game.is_limit and args.bet_sizes is not None:
        raise DBRError("the logs' game is a limit game: --bet-sizes applies only to no-limit games")
    betting = None if game.is_limit else parse_bet_sizes(args.bet_sizes)
    abstraction = load_abstraction(args.abstraction, game)
    solve = AbstractSolve.build(abstraction, betting=betting, single=args.float32)
    model = count_abstract_model(solve, hands, args.opponent, showdown_only=args.showdown_only)
    with tqdm(total=2 * args.iterations, unit="it", disable=args.quiet, file=sys.stderr, leave=False) as bar:
        table = abstract_counter_strategy(
            model, args.method, args.p, args.pconf, s=args.s, iterations=args.iterations, progress=bar.update
        )
    g = solve.game
    unit = unit_of(game)
    abstract_value = g.exploitability(table)
    fixed = model.strategy()
    against = abstract_exploitation(g, table, fixed)
    best = float(np.mean(g.best_response(fixed)))
    tree = buildable_tree(game, g.tree.abstraction)
    file_table = solve.to_file(table)
    real = None
    if tree is not None:
        real = exploitability(tree, solve.playable(file_table).tree_strategy(tree))
    settings = _settings(args, model.hands)
    settings.update({ABSTRACT_EXPLOITABILITY: abstract_value, "against_model": against, "best_response_to_model": best})
    saved = StrategyFile(
        game=game,
        abstraction=g.tree.abstraction,
        algorithm=args.method,
        iterations=args.iterations,
        exploitability=real,
        arrays={"strategy": file_table},
        settings=settings,
        card_abstraction=solve.spec,
        layout=BUCKETS,
    )
    save_strategy(args.output, saved, g.tree)
    lines = _summary(args, model.hands, model.observations, f"abstract ({solve.spec}) ")
    lines[-1] += f" in the abstract game; its exploitability there {unit.format(abstract_value, 6)}"
    if real is not None:
        lines[-1] += f", in the real game {unit.format(real, 6)}"
    lines.append(
        f"against the model (abstract game; always call where unobserved): {unit.format(against, 6)};"
        f" a best response to it: {unit.format(best, 6)}"
    )
    return lines

