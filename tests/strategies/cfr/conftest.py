"""Pure-Python references for the public-tree kernels, written per history, as fixtures.

They walk the game tree of :mod:`poker.state` deal by deal, with no vectors, no
card-removal formulas and no sorting, so they share nothing with the kernels but
the rules: the tests compare the two on Kuhn and Leduc. (A conftest, because the
``tests`` directory on the import path cannot hold a second ``strategies``
package.)
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import numpy.typing as npt
import pytest

from poker.evaluate import rank_hand
from poker.state import State
from strategies.cfr.tree.public import Tree

Hand = tuple[int, ...]


def _children_boards(tree: Tree, state: State, board: Hand, used: set[int]) -> list[Hand] | None:
    """Boards a chance point can deal (avoiding ``used`` cards), or None if it is no chance point."""
    game = tree.game
    if state.finished and not state.is_showdown():
        return None
    wanted = game.total_board_cards(game.num_rounds - 1) if state.is_showdown() else game.total_board_cards(state.round)
    if len(board) >= wanted:
        return None
    remaining = [c for c in sorted(game.deck()) if c not in used and c not in board]
    return [board + combo for combo in itertools.combinations(remaining, wanted - len(board))]


def _utility(state: State, board: Hand, hands: tuple[Hand, Hand], position: int) -> float:
    ranks = [rank_hand(list(hands[p]) + list(board)) for p in range(2)] if state.is_showdown() else None
    return float(state.values(ranks)[position])


def _node_index(tree: Tree) -> dict[str, int]:
    return {tree.key(int(node)): int(node) for node in range(tree.num_nodes)}


def _key(state: State, board: Hand) -> str:
    text = ",".join(str(c) for c in board)
    return state.betting_string() + (f"|{text}" if text else "")


class ReferenceCFR:
    """Vanilla CFR or CFR+ over histories with tables keyed by (decision row, hand row)."""

    def __init__(self, tree: Tree, *, plus: bool, alternating: bool, linear: bool) -> None:
        self.tree = tree
        self.plus = plus
        self.alternating = alternating
        self.linear = linear
        self.rows = _node_index(tree)
        self.hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(tree.hands)}
        self.regret: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0] * 3)
        self.cumulative: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0] * 3)
        self.iteration = 0

    def strategy(self, d: int, h: int, n: int) -> list[float]:
        positive = [max(r, 0.0) for r in self.regret[(d, h)][:n]]
        total = sum(positive)
        return [p / total for p in positive] if total > 0 else [1.0 / n] * n

    def run(self, iterations: int) -> None:
        for _ in range(iterations):
            self.iteration += 1
            weight = float(self.iteration) if self.linear else 1.0
            if self.alternating:
                for position in range(2):
                    self._walk_deals([position], weight)
            else:
                self._walk_deals([0, 1], weight)

    def _walk_deals(self, positions: list[int], weight: float) -> None:
        hands = [tuple(int(c) for c in h) for h in self.tree.hands]
        deals = [(a, b) for a in hands for b in hands if not set(a) & set(b)]
        # Freeze the strategy of this walk, so simultaneous updates use one profile.
        frozen: dict[tuple[int, int], list[float]] = {}
        updates: list[tuple[dict[tuple[int, int], list[float]], tuple[int, int], int, float]] = []
        for hand0, hand1 in deals:
            for position in positions:
                self._cfr(
                    State(self.tree.game),
                    (),
                    (hand0, hand1),
                    [1.0, 1.0],
                    1.0 / len(deals),
                    position,
                    weight,
                    frozen,
                    updates,
                )
        for table, key, a, delta in updates:
            table[key][a] += delta
        if self.plus:
            for values in self.regret.values():
                values[:] = [max(v, 0.0) for v in values]

    def _cfr(self, state, board, hands, reach, chance, position, weight, frozen, updates) -> float:  # type: ignore[no-untyped-def]
        boards = _children_boards(self.tree, state, board, set(hands[0]) | set(hands[1]))
        if boards is not None:
            return sum(
                self._cfr(state, b, hands, reach, chance / len(boards), position, weight, frozen, updates)
                for b in boards
            ) / len(boards)
        if state.finished:
            return _utility(state, board, hands, position)
        node = self.rows[_key(state, board)]
        d = int(self.tree.decision_index[node])
        actor = state.current_player()
        h = self.hand_row[hands[actor]]
        actions = self.tree.actions(node)
        if (d, h) not in frozen:
            frozen[(d, h)] = self.strategy(d, h, len(actions))
        sigma = frozen[(d, h)]
        values = []
        for a, action in enumerate(actions):
            child_reach = list(reach)
            child_reach[actor] *= sigma[a]
            values.append(
                self._cfr(state.apply(action), board, hands, child_reach, chance, position, weight, frozen, updates)
            )
        value = sum(s * v for s, v in zip(sigma, values, strict=True))
        if actor == position:
            opponent = reach[1 - actor] * chance
            for a in range(len(actions)):
                updates.append((self.regret, (d, h), a, opponent * (values[a] - value)))
                updates.append((self.cumulative, (d, h), a, weight * reach[actor] * sigma[a]))
        return float(value)

    def arrays(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(current strategy, normalised average) as tree arrays; rows never
        visited (hands clashing with the board) are left uniform."""
        tree = self.tree
        current = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
        average = np.zeros_like(current)
        for d, n in enumerate(tree.num_actions):
            for h in range(tree.num_hands):
                current[d, :n, h] = self.strategy(d, h, int(n))
                total = sum(self.cumulative[(d, h)][:n])
                average[d, :n, h] = [c / total for c in self.cumulative[(d, h)][:n]] if total > 0 else [1.0 / n] * n
        return current, average


