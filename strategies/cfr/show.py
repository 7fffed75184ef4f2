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
Leduc, and the three-player files of 3p Kuhn and 3p Leduc. A file solved with ``--suit-isomorphism`` holds one board per suit class:
those are the boards shown. Exit status 0, or 1 with one line when the file
cannot be read or its game is too big to show.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from poker.cards import cards_from_text, cards_to_text
from strategies.cfr.solvers.pcs import tree_strategy
from strategies.cfr.solvers.multiplayer import MultiTree
from strategies.cfr.strategy_file import THREE_PLAYER, StrategyFileError, load_strategy
from strategies.cfr.tree.public import Tree, TreeError

__all__ = ["InfoSet", "information_sets", "main"]

_ROW = "{:<3}  {:<4}  {:<10}  {:<16}  {}"


@dataclass(frozen=True)
class InfoSet:
    """One information set of the acting position and its action probabilities."""

    position: int
    hole: str
    board: str
    betting: str
    actions: dict[str, float]

    def as_json(self) -> dict[str, object]:
        return {
            "position": self.position,
            "hole": self.hole,
            "board": self.board,
            "betting": self.betting,
            "actions": self.actions,
        }

    def as_row(self) -> str:
        probabilities = "  ".join(f"{name} {p:.3f}" for name, p in self.actions.items())
        return _ROW.format(self.position, self.hole, self.board or "-", self.betting or "-", probabilities)


def information_sets(tree: Tree | MultiTree, strategy: npt.NDArray[np.float64]) -> Iterator[InfoSet]:
    """Every information set of ``tree`` (decision node × private hand that the
    board leaves possible) with its row of ``strategy`` (``float64[D, A, H]``);
    a three-player tree's actions are every legal one."""
    hands = [tuple(int(c) for c in hand) for hand in tree.hands]
    hole_text = [cards_to_text(sorted(hand, reverse=True)) for hand in hands]
    for row, node in enumerate(tree.decision_nodes):
        if isinstance(tree, MultiTree):
            board, actions = tree.boards[node], tree.states[node].legal_actions()
        else:
            board, actions = tree.boards[tree.board_index[node]], tree.actions(int(node))
        names = [str(action) for action in actions]
        betting = tree.states[node].betting_string()
        for h, hand in enumerate(hands):
            if set(hand) & set(board):
                continue
            probabilities = strategy[row, : len(names), h]
            yield InfoSet(
                position=int(tree.player[node]),
                hole=hole_text[h],
                board=cards_to_text(board),
                betting=betting,
                actions={name: round(float(p), 6) for name, p in zip(names, probabilities)},
            )


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
        tree: Tree | MultiTree
        if saved.layout == THREE_PLAYER:
            tree, strategy = saved.build_multi_tree(), saved.strategy
        else:
            tree = saved.build_tree()
            strategy = tree_strategy(saved, tree)
    except (OSError, StrategyFileError) as error:
        print(f"arena show: {error}", file=sys.stderr)
        return 1
    except TreeError as error:
        print(f"arena show: {args.file}: the game's public tree is too big to show ({error})", file=sys.stderr)
        return 1
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
        return 0
    print(_ROW.format("pos", "hole", "board", "betting", "actions"))
    for info in rows:
        print(info.as_row())
    return 0
