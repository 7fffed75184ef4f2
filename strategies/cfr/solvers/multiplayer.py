"""CFR (vanilla or CFR+) and exact best responses for small three-player games
(3p Kuhn, 3p Leduc).

Reference: Abou Risk & Szafron (2010), 'Using Counterfactual Regret Minimization to
Create Competitive Multiplayer Poker Agents': CFR is run unchanged on a
three-player game (no convergence guarantee), and the result is checked with the
seven-step epsilon: (1) CFR profile sigma; (2) a best response BR_i to
sigma_{-i} for each position i; (3) the combined best-response profile; (4) the
positions' utilities when all play sigma; (5) each BR_i's utility against two
copies of sigma; (6) the gain per position; (7) epsilon = the average gain. The
paper finds the BRs by CFR; here they are exact public-tree best responses.

The same public-tree idea as the two-player solver, without its card-removal
tricks: a tree node is a betting state and board, every node carries vectors over
the private hands of each position, and a terminal's payoff to each position is a
dense table over the three positions' hands, ``float64[3, H, H, H]`` (0 where hands
clash with each other or the board), filled from :meth:`poker.state.State.values`
once per betting and weak ordering of the three hand ranks (the deals themselves
are numpy index arrays). That is O(H^3) memory and work per terminal: fine for
Kuhn (4 hands) and Leduc (8), not for hold'em. The tables are built on first use
(:attr:`MultiTree.payoff`), so a strategy file can be checked against its tree
and played without them.

CFR here: simultaneous updates (every position against the same profile, as in
the original CFR); vanilla (regret matching, uniform average: Abou Risk & Szafron's) or
CFR+ (regrets floored at zero, average weighted by iteration), which on 3p Leduc
reaches a seven-step epsilon of 0.0028 in 3,000 iterations where vanilla CFR is
at 0.0159 after 10,000 (no guarantee either way with three players). Values in
chips (antes) per hand. Shapes: strategies ``float64[D, A, H]`` as in
:mod:`strategies.cfr.solvers.solver`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numba import njit

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game
from poker.state import State
from strategies.cfr.tree.public import TreeError, tree_actions

__all__ = ["MultiTree", "build_multi_tree", "MultiCFR", "seven_step_epsilon", "EpsilonCheck"]

_DECISION, _CHANCE, _TERMINAL = 0, 1, 2
_PLAYERS = 3


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
        terminals = np.flatnonzero(self.kind == _TERMINAL)
        return _terminal_payoffs(self.states, self.boards, terminals, self.hands)

    @property
    def decision_nodes(self) -> npt.NDArray[np.int64]:
        nodes: npt.NDArray[np.int64] = np.flatnonzero(self.kind == _DECISION)
        return nodes

    def key(self, node: int) -> str:
        """The public state as text, as :meth:`strategies.cfr.tree.public.Tree.key`
        writes it: betting, then the board's card ids (each round ascending)."""
        board = ",".join(str(c) for c in self.boards[node])
        return self.states[node].betting_string() + (f"|{board}" if board else "")

    @property
    def num_decisions(self) -> int:
        return int(np.count_nonzero(self.kind == _DECISION))

    @property
    def max_actions(self) -> int:
        return int(self.num_children[self.kind == _DECISION].max())

    @property
    def decision_player(self) -> npt.NDArray[np.int8]:
        players: npt.NDArray[np.int8] = self.player[self.kind == _DECISION]
        return players

    @property
    def num_actions(self) -> npt.NDArray[np.int32]:
        counts: npt.NDArray[np.int32] = self.num_children[self.kind == _DECISION]
        return counts


def build_multi_tree(game: Game) -> MultiTree:
    """The public tree of a three-player game with small private-hand sets."""
    if game.num_players != _PLAYERS:
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
            kind.append(_CHANCE)
            player.append(-1)
            chance_weight.append(1.0 / math.comb(len(remaining) - _PLAYERS * game.num_hole_cards, dealt))
            children = [(state, board + combo) for combo in itertools.combinations(remaining, dealt)]
        elif state.finished:
            kind.append(_TERMINAL)
            player.append(-1)
            chance_weight.append(0.0)
            terminals.append(node)
        else:
            kind.append(_DECISION)
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
    decision_index[kinds == _DECISION] = np.arange(int(np.count_nonzero(kinds == _DECISION)), dtype=np.int32)
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
    table = np.zeros((len(terminals), _PLAYERS, n, n, n))
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


