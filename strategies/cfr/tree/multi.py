"""The public tree of a small three-player game (3p Kuhn, 3p Leduc), with dense payoff tables.

The same public-tree idea as the two-player tree (:mod:`strategies.cfr.tree.public`),
without its card-removal tricks: a tree node is a betting state and board, every
node carries vectors over the private hands of each position, and a terminal's
payoff to each position is a dense table over the three positions' hands,
``float64[3, H, H, H]`` (0 where hands clash with each other or the board),
filled from :meth:`poker.state.State.values` once per betting and weak ordering
of the three hand ranks (the deals themselves are numpy index arrays). That is
O(H^3) memory and work per terminal: fine for Kuhn (4 hands) and Leduc (8), not
for hold'em. The tables are built on first use (:attr:`MultiTree.payoff`), so a
strategy file can be checked against its tree and played without them.

The solvers on it (CFR, CFR+ and exact best responses, the seven-step epsilon)
are in :mod:`strategies.cfr.solvers.multiplayer`; a strategy file
(:mod:`strategies.cfr.strategy_file`) is checked against the tree alone.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game
from poker.state import State
from strategies.cfr.tree.public import TreeError, tree_actions

__all__ = ["CHANCE", "DECISION", "PLAYERS", "TERMINAL", "MultiTree", "build_multi_tree"]

#: Node kinds of :attr:`MultiTree.kind`.
DECISION, CHANCE, TERMINAL = 0, 1, 2
#: The players of the games these trees are for.
PLAYERS = 3



@dataclass(frozen=True, eq=False)
class MultiTree:
    """A three-player public tree: nodes in breadth-first order (parents first),
    children ``first_child .. first_child + num_children - 1``."""

    game: Game
    hands: npt.NDArray[np.int8]
    states: tuple[State, ...]
    boards: tuple[tuple[int, ...], ...]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    first_child: npt.NDArray[np.int32]
    num_children: npt.NDArray[np.int32]
    decision_index: npt.NDArray[np.int32]
    terminal_index: npt.NDArray[np.int32]
    chance_weight: npt.NDArray[np.float64]
    board_mask: npt.NDArray[np.float64]  # [N, H]: the hand fits the node's board
    num_deals: int  # ordered deals of private hands

    @cached_property
    def payoff(self) -> npt.NDArray[np.float64]:
        """``float64[T, 3, H, H, H]``: each position's chips at each terminal for
        every deal (built on first use: loading a file checks the tree first)."""
        terminals = np.flatnonzero(self.kind == TERMINAL)
        return _terminal_payoffs(self.states, self.boards, terminals, self.hands)

    @property
    def decision_nodes(self) -> npt.NDArray[np.int64]:
        nodes: npt.NDArray[np.int64] = np.flatnonzero(self.kind == DECISION)
        return nodes

    def key(self, node: int) -> str:
        """The public state as text, as :meth:`strategies.cfr.tree.public.Tree.key`
        writes it: betting, then the board's card ids (each round ascending)."""
        board = ",".join(str(c) for c in self.boards[node])
        return self.states[node].betting_string() + (f"|{board}" if board else "")

    @property
    def num_decisions(self) -> int:
        return int(np.count_nonzero(self.kind == DECISION))

    @property
    def max_actions(self) -> int:
        return int(self.num_children[self.kind == DECISION].max())

    @property
    def decision_player(self) -> npt.NDArray[np.int8]:
        players: npt.NDArray[np.int8] = self.player[self.kind == DECISION]
        return players

    @property
    def num_actions(self) -> npt.NDArray[np.int32]:
        counts: npt.NDArray[np.int32] = self.num_children[self.kind == DECISION]
        return counts


