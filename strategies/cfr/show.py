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
those are the boards shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.cards import cards_to_text
from strategies.cfr.solvers.pcs import tree_strategy
from strategies.cfr.solvers.multiplayer import MultiTree
from strategies.cfr.strategy_file import THREE_PLAYER, StrategyFile
from strategies.cfr.tree.public import Tree

__all__ = ["InfoSet", "information_sets", "strategy_on_tree", "HEADER"]

_ROW = "{:<3}  {:<4}  {:<10}  {:<16}  {}"
#: The line above :meth:`InfoSet.as_row`'s rows.
HEADER = _ROW.format("pos", "hole", "board", "betting", "actions")


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


def strategy_on_tree(saved: StrategyFile) -> tuple[Tree | MultiTree, npt.NDArray[np.float64]]:
    """The public tree of ``saved``'s game and its strategy there (a bucket
    table expanded), as :func:`information_sets` takes them.

    Raises:
        TreeError: the game's public tree is too big to build.
        StrategyFileError: a bucket table that does not fit its card abstraction.
    """
    if saved.layout == THREE_PLAYER:
        return saved.build_multi_tree(), saved.strategy
    tree = saved.build_tree()
    return tree, tree_strategy(saved, tree)
