"""``arena analyze LOGS... [--format table|json]``: per player results of ACPC logs.

LOGS are ``.log`` files (ours or the reference dealer's), ``*.hands.msgpack``
hand records, ``.phh``/``.phhs`` hand histories (:mod:`analysis.phh`), or
folders (:func:`analysis.hand_files.hand_files`: their ``*.log`` files, else their
records, else their hand histories). For each
seat name it prints the hands played, the mean per hand in the game's unit
(:func:`poker.stats.unit_of`: mbb/g for games with blinds, chips/hand
otherwise), the standard deviation per hand and the 95% interval of the mean.
When logs are the seatings of duplicate matches (:mod:`analysis.duplicate`),
the duplicate estimate follows: per hand, each player's result averaged over
the seatings, then mean and interval over hands. ``--format json`` prints the
same as one JSON document.

``--strategy SPEC --player NAME``: NAME played the strategy SPEC (any spec
whose ``policy()`` exists, e.g. ``leduc-cfr`` or ``tilt:preset=orange``; not a
portfolio, whose policy changes from hand to hand), so its hands are also
estimated with lower-variance, unbiased estimators, on-policy and with full
information (an ACPC log shows every card): raw money,
:func:`analysis.importance.estimate`'s basic, early-folds, all-cards and
all-cards+early-folds, and :func:`analysis.aivat.aivat`. AIVAT's value function
must be fixed before the data: where the public tree can be built (Kuhn, Leduc)
it is :class:`analysis.aivat.TreeValues` of SPEC against SPEC itself (its exact
values in self-play), derived from the named strategy alone and never from the
logs or the opponent; in limit hold'em it is :class:`analysis.aivat.EquityValues`
(pot share by showdown equity), limit and no-limit (where SPEC's policy must
have a column for every raise size seen: the minimum and all-in by default).
Needs a two-player game.

No-limit logs also get the all-in adjusted estimate (:mod:`analysis.allin`) per
player and, for duplicate seatings, its duplicate form. Logs with a portfolio
agent's side files (:func:`analysis.hand_files.read_components`) get a table per
component. ``--report PATH.html`` writes a self-contained HTML report
(:mod:`analysis.report`).

Exit statuses: 0 done; 1 a log that cannot be read, logs of different games,
logs that look like one duplicate match but do not pair (one line on stderr
naming file, line or hand), logs that hold no hand, hands the named strategy
could not have played, a game the estimators do not handle, or a report that
cannot be written; 2 usage (a log or game that is not there, a strategy that
cannot be built or has no policy, a player not in the logs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.document import analyze, format_report
from analysis.duplicate import DuplicateError
from analysis.estimators import EstimatorError, estimator_table
from analysis.hand_files import hand_files, read_hands
from analysis.hands import HandsError, concat
from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, existing_path, fail, parse
from poker.gamedef import Game, GameDefError, load_game

__all__ = ["main"]

PROG = "arena analyze"


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        PROG,
        "Per player results of ACPC match logs: raw means with 95% intervals, the "
        "duplicate estimate when the logs are the seatings of duplicate matches, and with --strategy/--player "
        "importance-sampling and AIVAT estimates of that player.",
        epilog="exit status: 0 done; 1 unreadable or mismatched logs, logs without a hand, hands --strategy could not"
        " have played, a game the estimators do not handle or an unwritable report; 2 usage (see docs/exit-statuses.md)",
    )
    parser.add_argument(
        "logs", nargs="+", metavar="LOG", type=existing_path, help=".log files, *.hands.msgpack records, .phh/.phhs hand histories, or folders of them"
    )
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    parser.add_argument("--game", help="game name or file, when a log's header does not name a game this machine has")
    parser.add_argument("--skip-damaged", action="store_true", help="leave damaged lines and records out (listed) instead of failing")
    parser.add_argument("--validate", action="store_true", help="replay every hand with the rules (slow)")
    parser.add_argument(
        "--strategy",
        metavar="SPEC",
        help="the strategy --player played (needs policy(); two-player): adds importance-sampling and AIVAT"
        " estimates",
    )
    parser.add_argument("--player", metavar="NAME", help="the seat name that played --strategy")
    parser.add_argument("--report", metavar="PATH", help="also write a self-contained HTML report to PATH")
    return parser


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    if (args.strategy is None) != (args.player is None):
        return fail(PROG, "--strategy and --player go together (see --help)", EXIT_USAGE)
    game: Game | None = None
    try:
        if args.game is not None:
            game = load_game(args.game)
    except GameDefError as error:
        return fail(PROG, error, EXIT_USAGE)
    try:
        tables = [
            read_hands(path, game, skip_damaged=args.skip_damaged, validate=args.validate) for path in hand_files(args.logs)
        ]
        for end in (end for table in tables for end in table.damaged_ends):  # --skip-damaged: hands may be lost
            print(f"{PROG}: warning: {end}", file=sys.stderr)
        every = concat(tables)
        if not len(every):
            raise HandsError(f"{every.source}: no finished hand to analyze")
        document = analyze(tables, every)
    except (HandsError, DuplicateError) as error:
        return fail(PROG, error, EXIT_FAILED)
    if args.strategy is not None:
        try:
            rows, described = estimator_table(every, args.player, args.strategy)
            document["estimated"] = {"player": args.player, "strategy": args.strategy, "aivat_values": described}
            document["estimators"] = rows
        except EstimatorError as error:
            return fail(PROG, error, EXIT_USAGE if error.usage else EXIT_FAILED)
    if args.report is not None:
        from analysis.report import write_report

        try:
            write_report(Path(args.report), document, every)
        except OSError as error:
            return fail(PROG, f"cannot write the report {args.report}: {error.strerror or error}", EXIT_FAILED)
    if args.format == "json":
        print(json.dumps(document, indent=2))
    else:
        print(format_report(document))
    if args.report is not None:
        print(f"report: {args.report}", file=sys.stderr if args.format == "json" else sys.stdout)
    return EXIT_OK
