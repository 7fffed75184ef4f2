"""``arena show FILE``: a strategy file as people read it (the listing of
:mod:`strategies.cfr.listing`), filtered by ``--betting``, ``--hole``,
``--board`` and ``--position``, as a table or JSON."""

from __future__ import annotations

import json

from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, existing_path, fail, parse
from poker.cards import cards_from_text
from strategies.cfr.listing import HEADER, file_information_sets
from strategies.cfr.strategy_file import StrategyFileError, load_strategy
from strategies.cfr.tree.public import TreeError

__all__ = ["main"]

PROG = "arena show"
_DESCRIPTION = """\
A strategy file as people read it: one row per information set, the acting
position, its hole cards, the board, the betting in ACPC notation (/ between
rounds), then the probability of each action (f, c, r in limit games;
r<raise-to> in no-limit ones). --betting, --hole, --board and --position filter
the rows; --format json prints one object per information set for tools:

    {"position": 0, "hole": "Ks", "board": "", "betting": "",
     "actions": {"c": 0.61, "r": 0.39}}

It reads the strategy on the game's public tree (a bucket table is expanded to
it), so it shows games whose public tree can be built: Kuhn, Leduc, no-limit
Leduc, and the three-player files of 3p Kuhn and 3p Leduc. A file solved with
--suit-isomorphism holds one board per suit class: the table shows those boards,
rounded; the JSON lists every information set of the game (the other suits'
boards copied from their class) at full precision."""
_EXIT_STATUSES = (
    "exit status: 0 shown; 1 a file that cannot be read or whose game is too big to show;"
    " 2 usage (a file that is not there, a filter that is not cards)"
)


def _same_cards(text: str) -> frozenset[int]:
    return frozenset(cards_from_text(text))


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, _DESCRIPTION, epilog=_EXIT_STATUSES)
    parser.add_argument("file", type=existing_path, help="a strategy file written by `arena solve`")
    parser.add_argument("--betting", help="only this betting, in ACPC notation (e.g. r, cr, rc/r)")
    parser.add_argument("--hole", help="only these hole cards, in any order (e.g. Ks)")
    parser.add_argument("--board", help="only this board (e.g. Qh)")
    parser.add_argument("--position", type=int, help="only this acting position (0 = first to act)")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    try:
        hole = None if args.hole is None else _same_cards(args.hole)
        board = None if args.board is None else _same_cards(args.board)
    except ValueError as error:
        return fail(PROG, error, EXIT_USAGE)
    try:
        listing = file_information_sets(load_strategy(args.file), every_board=args.format == "json")
    except (OSError, StrategyFileError) as error:
        return fail(PROG, error, EXIT_FAILED)
    except TreeError as error:
        return fail(PROG, f"{args.file}: the game's public tree is too big to show ({error})", EXIT_FAILED)
    rows = [
        info
        for info in listing
        if (args.betting is None or info.betting == args.betting)
        and (args.position is None or info.position == args.position)
        and (hole is None or _same_cards(info.hole) == hole)
        and (board is None or _same_cards(info.board) == board)
    ]
    if args.format == "json":
        print(json.dumps([info.as_json() for info in rows], indent=1))
        return EXIT_OK
    print(HEADER)
    for info in rows:
        print(info.as_row())
    return EXIT_OK
