"""A strategy file as a list of information sets: the acting position, its hole
cards, the board, the betting (ACPC notation, ``/`` between rounds) and the
probability of each action, one :class:`InfoSet` per decision and private hand.

Two readers want two listings. A person reading the table wants it compact: a
file solved with suit isomorphism keeps one board per suit class, and those
boards are enough to see what the strategy does. A tool that reads the listing
(to measure the strategy with another library, say) needs every information set
of the game and every probability exactly as stored: :func:`file_information_sets`
with ``every_board=True`` copies the stored rows onto the boards of the other
suits (through :class:`~strategies.cfr.tree.public.DecisionRows`, the same
mapping an agent playing the file uses), and no probability is rounded here;
rounding is the text view's business.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.cards import cards_to_text
from strategies.cfr.solvers.pcs import tree_strategy
from strategies.cfr.strategy_file import THREE_PLAYER, StrategyFile
from strategies.cfr.tree.multi import MultiTree
from strategies.cfr.tree.public import DecisionRows, Tree, build_tree

__all__ = ["HEADER", "InfoSet", "file_information_sets", "information_sets", "strategy_on_tree"]

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
        """The text view's row: probabilities rounded to 3 decimals."""
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
                actions={name: float(p) for name, p in zip(names, probabilities)},
            )


def strategy_on_tree(saved: StrategyFile, *, every_board: bool) -> tuple[Tree | MultiTree, npt.NDArray[np.float64]]:
    """The tree of ``saved`` and its strategy ``float64[D, A, H]`` on it (a bucket
    table expanded to the public tree); with ``every_board``, a suit-isomorphic
    file's strategy copied onto the tree of every board.

    Raises:
        StrategyFileError: a bucket table that does not fit its card abstraction.
        TreeError: the game's public tree is too big to build.
    """
    if saved.layout == THREE_PLAYER:
        return saved.build_multi_tree(), saved.strategy
    tree = saved.build_tree()
    strategy = tree_strategy(saved, tree)
    if not (every_board and saved.isomorphism):
        return tree, strategy
    full = build_tree(saved.game, saved.abstraction, isomorphism=False)
    return full, DecisionRows.of(tree, isomorphism=True).expand(strategy, full)


def file_information_sets(saved: StrategyFile, *, every_board: bool) -> Iterator[InfoSet]:
    """The information sets of ``saved`` (:func:`information_sets` of
    :func:`strategy_on_tree`): with ``every_board`` all of the game's, else one
    board per suit class where the file keeps only those.

    Raises:
        StrategyFileError: a bucket table that does not fit its card abstraction.
        TreeError: the game's public tree is too big to build.
    """
    return information_sets(*strategy_on_tree(saved, every_board=every_board))
