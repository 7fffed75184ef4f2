"""``arena show FILE``: a strategy file as people read it (:mod:`strategies.cfr.show`,
whose docstring is this command's --help), filtered by ``--betting``, ``--hole``,
``--board`` and ``--position``, as a table or JSON."""

from __future__ import annotations

import json

from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, existing_path, fail, parse
from poker.cards import cards_from_text
from strategies.cfr import show as showing
from strategies.cfr.show import HEADER, information_sets, strategy_on_tree
from strategies.cfr.strategy_file import StrategyFileError, load_strategy
from strategies.cfr.tree.public import TreeError

__all__ = ["main"]

PROG = "arena show"
_EXIT_STATUSES = (
    "exit status: 0 shown; 1 a file that cannot be read or whose game is too big to show;"
    " 2 usage (a file that is not there, a filter that is not cards)"
)


def _same_cards(text: str) -> frozenset[int]:
    return frozenset(cards_from_text(text))


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, showing.__doc__ or "", epilog=_EXIT_STATUSES)
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
        tree, strategy = strategy_on_tree(load_strategy(args.file))
    except (OSError, StrategyFileError) as error:
        return fail(PROG, error, EXIT_FAILED)
    except TreeError as error:
        return fail(PROG, f"{args.file}: the game's public tree is too big to show ({error})", EXIT_FAILED)
    rows = [
        info
        for info in information_sets(tree, strategy)
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
