"""The betting-only public tree of a two-player game: the public tree of
:mod:`strategies.cfr.tree.public` without its chance nodes, for solvers that sample the
board or deal it themselves (public chance sampling, :mod:`strategies.cfr.solvers.pcs`;
the explicit abstract game, :mod:`strategies.cfr.solvers.abstract_game`) and keep tables
indexed by (betting node, card bucket). Same rules source (``poker.state``), same
betting abstraction and node kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from poker.state import Action, State
from strategies.cfr.tree.public import (
    NO_LIMIT_DEFAULT,
    BettingAbstraction,
    NodeKind,
    TreeError,
    terminal_payoff,
    tree_actions,
)

__all__ = ["BettingTree", "build_betting_tree"]


@dataclass(frozen=True, eq=False)
class BettingTree:
    """The betting-only public tree of a two-player game: the tree of
    :func:`build_tree` with the chance nodes left out, for solvers that sample
    the board (public chance sampling, :mod:`strategies.cfr.solvers.pcs`) and tables
    indexed by (betting node, card bucket). Nodes are numbered breadth-first (a
    parent precedes its children); child ``a`` of node ``n`` is ``first_child[n]
    + a``. Kinds are :class:`NodeKind` ``DECISION``, ``FOLD`` or ``SHOWDOWN``
    (a hand that ends all-in before the last round is a showdown: the sampled
    board is complete). Arrays as in :class:`Tree`: ``kind``, ``player``,
    ``round``, ``parent``, ``first_child``, ``num_children``, ``decision_index``
    (-1 off decisions) and ``spent``."""

    game: Game
    abstraction: BettingAbstraction | None
    states: tuple[State, ...]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    round: npt.NDArray[np.int8]
    parent: npt.NDArray[np.int32]
    first_child: npt.NDArray[np.int32]
    num_children: npt.NDArray[np.int32]
    decision_index: npt.NDArray[np.int32]
    spent: npt.NDArray[np.int64]

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @cached_property
    def decision_nodes(self) -> npt.NDArray[np.int32]:
        """Node id of each decision row, ``int32[D]``."""
        return np.flatnonzero(self.kind == NodeKind.DECISION).astype(np.int32)

    @property
    def num_decisions(self) -> int:
        return len(self.decision_nodes)

    @property
    def max_actions(self) -> int:
        return int(self.num_children.max()) if self.num_decisions else 0

    def key(self, node: int) -> str:
        """The betting string of ``node`` (unique per node)."""
        return self.states[node].betting_string()

    @cached_property
    def node_of_key(self) -> dict[str, int]:
        """Node id by betting string."""
        return {self.key(n): n for n in range(self.num_nodes)}

    def actions(self, node: int) -> tuple[Action, ...]:
        """The actions of a decision node, in child order."""
        first = int(self.first_child[node])
        return tuple(
            self.states[first + a].actions[self.states[node].round][-1] for a in range(int(self.num_children[node]))
        )

    @cached_property
    def payoff(self) -> npt.NDArray[np.float64]:
        """Zero-sum terminal payoffs ``float64[N, 2, 3]`` as :func:`zero_sum_payoff`."""
        return terminal_payoff(self.kind, self.player, self.spent)


def build_betting_tree(game: Game, abstraction: BettingAbstraction | None = None) -> BettingTree:
    """The betting-only tree of ``game`` from the start of a hand (limit games
    exactly, no-limit games through ``abstraction``, default
    :data:`NO_LIMIT_DEFAULT`).

    Raises:
        TreeError: not a two-player game, or an abstraction on a limit game.
    """
    if game.num_players != 2:
        raise TreeError(f"the public-tree solver handles 2 players; the game has {game.num_players}")
    if game.is_limit and abstraction is not None:
        raise TreeError("a limit game has no betting abstraction: every legal action is in the tree")
    if not game.is_limit and abstraction is None:
        abstraction = NO_LIMIT_DEFAULT
    states: list[State] = [State(game)]
    parent = [-1]
    kind: list[int] = []
    first_child: list[int] = []
    num_children: list[int] = []
    player: list[int] = []
    node = 0
    while node < len(states):
        state = states[node]
        if state.finished:
            showdown = state.is_showdown()
            kind.append(NodeKind.SHOWDOWN if showdown else NodeKind.FOLD)
            player.append(-1 if showdown else state.folded.index(True))
            first_child.append(0)
            num_children.append(0)
        else:
            actions = tree_actions(state, abstraction)
            kind.append(NodeKind.DECISION)
            player.append(state.current_player())
            first_child.append(len(states))
            num_children.append(len(actions))
            states.extend(state.apply(action) for action in actions)
            parent.extend([node] * len(actions))
        node += 1
    kinds = np.array(kind, dtype=np.int8)
    decision_index = np.full(len(kinds), -1, dtype=np.int32)
    decisions = np.flatnonzero(kinds == NodeKind.DECISION)
    decision_index[decisions] = np.arange(len(decisions), dtype=np.int32)
    return BettingTree(
        game=game,
        abstraction=abstraction,
        states=tuple(states),
        kind=kinds,
        player=np.array(player, dtype=np.int8),
        round=np.array([s.round for s in states], dtype=np.int8),
        parent=np.array(parent, dtype=np.int32),
        first_child=np.array(first_child, dtype=np.int32),
        num_children=np.array(num_children, dtype=np.int32),
        decision_index=decision_index,
        spent=np.array([s.spent for s in states], dtype=np.int64).reshape(len(states), 2),
    )
