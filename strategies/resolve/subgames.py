"""Re-solving the subgames of a fixed strategy once, safely or not (Burch thesis
§5.4.1): the experiment behind "safe re-solving of an abstract
strategy lowers its exploitability, unsafe re-solving does not".

The trunk is everything above the subgame roots (in Leduc: the first round, so
30 subgames, one per board and non-folding first-round betting). For each
subgame root and each position ``p``:

* **safe**: our range is ``p``'s reach under the original strategy; the
  constraints are the opponent's counterfactual best-response values against
  the original strategy at the root; the gadget re-solve gives ``p``'s new
  subgame strategy (the opponent's half of that solve is discarded);
* **unsafe** (the subgame solving of Section 5.2.2): both ranges fixed at the
  original strategy's reach, solved once, both positions' strategies kept.

The new strategies replace the original's rows in the subgames; the trunk is
kept. Safe re-solving cannot make the strategy more exploitable (Theorem 18,
up to the re-solves' own error); unsafe re-solving has no such guarantee.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from strategies.cfr.tree.public import NodeKind, Tree
from strategies.resolve.lookahead import build_lookahead
from strategies.resolve.resolver import _best_response_values, resolve_tree

__all__ = ["reach_probabilities", "resolve_subgames", "subgame_roots"]


def reach_probabilities(tree: Tree, strategy: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each position's own reach ``float64[2, N, H]`` under ``strategy`` (its
    action probabilities and the card removal of the boards), from 1 per hand
    at the root. Nodes come parent first, so one pass in node order fills it."""
    reach = np.zeros((2, tree.num_nodes, tree.num_hands))
    reach[:, 0] = tree.board_mask[tree.board_index[0]]
    for node in range(1, tree.num_nodes):
        parent = int(tree.parent[node])
        reach[:, node] = reach[:, parent]
        if tree.kind[parent] == NodeKind.DECISION:
            actor = int(tree.player[parent])
            reach[actor, node] *= strategy[tree.decision_index[parent], tree.action_index[node]]
        else:
            reach[:, node] *= tree.board_mask[tree.board_index[node]]
    return reach


def subgame_roots(tree: Tree) -> list[int]:
    """The decision nodes right below the tree's first chance nodes that deal
    board cards (the start of the second round in Leduc)."""
    chance = [n for n in range(tree.num_nodes) if tree.kind[n] == NodeKind.CHANCE and tree.states[n].round == 1]
    return [c for n in chance for c in tree.children(n) if tree.kind[c] == NodeKind.DECISION]


def resolve_subgames(
    tree: Tree, strategy: npt.NDArray[np.float64], *, safe: bool, iterations: int
) -> npt.NDArray[np.float64]:
    """``strategy`` (``[D, A, H]`` on ``tree``, a full game tree) with every
    subgame re-solved (see the module docstring); a new array."""
    result = strategy.copy()
    reach = reach_probabilities(tree, strategy)
    br_values = _best_response_values(tree, strategy, np.ones((2, tree.num_hands)))
    row_of = {tree.key(int(n)): int(tree.decision_index[n]) for n in tree.decision_nodes}
    for root in subgame_roots(tree):
        state = tree.states[root]
        board = tree.boards[tree.board_index[root]]
        sub = build_lookahead(tree.game, state, board, ((1.0,),))
        rows = [row_of[sub.key(int(n))] for n in sub.decision_nodes]
        if safe:
            for position in range(2):
                if not reach[position, root].any():
                    continue
                solved = resolve_tree(
                    sub,
                    position,
                    reach[position, root],
                    constraint=br_values[1 - position, root],
                    iterations=iterations,
                )
                mine = sub.decision_player == position
                result[np.array(rows)[mine]] = solved.strategy[mine]
        else:
            actor = int(tree.player[root])
            solved = resolve_tree(
                sub, actor, reach[actor, root], opponent_range=reach[1 - actor, root], iterations=iterations
            )
            result[rows] = solved.strategy
    return result
