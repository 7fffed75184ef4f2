"""``arena show FILE``: a strategy file as people read it.

One row per information set: the acting position, its hole cards, the board,
the betting in ACPC notation (``/`` between rounds), then the probability of
each action (``f``, ``c``, ``r`` in limit games; ``r<raise-to>`` in no-limit
ones). ``--betting``, ``--hole``, ``--board`` and ``--position`` filter the
rows; ``--format json`` prints one object per information set for tools::

    {"position": 0, "hole": "Ks", "board": "", "betting": "",
     "actions": {"c": 0.61, "r": 0.39}}

It reads the strategy on the game's public tree (a bucket table is expanded to
it), so it shows games whose public tree can be built: Kuhn, Leduc, no-limit
Leduc, and the three-player files of 3p Kuhn and 3p Leduc. A file solved with
``--suit-isomorphism`` holds one board per suit class: the table shows those
boards, rounded; the JSON lists every information set of the game (the other
suits' boards copied from their class) at full precision
(:func:`strategies.cfr.listing.file_information_sets`). Exit status 0, or 1 with
one line when the file cannot be read or its game is too big to show.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from poker.cards import cards_from_text
from strategies.cfr.listing import InfoSet, file_information_sets
from strategies.cfr.strategy_file import StrategyFileError, load_strategy
from strategies.cfr.tree.public import TreeError

__all__ = ["main"]

_ROW = "{:<3}  {:<4}  {:<10}  {:<16}  {}"


def _row(info: InfoSet) -> str:
    probabilities = "  ".join(f"{name} {p:.3f}" for name, p in info.actions.items())
    return _ROW.format(info.position, info.hole, info.board or "-", info.betting or "-", probabilities)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena show", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("file", type=Path, help="a strategy file written by `arena solve`")
    parser.add_argument("--betting", help="only this betting, in ACPC notation (e.g. r, cr, rc/r)")
    parser.add_argument("--hole", help="only these hole cards, in any order (e.g. Ks)")
    parser.add_argument("--board", help="only this board (e.g. Qh)")
    parser.add_argument("--position", type=int, help="only this acting position (0 = first to act)")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    return parser


def _same_cards(text: str) -> frozenset[int]:
    return frozenset(cards_from_text(text))


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        hole = None if args.hole is None else _same_cards(args.hole)
        board = None if args.board is None else _same_cards(args.board)
    except ValueError as error:
        print(f"arena show: {error}", file=sys.stderr)
        return 2
    try:
        saved = load_strategy(args.file)
        listing = file_information_sets(saved, every_board=args.format == "json")
    except (OSError, StrategyFileError) as error:
        print(f"arena show: {error}", file=sys.stderr)
        return 1
    except TreeError as error:
        print(f"arena show: {args.file}: the game's public tree is too big to show ({error})", file=sys.stderr)
        return 1
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
        return 0
    print(_ROW.format("pos", "hole", "board", "betting", "actions"))
    for info in rows:
        print(_row(info))
    return 0