@njit(cache=True, nogil=True)
def _terminal_values(payoff, position, reach, out):  # type: ignore[no-untyped-def]
    """out[h] = sum over the other two positions' hands of their reaches times
    ``payoff[position]`` (indexed by position 0, 1, 2 hands)."""
    n = out.shape[0]
    out[:] = 0.0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                u = payoff[position, a, b, c]
                if u == 0.0:
                    continue
                if position == 0:
                    out[a] += u * reach[1, b] * reach[2, c]
                elif position == 1:
                    out[b] += u * reach[0, a] * reach[2, c]
                else:
                    out[c] += u * reach[0, a] * reach[1, b]


@njit(cache=True, nogil=True)
def _walk(  # type: ignore[no-untyped-def]
    kind,
    player,
    first_child,
    num_children,
    decision_index,
    terminal_index,
    chance_weight,
    board_mask,
    payoff,
    sigma,
    position,
    best,
    reach,
    values,
):
    """Reach top-down (``reach[3, N, H]``, root set by the caller), then
    ``position``'s counterfactual values bottom-up into ``values[N, H]``: its own
    decisions play ``sigma`` (``[D, A, H]``) or, if ``best``, the maximum."""
    n_nodes, n_hands = values.shape
    for node in range(n_nodes):
        for j in range(num_children[node]):
            c = first_child[node] + j
            for p in range(3):
                for h in range(n_hands):
                    r = reach[p, node, h]
                    if kind[node] == _CHANCE:
                        r *= board_mask[c, h]
                    elif kind[node] == _DECISION and player[node] == p:
                        r *= sigma[decision_index[node], j, h]
                    reach[p, c, h] = r
    for node in range(n_nodes - 1, -1, -1):
        k = kind[node]
        first = first_child[node]
        if k == _TERMINAL:
            _terminal_values(payoff[terminal_index[node]], position, reach[:, node, :], values[node])
        elif k == _CHANCE:
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += chance_weight[node] * board_mask[first + j, h] * values[first + j, h]
        elif player[node] != position:
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += values[first + j, h]
        elif best:
            for h in range(n_hands):
                top = values[first, h]
                for j in range(1, num_children[node]):
                    top = max(top, values[first + j, h])
                values[node, h] = top
        else:
            d = decision_index[node]
            values[node, :] = 0.0
            for j in range(num_children[node]):
                for h in range(n_hands):
                    values[node, h] += sigma[d, j, h] * values[first + j, h]


@njit(cache=True, nogil=True)
def _cfr_iterations(  # type: ignore[no-untyped-def]
    kind,
    player,
    first_child,
    num_children,
    decision_index,
    terminal_index,
    chance_weight,
    board_mask,
    payoff,
    num_actions,
    start,
    iterations,
    plus,
    regret,
    cumulative,
    sigma,
    reach,
    values,
):
    """CFR with simultaneous updates, in place, iterations ``start + 1 ..
    start + iterations``: vanilla (uniform average) or, if ``plus``, CFR+'s
    regrets floored at zero and an average weighted by the iteration number."""
    n_nodes, n_hands = values.shape
    n_decisions = regret.shape[0]
    updates = np.zeros((3,) + regret.shape)
    for step in range(iterations):
        weight = float(start + step + 1) if plus else 1.0
        # (1) regret matching
        for d in range(n_decisions):
            n = num_actions[d]
            for h in range(n_hands):
                total = 0.0
                for a in range(n):
                    total += max(regret[d, a, h], 0.0)
                for a in range(n):
                    sigma[d, a, h] = max(regret[d, a, h], 0.0) / total if total > 0.0 else 1.0 / n
        # (2)-(3) values per position against the same profile, regret deltas
        updates[:] = 0.0
        for position in range(3):
            reach[:, 0, :] = 1.0
            _walk(
                kind,
                player,
                first_child,
                num_children,
                decision_index,
                terminal_index,
                chance_weight,
                board_mask,
                payoff,
                sigma,
                position,
                False,
                reach,
                values,
            )
            for node in range(n_nodes):
                if kind[node] != _DECISION or player[node] != position:
                    continue
                d = decision_index[node]
                for a in range(num_children[node]):
                    for h in range(n_hands):
                        updates[position, d, a, h] = values[first_child[node] + a, h] - values[node, h]
                        cumulative[d, a, h] += weight * reach[position, node, h] * sigma[d, a, h]
        # (4) add the regrets
        for position in range(3):
            for d in range(n_decisions):
                for a in range(num_actions[d]):
                    for h in range(n_hands):
                        regret[d, a, h] += updates[position, d, a, h]
                        if plus and regret[d, a, h] < 0.0:
                            regret[d, a, h] = 0.0


