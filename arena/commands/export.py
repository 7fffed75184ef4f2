"""``arena export LOGS... --format phh|pokerstars [-o FILE]``: hands as the
poker world's hand histories.

LOGS are what ``arena analyze`` reads (:func:`analysis.hand_files.hand_files`):
``.log`` files (ours or the reference dealer's), ``*.hands.msgpack`` records,
``.phh``/``.phhs`` files, or run folders. ``--format phh`` writes one ``.phhs``
document of every hand (:mod:`analysis.phh`: PokerKit and the PHH datasets'
tools read it); ``--format pokerstars`` writes PokerStars hand-history text
(:mod:`analysis.pokerstars`: Hold'em Manager, PokerTracker and fpdb import it),
dated with the newest log's time, as an ACPC log has no clock. Texas hold'em
only, limit and no-limit, any number of players: Kuhn and Leduc poker have no
such formats and are refused in one line. ``-o FILE`` writes there (default:
standard output).
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from pathlib import Path

from analysis.hand_files import hand_files, read_hands
from analysis.hands import HandsError, concat
from analysis.holdem import HoldemError
from analysis.phh import write_phh
from analysis.pokerstars import write_pokerstars
from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, existing_path, fail, output_problem, parse
from poker.gamedef import GameDefError, load_game

__all__ = ["main"]

PROG = "arena export"
_EXIT_STATUSES = (
    "exit status: 0 written; 1 logs that cannot be read, of different games, or of a game with no such format"
    " (Kuhn, Leduc), or an output that cannot be written; 2 usage (see docs/exit-statuses.md)"
)


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, __doc__ or "", epilog=_EXIT_STATUSES)
    parser.add_argument(
        "logs", nargs="+", metavar="LOG", type=existing_path, help=".log files, *.hands.msgpack records, .phh/.phhs files, or run folders"
    )
    parser.add_argument("--format", choices=("phh", "pokerstars"), required=True, help="phh (a .phhs file) or pokerstars (text)")
    parser.add_argument("--game", help="game name or file, when a log's header does not name a game this machine has")
    parser.add_argument("-o", "--output", type=Path, help="the file to write (default: standard output)")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.output is not None and (problem := output_problem(args.output, "hand-history file")):
        return fail(PROG, f"-o {args.output}: {problem}", EXIT_USAGE)
    try:
        game = None if args.game is None else load_game(args.game)
    except GameDefError as error:
        return fail(PROG, error, EXIT_USAGE)
    try:
        paths = hand_files(args.logs)
        hands = concat([read_hands(path, game) for path in paths])
        if args.format == "phh":
            blocks: Iterator[str] = write_phh(hands)
        else:
            newest = max(path.stat().st_mtime for path in paths)
            blocks = write_pokerstars(hands, datetime.datetime.fromtimestamp(newest, datetime.UTC))
        first = next(blocks, "")  # a game with no such format fails here, before any file is made
        if args.output is None:
            sys.stdout.write(first)
            sys.stdout.writelines(blocks)
        else:
            with open(args.output, "w", encoding="utf-8") as file:
                file.write(first)
                file.writelines(blocks)
    except (HandsError, HoldemError) as error:
        return fail(PROG, error, EXIT_FAILED)
    except OSError as error:
        return fail(PROG, f"{args.output or 'standard output'}: {error.strerror or error}", EXIT_FAILED)
    return EXIT_OK
