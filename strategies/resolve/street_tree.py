"""The current street's betting below a real state: the lookahead of depth-limited
re-solving (:mod:`strategies.resolve.depth_limited` builds and solves it).

A module of its own because both the resolution that holds a lookahead
(:class:`strategies.resolve.resolver.Resolution`, whose tree is a public
:class:`strategies.cfr.tree.public.Tree` or this) and the street solver that
builds it name the type; in either of their modules one would import the other back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from poker.state import Action, State
from strategies.cfr.tree.public import NodeKind
from strategies.resolve.evaluators import HandTable

__all__ = ["StreetTree"]


@dataclass(frozen=True, eq=False)
class StreetTree:
    """The current street's betting below a real state (module docstring).
    Nodes are numbered breadth first (a parent before its children)."""

    game: Game
    board: tuple[int, ...]
    states: tuple[State, ...]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    action_child: npt.NDArray[np.int32]
    num_children: npt.NDArray[np.int32]
    decision_index: npt.NDArray[np.int32]
    spent: npt.NDArray[np.int64]
    table: HandTable
    continuation: npt.NDArray[np.int8]

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @property
    def num_hands(self) -> int:
        return self.table.num_hands

    @property
    def board_index(self) -> npt.NDArray[np.int32]:
        """Every node is on the root's board (row 0 of :attr:`board_mask`)."""
        return np.zeros(self.num_nodes, dtype=np.int32)

    @property
    def board_mask(self) -> npt.NDArray[np.float64]:
        return self.table.board_mask(self.board)[None, :]

    @property
    def num_decisions(self) -> int:
        return int(np.count_nonzero(self.kind == NodeKind.DECISION))

    @property
    def max_actions(self) -> int:
        return int(self.num_children.max()) if self.num_nodes else 0

    def children(self, node: int) -> list[int]:
        return [int(c) for c in self.action_child[node, : self.num_children[node]]]

    def is_pick(self, node: int) -> bool:
        """Whether ``node`` is a depth limit's decision among continuations (the
        street is over there: the next event is the deal)."""
        return bool(self.kind[node] == NodeKind.DECISION and self.states[node].round > self.states[0].round)

    def actions(self, node: int) -> tuple[Action, ...]:
        return tuple(self.states[c].actions[self.states[node].round][-1] for c in self.children(node))