class MultiCFR:
    """CFR state on a :class:`MultiTree`: vanilla CFR (Abou Risk & Szafron's), or with
    ``plus`` CFR+'s regret floor and linear average (no guarantee in three-player
    games either, but it reaches a smaller seven-step epsilon in the same
    iterations on 3p Kuhn and Leduc; measured in the tests)."""

    def __init__(self, tree: MultiTree, *, plus: bool = False) -> None:
        self.tree = tree
        self.plus = plus
        shape = (tree.num_decisions, tree.max_actions, len(tree.hands))
        self.regret = np.zeros(shape)
        self.cumulative = np.zeros(shape)
        self._sigma = np.zeros(shape)
        self._reach = np.zeros((_PLAYERS, len(tree.kind), len(tree.hands)))
        self._values = np.zeros((len(tree.kind), len(tree.hands)))
        self.iteration = 0

    def run(self, iterations: int) -> None:
        t = self.tree
        _cfr_iterations(
            t.kind,
            t.player,
            t.first_child,
            t.num_children,
            t.decision_index,
            t.terminal_index,
            t.chance_weight,
            t.board_mask,
            t.payoff,
            t.num_actions,
            self.iteration,
            iterations,
            self.plus,
            self.regret,
            self.cumulative,
            self._sigma,
            self._reach,
            self._values,
        )
        self.iteration += iterations

    def load_arrays(
        self, *, iteration: int, regret: npt.NDArray[np.float64], cumulative: npt.NDArray[np.float64]
    ) -> None:
        """Continue from a checkpoint's arrays (shapes checked when its file was read)."""
        self.regret[...] = regret
        self.cumulative[...] = cumulative
        self.iteration = iteration

    def average_strategy(self) -> npt.NDArray[np.float64]:
        """Normalised cumulative strategy, uniform where it is zero."""
        totals = self.cumulative.sum(axis=1, keepdims=True)
        uniform = np.zeros_like(self.cumulative)
        for d, n in enumerate(self.tree.num_actions):
            uniform[d, :n] = 1.0 / n
        average: npt.NDArray[np.float64] = np.where(
            totals > 0, self.cumulative / np.where(totals > 0, totals, 1.0), uniform
        )
        return average

    def root_value(self, strategy: npt.NDArray[np.float64], position: int, *, best: bool) -> float:
        """Chips per hand of ``position`` when all play ``strategy`` or, if ``best``,
        when it best-responds to the others' parts of it."""
        t = self.tree
        self._reach[:, 0, :] = 1.0
        _walk(
            t.kind,
            t.player,
            t.first_child,
            t.num_children,
            t.decision_index,
            t.terminal_index,
            t.chance_weight,
            t.board_mask,
            t.payoff,
            strategy,
            position,
            best,
            self._reach,
            self._values,
        )
        return float(self._values[0].sum()) / self.tree.num_deals


@dataclass(frozen=True)
class EpsilonCheck:
    """The seven-step check: per-position utilities of the profile, of each best
    response against it, and epsilon = the mean gain (chips per hand)."""

    profile_values: tuple[float, ...]
    best_response_values: tuple[float, ...]

    @property
    def gains(self) -> tuple[float, ...]:
        return tuple(b - v for b, v in zip(self.best_response_values, self.profile_values, strict=True))

    @property
    def epsilon(self) -> float:
        return sum(self.gains) / len(self.gains)


def seven_step_epsilon(solver: MultiCFR, strategy: npt.NDArray[np.float64] | None = None) -> EpsilonCheck:
    """Abou Risk & Szafron's seven-step epsilon of ``strategy`` (default the solver's average profile)."""
    profile = solver.average_strategy() if strategy is None else strategy
    return EpsilonCheck(
        tuple(solver.root_value(profile, p, best=False) for p in range(_PLAYERS)),
        tuple(solver.root_value(profile, p, best=True) for p in range(_PLAYERS)),
    )