def build_multi_tree(game: Game) -> MultiTree:
    """The public tree of a three-player game with small private-hand sets."""
    if game.num_players != PLAYERS:
        raise TreeError(f"this solver is for 3 players; the game has {game.num_players}")
    if not game.is_limit:
        raise TreeError("three-player trees are for limit games (no betting abstraction yet)")
    hands = private_hands(game)
    if len(hands) > 64:
        raise TreeError(f"dense three-player payoff tables need few private hands; the game has {len(hands)}")
    deck = sorted(game.deck())
    full_board = game.total_board_cards(game.num_rounds - 1)
    states: list[State] = [State(game)]
    boards: list[tuple[int, ...]] = [()]
    kind, player, first_child, num_children, chance_weight = [], [], [], [], []
    terminals: list[int] = []
    node = 0
    while node < len(states):
        state, board = states[node], boards[node]
        wanted = full_board if state.is_showdown() else game.total_board_cards(state.round)
        children: list[tuple[State, tuple[int, ...]]] = []
        if len(board) < wanted and not (state.finished and not state.is_showdown()):
            dealt = wanted - len(board)
            remaining = [c for c in deck if c not in board]
            kind.append(CHANCE)
            player.append(-1)
            chance_weight.append(1.0 / math.comb(len(remaining) - PLAYERS * game.num_hole_cards, dealt))
            children = [(state, board + combo) for combo in itertools.combinations(remaining, dealt)]
        elif state.finished:
            kind.append(TERMINAL)
            player.append(-1)
            chance_weight.append(0.0)
            terminals.append(node)
        else:
            kind.append(DECISION)
            player.append(state.current_player())
            chance_weight.append(0.0)
            children = [(state.apply(a), board) for a in tree_actions(state, None)]
        first_child.append(len(states) if children else 0)
        num_children.append(len(children))
        for child in children:
            states.append(child[0])
            boards.append(child[1])
        node += 1
    kinds = np.array(kind, dtype=np.int8)
    decision_index = np.full(len(kinds), -1, dtype=np.int32)
    decision_index[kinds == DECISION] = np.arange(int(np.count_nonzero(kinds == DECISION)), dtype=np.int32)
    terminal_index = np.full(len(kinds), -1, dtype=np.int32)
    terminal_index[terminals] = np.arange(len(terminals), dtype=np.int32)
    hand_sets = [set(int(c) for c in h) for h in hands]
    board_mask = np.array([[0.0 if hs & set(b) else 1.0 for hs in hand_sets] for b in boards])
    deals = sum(1 for a, b, c in itertools.product(hand_sets, repeat=3) if not (a & b or a & c or b & c))
    return MultiTree(
        game=game,
        hands=hands,
        states=tuple(states),
        boards=tuple(boards),
        kind=kinds,
        player=np.array(player, dtype=np.int8),
        first_child=np.array(first_child, dtype=np.int32),
        num_children=np.array(num_children, dtype=np.int32),
        decision_index=decision_index,
        terminal_index=terminal_index,
        chance_weight=np.array(chance_weight),
        board_mask=board_mask,
        num_deals=deals,
    )


def _terminal_payoffs(
    states: tuple[State, ...],
    boards: tuple[tuple[int, ...], ...],
    terminals: npt.NDArray[np.int64],
    hands: npt.NDArray[np.int8],
) -> npt.NDArray[np.float64]:
    """``[T, 3, H, H, H]`` chips per position for every deal of the three positions'
    hands at each terminal, 0 where hands clash with each other or the board.
    Showdowns ask ``state.values`` once per betting and weak ordering of the
    three ranks (the side-pot rules stay in poker.state); the deals are numpy
    index arrays, so the Python work is per terminal, not per deal."""
    n = len(hands)
    held = np.zeros((n, 64), dtype=bool)
    for row, hand in enumerate(hands):
        held[row, [int(c) for c in hand]] = True
    grid = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    first, second, third = (axis.ravel() for axis in grid)
    apart = np.logical_not((held[first] & held[second]) | (held[first] & held[third]) | (held[second] & held[third]))
    deal_ok = apart.all(axis=1)
    first, second, third = first[deal_ok], second[deal_ok], third[deal_ok]
    table = np.zeros((len(terminals), PLAYERS, n, n, n))
    fitting: dict[tuple[int, ...], npt.NDArray[np.bool_]] = {}
    ranked: dict[tuple[int, ...], npt.NDArray[np.int64]] = {}
    values: dict[tuple[str, tuple[int, ...]], npt.NDArray[np.float64]] = {}

    def chips(state: State, order: tuple[int, ...] | None) -> npt.NDArray[np.float64]:
        key = (state.betting_string(), order or ())
        if key not in values:
            values[key] = np.array([float(v) for v in state.values(order)])[:, None]
        return values[key]

    for t, node in enumerate(terminals):
        state, board = states[node], boards[node]
        if board not in fitting:
            fits: npt.NDArray[np.bool_] = np.logical_not(held[:, list(board)].any(axis=1))
            fitting[board] = fits[first] & fits[second] & fits[third]
            if len(board) == state.game.total_board_cards(state.game.num_rounds - 1):  # a showdown's board
                cards = np.concatenate([hands[fits], np.tile(np.array(board, dtype=np.int8), (int(fits.sum()), 1))], 1)
                ranks = np.full(n, -1, dtype=np.int64)
                ranks[fits] = rank_hands(cards)
                ranked[board] = ranks
        ok = fitting[board]
        a, b, c = first[ok], second[ok], third[ok]
        if not state.is_showdown():
            table[t][:, a, b, c] = chips(state, None)
            continue
        ranks = ranked[board]
        trio = np.stack([ranks[a], ranks[b], ranks[c]])  # [3, deals]
        # the weak ordering: each position's place among the distinct ranks (the
        # others below it, less one when those two are equal)
        below = (trio[None, :, :] < trio[:, None, :]).sum(axis=1)
        pairs = trio[[1, 0, 0]]
        pattern = below - ((pairs == trio[[2, 2, 1]]) & (pairs < trio))
        codes = pattern[0] * 9 + pattern[1] * 3 + pattern[2]
        for code in np.unique(codes):
            order = (int(code) // 9, int(code) // 3 % 3, int(code) % 3)
            hit = codes == code
            table[t][:, a[hit], b[hit], c[hit]] = chips(state, order)
    return table