def reference_best_response(tree: Tree, strategy: npt.NDArray[np.float64], position: int) -> float:
    """Best-response value of ``position`` (chips per hand), one of its hands at a
    time, with the opponent's reach kept per opponent hand in a dict and every
    terminal summed over opponent hands (O(n^2), no card-removal formulas)."""
    rows = _node_index(tree)
    hands = [tuple(int(c) for c in h) for h in tree.hands]
    total = 0.0
    pairs = 0
    for own in hands:
        opponents = {o: 1.0 for o in hands if not set(o) & set(own)}
        pairs += len(opponents)
        total += _br(tree, rows, State(tree.game), (), own, opponents, position, strategy)
    return total / pairs


def _br(tree, rows, state, board, own, opponents, position, strategy) -> float:  # type: ignore[no-untyped-def]
    boards = _children_boards(tree, state, board, set(own))
    if boards is not None:
        value = 0.0
        for b in boards:
            if set(b) & set(own):
                continue
            child = {}
            for o, r in opponents.items():
                if set(o) & set(b):
                    continue
                # Probability of this board given both hands: one over the boards avoiding both.
                left = len(tree.game.deck()) - len(board) - len(own) - len(o)
                child[o] = r / math.comb(left, len(b) - len(board))
            value += _br(tree, rows, state, b, own, child, position, strategy)
        return value
    if state.finished:
        value = 0.0
        for o, r in opponents.items():
            pair = (own, o) if position == 0 else (o, own)
            value += r * _utility(state, board, pair, position)
        return value
    node = rows[_key(state, board)]
    d = int(tree.decision_index[node])
    actions = tree.actions(node)
    if state.current_player() == position:
        return max(_br(tree, rows, state.apply(a), board, own, opponents, position, strategy) for a in actions)
    hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(tree.hands)}
    value = 0.0
    for a, action in enumerate(actions):
        child = {o: r * strategy[d, a, hand_row[o]] for o, r in opponents.items()}
        value += _br(tree, rows, state.apply(action), board, own, child, position, strategy)
    return value


@pytest.fixture(scope="session")
def reference_cfr() -> type[ReferenceCFR]:
    """The per-history CFR / CFR+ class."""
    return ReferenceCFR


@pytest.fixture(scope="session")
def reference_br():  # type: ignore[no-untyped-def]
    """The per-history best-response function ``(tree, strategy, position) -> chips/hand``."""
    return reference_best_response


def _random_strategy(tree: Tree, seed: int) -> npt.NDArray[np.float64]:
    """A seeded random strategy ``[D, A, H]``, zero past each node's actions."""
    rng = np.random.default_rng(seed)
    strategy = rng.random((tree.num_decisions, tree.max_actions, tree.num_hands))
    for d, n in enumerate(tree.num_actions):
        strategy[d, n:] = 0.0
    normalised: npt.NDArray[np.float64] = strategy / strategy.sum(axis=1, keepdims=True)
    return normalised


@pytest.fixture(scope="session")
def random_strategy():  # type: ignore[no-untyped-def]
    """The seeded random strategy function ``(tree, seed) -> [D, A, H]``."""
    return _random_strategy
