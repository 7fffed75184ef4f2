"""A lookahead cut at the end of the current street, and CFR+ with the gadget on it.

DeepStack (Burch 2017 thesis ch6; Moravčík et al. 2017) never looks past the end of
the street it is on: its lookahead stops at the chance node that deals the next
board cards and asks an evaluator (:mod:`strategies.resolve.evaluators`) for
both players' counterfactual values there, given the two ranges that reach it
and the pot. Those values depend on the ranges, which change every iteration,
so the leaves cannot be payoff tables of the engine's kernels; this module
walks the (small) street tree itself, over private hands: per iteration and
position a kernel pass over the decisions for the reach and one for the regrets
(:func:`_kernels.street_reach`, :func:`_kernels.street_regrets`), one batched
call per terminal kind (folds: the per-card kernel; showdowns: the run-out
kernel) and one batched evaluator call for all depth-limit leaves.

:class:`strategies.resolve.street_tree.StreetTree` is the betting of the current street from the real state
(fold, call, the depth's pot fractions, all-in; every legal action in a limit
game), with four node kinds: decision, *chance* (the street ended with betting
still to come: the depth limit), fold, and showdown (on the last street, or an
all-in call before it, valued over the board's run-outs). With continuation
strategies (Modicum, :mod:`strategies.resolve.continuations`) each depth limit
is instead a decision of one player among K picks, each pick a leaf. It offers the part of
:class:`strategies.cfr.tree.public.Tree`'s interface the agent reads (actions,
children, kinds), so :class:`strategies.resolve.resolver.Resolution` and the
continual re-solving agent treat both lookaheads alike.

:func:`solve_street` is :func:`strategies.resolve.resolver.resolve_tree` for this
tree: CFR+ (regret-matching+, alternating updates, linear averaging) with the
re-solving gadget at the root when constraints are given, or with ``discount``
discounted CFR (Brown & Sandholm, "Solving Imperfect-Information Games via
Discounted Regret Minimization", AAAI 2019): after each update a position's
positive regrets are multiplied by ``t^a / (t^a + 1)`` and its negative ones by
``t^b / (t^b + 1)`` (kept, not clipped: an action that was bad early recovers
quickly once it is good), and iteration t weighs ``t^g`` in the average.
:data:`DISCOUNTED_CFR` is the paper's (a, b, g) = (1.5, 0, 2). On HUNL's flop and
turn re-solves with continuation leaves it is far faster than CFR+: after 50
iterations the lookahead's exploitability (both best responses at the root, per
unit of pot) was 2-16 % of the pot against CFR+'s 4-34 %, after 100 mostly
0.5-4 % against 1-23 % (nine re-solves of ``hunl-modicum``'s hands).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from poker.state import State
from strategies.cfr.tree.public import MAX_ENTRIES, BettingAbstraction, NodeKind, TreeError, tree_actions
from strategies.resolve import _kernels
from strategies.resolve.evaluators import Evaluator, HandTable, LeafEvaluator, fold_reach, runouts_for
from strategies.resolve.resolver import Resolution, ResolveError, check_inputs
from strategies.resolve.street_tree import StreetTree

__all__ = ["DISCOUNTED_CFR", "DepthLimitedResolution", "build_street_tree", "solve_street"]

#: Discounted CFR's (a, b, g): positive regrets times t^a / (t^a + 1), negative times t^b / (t^b + 1), averages by t^g.
DISCOUNTED_CFR: tuple[float, float, float] = (1.5, 0.0, 2.0)


def build_street_tree(
    game: Game,
    state: State,
    board: Sequence[int],
    abstraction: BettingAbstraction | None,
    table: HandTable,
    *,
    continuations: int = 0,
    chooser: int = 0,
    max_entries: int = MAX_ENTRIES,
) -> StreetTree:
    """The street tree below ``state`` (a decision) with ``board`` dealt. With
    ``continuations`` K > 0 every depth limit is a decision of ``chooser``
    among K continuation strategies (Modicum: :mod:`strategies.resolve.continuations`),
    each child a leaf (same state) whose :attr:`StreetTree.continuation` is its
    index; the chooser's picks are part of the solve, per private hand.

    Raises:
        TreeError: more than ``max_entries`` nodes x private hands (as
            :func:`strategies.cfr.tree.public.build_tree`: each solver array of
            that shape takes 8 bytes an entry), found out before building further.
    """
    board = tuple(board)
    states: list[State] = [state]
    picks: list[int] = [-1]
    kinds: list[int] = []
    children: list[list[int]] = []
    i = 0
    while i < len(states):
        if len(states) * table.num_hands > max_entries:
            raise TreeError(
                f"the street's lookahead holds more than {len(states)} nodes x {table.num_hands} hands, over the"
                f" limit of {max_entries:,}; ask for fewer raise sizes"
            )
        s = states[i]
        limit = s.round > state.round and not s.finished
        if s.finished:
            kind = NodeKind.SHOWDOWN if s.is_showdown() else NodeKind.FOLD
        elif limit and (picks[i] >= 0 or not continuations):
            kind = NodeKind.CHANCE
        else:
            kind = NodeKind.DECISION
        kinds.append(kind)
        below: list[int] = []
        if kind == NodeKind.DECISION:
            following = [(s, k) for k in range(continuations)] if limit else [(s.apply(a), -1) for a in tree_actions(s, abstraction)]
            for child, pick in following:
                below.append(len(states))
                states.append(child)
                picks.append(pick)
        children.append(below)
        i += 1
    if kinds[0] != NodeKind.DECISION:
        raise ResolveError("the lookahead's root is not a decision")
    n_nodes = len(states)
    width = max(len(c) for c in children)
    action_child = np.full((n_nodes, width), -1, dtype=np.int32)
    for node, below in enumerate(children):
        action_child[node, : len(below)] = below
    kind_array = np.array(kinds, dtype=np.int8)
    decision_index = np.full(n_nodes, -1, dtype=np.int32)
    decisions = np.flatnonzero(kind_array == NodeKind.DECISION)
    decision_index[decisions] = np.arange(len(decisions), dtype=np.int32)
    player = np.full(n_nodes, -1, dtype=np.int8)
    for node, s in enumerate(states):
        if kinds[node] == NodeKind.DECISION:
            player[node] = chooser if s.round > state.round else s.current_player()
        elif kinds[node] == NodeKind.FOLD:
            player[node] = s.folded.index(True)
    return StreetTree(
        game=game,
        board=board,
        states=tuple(states),
        kind=kind_array,
        player=player,
        action_child=action_child,
        num_children=np.array([len(c) for c in children], dtype=np.int32),
        decision_index=decision_index,
        spent=np.array([s.spent for s in states], dtype=np.int64).reshape(n_nodes, 2),
        table=table,
        continuation=np.array(picks, dtype=np.int8),
    )


@dataclass(frozen=True, eq=False)
class DepthLimitedResolution(Resolution):
    """A :class:`Resolution` on a :class:`StreetTree`.

    Its ``br_values`` (what continual re-solving carries) are DeepStack's: each
    position's counterfactual values under the *current* strategies, averaged
    over the iterations (weighted as the average strategy), not the best
    response to the average strategy. Through evaluator leaves a best response
    is only as good as the evaluator's values for the average strategy's
    ranges, and where a range all but vanishes at a leaf (a branch the average
    strategy never takes, which the best responder walks anyway) those values
    say nothing; the iterations' values were each asked at ranges that CFR was
    actually playing. ``best_response`` still holds the best-response values
    (exact where no leaf is an evaluator's: on the last street), ``reach`` both
    positions' reach ``[2, N, H]`` under the average strategy, and ``deals`` /
    ``deal_values`` the evaluator's iteration-averaged values per deal of the
    next street at each leaf (``leaves``), ``[2, B, L, H]``."""

    evaluator: LeafEvaluator | None = None
    reach: npt.NDArray[np.float64] | None = None
    deals: tuple[tuple[int, ...], ...] = ()
    deal_values: npt.NDArray[np.float64] | None = None
    leaves: npt.NDArray[np.int64] | None = None
    best_response: npt.NDArray[np.float64] | None = None

    def values_after_chance(
        self, node: int, board: tuple[int, ...]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]:
        """The evaluator's values for the deal that came, asked with the
        average strategy's reach at the leaf (DeepStack-Leduc's
        ``get_chance_action_cfv``). At a depth limit where the opponent picks a
        continuation (``node`` is that decision) they are its values on the
        deal under each continuation, mixed by its average picks
        (:meth:`strategies.resolve.continuations.ContinuationEvaluator.deal_values`)."""
        from strategies.resolve.continuations import ContinuationEvaluator

        tree = self.tree
        if self.reach is None or not isinstance(tree, StreetTree):
            raise ResolveError("a depth-limited resolution without its evaluator")
        mask = tree.table.board_mask(board)
        if tree.is_pick(node):
            if not isinstance(self.evaluator, ContinuationEvaluator) or self.evaluator.chooser != self.opponent:
                raise ResolveError("a continuation pick of the opponent's without the evaluator that values it")
            d, k = int(tree.decision_index[node]), int(tree.num_children[node])
            picks = self.strategy[d, :k]
            values = self.evaluator.deal_values(tree.states[node], board, self.reach[self.position, node] * mask, picks)
            return mask, values, -1
        if not isinstance(self.evaluator, Evaluator):
            raise ResolveError("a depth-limited resolution without its evaluator")
        if self.deal_values is not None and self.leaves is not None and board in self.deals:
            leaf = int(np.flatnonzero(self.leaves == node)[0])
            averaged: npt.NDArray[np.float64] = self.deal_values[self.opponent, self.deals.index(board), leaf]
            return mask, averaged, -1
        pot = float(tree.spent[node, 0])
        values = self.evaluator.board_values(board, pot, self.reach[:, node] * mask[None, :], tree.states[node])
        opponent_values: npt.NDArray[np.float64] = values[self.opponent]
        return mask, opponent_values, -1


class _StreetSolver:
    """CFR+ (or discounted CFR) state on a street tree (module docstring)."""

    def __init__(
        self, tree: StreetTree, evaluator: LeafEvaluator | None, ranges: npt.NDArray[np.float64], max_boards: int, seed: int,
        discount: tuple[float, float, float] | None = None,
    ) -> None:  # fmt: skip
        self.tree = tree
        #: Discounted CFR's (a, b, g), or None: CFR+ (module docstring).
        self.discount = discount
        self.evaluator = evaluator
        self.root_reach = ranges.copy()
        n_hands = tree.num_hands
        kind = tree.kind
        self.decisions = [
            (int(node), int(tree.decision_index[node]), int(tree.player[node]), tree.action_child[node, : tree.num_children[node]].astype(np.int64))
            for node in np.flatnonzero(kind == NodeKind.DECISION)
        ]
        # The decisions as the kernels read them (:func:`_kernels.street_reach`).
        self._walk = (
            np.array([node for node, _, _, _ in self.decisions], dtype=np.int64),
            np.array([d for _, d, _, _ in self.decisions], dtype=np.int64),
            np.array([player for _, _, player, _ in self.decisions], dtype=np.int64),
            np.cumsum([0] + [len(children) for _, _, _, children in self.decisions]).astype(np.int64),
            np.concatenate([children for _, _, _, children in self.decisions] or [np.zeros(0, dtype=np.int64)]),
        )
        self.folds = np.flatnonzero(kind == NodeKind.FOLD)
        folder = tree.player[self.folds].astype(np.int64)
        lost = tree.spent[self.folds, folder].astype(np.float64)
        self.fold_payoff = np.stack([np.where(folder == p, -lost, lost) for p in range(2)])  # [2, F]
        self.showdowns = np.flatnonzero(kind == NodeKind.SHOWDOWN)
        self.stakes = tree.spent[self.showdowns].min(axis=1).astype(np.float64)
        self.runouts = runouts_for(tree.table, tree.board, max_boards=max_boards, seed=seed) if len(self.showdowns) else None
        self.leaves = np.flatnonzero(kind == NodeKind.CHANCE)
        self.leaf_states = [tree.states[int(leaf)] for leaf in self.leaves]
        if len(self.leaves) and evaluator is None:
            raise ResolveError("a lookahead cut at the street's end needs an evaluator")
        shape = (tree.num_decisions, tree.max_actions, n_hands)
        self.regret = np.zeros(shape)
        self.cumulative = np.zeros(shape)
        self.sigma = np.zeros(shape)
        for _, d, _, children in self.decisions:
            self.sigma[d, : len(children)] = 1.0 / len(children)
        self.iteration = 0
        # Iteration-averaged (the average strategy's weights) values of each position at every
        # node under the current strategies, and per deal at the leaves.
        self.value_sum = np.zeros((2, tree.num_nodes, n_hands))
        self.deals: list[tuple[int, ...]] = []
        self.deal_sum: npt.NDArray[np.float64] | None = None
        self.weight_sum = 0.0

    def reach(self, sigma: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Both positions' reach ``[2, N, H]`` under ``sigma`` from the root reach."""
        reach = np.empty((2, self.tree.num_nodes, self.tree.num_hands))
        _kernels.street_reach(self.root_reach, *self._walk, sigma, reach)
        return reach

    def terminal_values(
        self, reach: npt.NDArray[np.float64], positions: tuple[int, ...], weight: float = 0.0
    ) -> npt.NDArray[np.float64]:
        """Values ``[2, N, H]`` at the terminals and depth-limit leaves (0
        elsewhere) for ``positions``; with ``weight`` > 0 the evaluator's
        per-deal values of ``positions`` are added to their running sums."""
        values = np.zeros((2, self.tree.num_nodes, self.tree.num_hands))
        for p in positions:
            if len(self.folds):
                values[p, self.folds] = self.fold_payoff[p][:, None] * fold_reach(self.tree.table, reach[1 - p, self.folds])
            if self.runouts is not None:
                values[p, self.showdowns] = self.runouts.values(reach[1 - p, self.showdowns], self.stakes)
        if len(self.leaves):
            assert self.evaluator is not None
            leaf, deals, deal_values = self.evaluator.street_values(
                self.tree.board, self.leaf_states, self.tree.continuation[self.leaves], reach[:, self.leaves], positions
            )
            for p in positions:
                values[p, self.leaves] = leaf[p]
            if deal_values is not None and weight > 0:
                self.deals = deals
                if self.deal_sum is None:
                    self.deal_sum = np.zeros_like(deal_values)
                for p in positions:
                    self.deal_sum[p] += weight * deal_values[p]
        return values

    def iterate(self, opponent: int, gadget: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]] | None) -> None:
        """One CFR+ iteration: a pass per position (alternating updates), each
        updating that position's regrets and average, and after the opponent's
        pass the gadget's follow probabilities."""
        self.iteration += 1
        t = float(self.iteration)
        kept = (1.0, 1.0)
        if self.discount is None:
            weight = t
        else:
            alpha, beta, gamma = self.discount
            weight = t**gamma
            kept = (t**alpha / (t**alpha + 1.0), t**beta / (t**beta + 1.0))
        self.weight_sum += weight
        for p in range(2):
            reach = self.reach(self.sigma)
            values = self.terminal_values(reach, (p,), weight)[p]
            _kernels.street_regrets(
                values, reach, self.sigma, self.regret, self.cumulative, *self._walk, p, weight, self.discount is not None, *kept
            )
            self.value_sum[p] += weight * values
            if gadget is not None and p == opponent:
                constraint, mask, gadget_regret = gadget
                follow = self.root_reach[opponent]
                mixed = follow * values[0] + (1.0 - follow) * constraint
                gadget_regret[0] = np.maximum(gadget_regret[0] + values[0] - mixed, 0.0)
                gadget_regret[1] = np.maximum(gadget_regret[1] + constraint - mixed, 0.0)
                total = gadget_regret.sum(axis=0)
                follow = np.where(total > 0, gadget_regret[0] / np.where(total > 0, total, 1.0), 0.5)
                self.root_reach[opponent] = follow * mask

    def average_strategy(self) -> npt.NDArray[np.float64]:
        average = np.zeros_like(self.cumulative)
        for _, d, _, children in self.decisions:
            n = len(children)
            total = self.cumulative[d, :n].sum(axis=0)
            average[d, :n] = np.where(total > 0, self.cumulative[d, :n] / np.where(total > 0, total, 1.0), 1.0 / n)
        return average

    def best_response_values(self, strategy: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each position's best-response values ``[2, N, H]`` against the other's
        part of ``strategy`` (leaf values asked with both positions' reach under
        ``strategy``), and that reach."""
        reach = self.reach(strategy)
        values = self.terminal_values(reach, (0, 1))
        for node, _, player, children in reversed(self.decisions):
            for q in range(2):
                child = values[q, children]
                values[q, node] = child.max(axis=0) if player == q else child.sum(axis=0)
        return values, reach


def solve_street(
    tree: StreetTree,
    evaluator: LeafEvaluator | None,
    position: int,
    our_range: npt.NDArray[np.float64],
    *,
    constraint: npt.NDArray[np.float64] | None = None,
    opponent_range: npt.NDArray[np.float64] | None = None,
    iterations: int = 1000,
    seconds: float = 0.0,
    max_seconds: float = 0.0,
    max_boards: int = 64,
    seed: int = 0,
    discount: tuple[float, float, float] | None = None,
) -> DepthLimitedResolution:
    """:func:`strategies.resolve.resolver.resolve_tree` on a street tree whose
    depth-limit leaves ``evaluator`` values (``max_boards`` and ``seed`` set the
    run-outs of all-in showdowns before the last street); CFR+, or discounted
    CFR with ``discount``'s (a, b, g) (module docstring). ``max_seconds`` > 0
    caps ``iterations``: they stop once that much time has passed since the
    call (at least one), so a slow machine keeps a dealer's clock; where the
    cap is not reached the result is the one without it."""
    start = time.perf_counter()
    ranges, constraint_vector = check_inputs(tree.num_hands, position, our_range, constraint, opponent_range, iterations, seconds)
    opponent = 1 - position
    mask = tree.board_mask[0]
    ranges *= mask[None, :]  # hands that clash with the board are not held
    gadget = None
    if constraint_vector is not None:
        ranges[opponent] = 0.5 * mask
        gadget = (constraint_vector, mask, np.zeros((2, tree.num_hands)))
    solver = _StreetSolver(tree, evaluator, ranges, max_boards, seed, discount)
    # A time budget runs until its deadline; otherwise ``iterations``, stopped at
    # the cap if there is one. The clock is read every iteration: one costs far more.
    budget = itertools.count() if seconds > 0 else range(iterations)
    deadline = time.perf_counter() + seconds if seconds > 0 else start + max_seconds if max_seconds > 0 else math.inf
    for _ in budget:
        solver.iterate(opponent, gadget)
        if time.perf_counter() >= deadline:
            break
    strategy = solver.average_strategy()
    best_response, reach = solver.best_response_values(strategy)
    total = max(solver.weight_sum, 1e-300)
    return DepthLimitedResolution(
        tree=tree,
        position=position,
        strategy=strategy,
        ranges=solver.root_reach.copy(),
        constraint=constraint_vector,
        br_values=solver.value_sum / total,
        iterations=solver.iteration,
        seconds=time.perf_counter() - start,
        evaluator=evaluator,
        reach=reach,
        deals=tuple(solver.deals),
        deal_values=None if solver.deal_sum is None else solver.deal_sum / total,
        leaves=solver.leaves,
        best_response=best_response,
    )
