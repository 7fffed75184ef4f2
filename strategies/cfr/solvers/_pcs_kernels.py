"""Numba kernel of public chance sampling (:mod:`strategies.cfr.solvers.pcs`).

One iteration walks the betting-only tree (:class:`strategies.cfr.tree.betting.BettingTree`)
depth first, once per position (alternating updates), on one sampled board.
Vectors run over the private hands that fit the board (the caller compacts
them: ``hand_cards``, ``buckets``, ``ranks`` and ``order`` are indexed by the
compact hand number ``0..n-1``). Terminals reuse the O(n) fold and sorted
showdown evaluation of :mod:`strategies.cfr.tree._kernels`.

Tables are indexed by bucket: ``regret`` and ``cumulative`` are
``float64[A, R]`` where decision row ``d`` owns the columns ``row_start[d] ..
row_start[d] + num_buckets[round of d] - 1``; hand ``h`` at a round-``r``
decision plays the column of its bucket ``buckets[r, h]``.

Scratch buffers, one slot per tree depth (``L`` = the tree's depth + 2), each
at least ``n`` hands wide (the first ``n`` entries are used, so one set of
buffers serves every board): ``reach float64[L, 2, H]``, ``values float64[L, H]``,
``child float64[L, A, H]`` and ``sigma float64[L, A, K]`` (``K`` the largest
bucket count).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from strategies.cfr import compile_notice
from strategies.cfr.tree._kernels import fold_values, showdown_values

compile_notice.install()  # one line on stderr when these kernels compile (a cold numba cache)

DECISION = 0
FOLD = 2
SHOWDOWN = 3


@njit(cache=True, nogil=True)
def pcs_iteration(
    tree,
    payoff,
    row_start,
    num_buckets,
    buckets,
    hand_cards,
    ranks,
    order,
    scale,
    regret,
    cumulative,
    weight,
    plus,
    reach,
    values,
    child,
    sigma,
    n_cards,
):
    """One alternating PCS iteration (position 0's walk, then position 1's, which
    sees position 0's new regrets) on the board the compact arrays describe.
    ``scale`` multiplies terminal payoffs (the importance weight of the sampled
    board); ``weight`` is this iteration's average weight; ``plus`` clips
    regrets at zero (regret-matching+)."""
    for position in range(2):
        walk(
            tree, position, payoff, row_start, num_buckets, buckets, hand_cards, ranks, order, scale,
            regret, cumulative, weight, plus, reach, values, child, sigma, n_cards,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def pcs_batch(
    tree, payoff, row_start, num_buckets, picks, first_iteration, linear, delay, all_buckets, all_cards, all_ranks,
    all_order, num_valid, scale, regret, cumulative, plus, reach, values, child, sigma, n_cards,
):  # fmt: skip
    """Iterations ``first_iteration ..`` on the boards ``picks`` (indices into the
    stacked per-board tables ``all_*``, board ``m`` using its first
    ``num_valid[m]`` hands); the average weight of iteration ``t`` is
    ``max(t - delay, 0)`` if ``linear`` else 1 from ``t > delay`` on."""
    for i in range(picks.shape[0]):
        t = first_iteration + i
        if linear:
            weight = float(max(t - delay, 0))
        else:
            weight = 1.0 if t > delay else 0.0
        m = picks[i]
        n = num_valid[m]
        pcs_iteration(
            tree, payoff, row_start, num_buckets, all_buckets[m, :, :n], all_cards[m, :n], all_ranks[m, :n],
            all_order[m, :n], scale, regret, cumulative, weight, plus, reach, values, child, sigma, n_cards,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def _match(regret, base, nb, n, out):
    """Regret matching of columns ``base .. base + nb - 1`` into ``out[:n, :nb]``."""
    for b in range(nb):
        total = 0.0
        for a in range(n):
            total += max(regret[a, base + b], 0.0)
        for a in range(n):
            out[a, b] = max(regret[a, base + b], 0.0) / total if total > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def walk(
    tree, position, payoff, row_start, num_buckets, buckets, hand_cards, ranks, order, scale,
    regret, cumulative, weight, plus, reach, values, child, sigma, n_cards,
):  # fmt: skip
    """One depth-first walk for ``position`` from the root (reach 1 for every
    compact hand): counterfactual values bottom-up, regret and cumulative-strategy
    updates at the position's decisions. Iterative (an explicit stack of node and
    next action per depth): numba's on-disk cache cannot reload recursive functions."""
    kind, player, round_, first_child, num_children, decision_index = tree
    n_hands = hand_cards.shape[0]
    levels = reach.shape[0]
    weaker = np.zeros(n_hands)
    stronger = np.zeros(n_hands)
    card_sum = np.zeros(n_cards)
    total_cards = np.zeros(n_cards)
    stack_node = np.zeros(levels, dtype=np.int64)
    stack_action = np.full(levels, -1, dtype=np.int64)
    opp = 1 - position
    reach[0, :, :n_hands] = 1.0
    depth = 0
    while depth >= 0:
        node = stack_node[depth]
        k = kind[node]
        finished = False
        if k == FOLD:
            fold_values(reach[depth, opp, :n_hands], hand_cards, payoff[node, position, 0] * scale,
                        values[depth, :n_hands], card_sum)  # fmt: skip
            finished = True
        elif k == SHOWDOWN:
            showdown_values(
                reach[depth, opp, :n_hands], hand_cards, order, n_hands, ranks, payoff[node, position, 0] * scale,
                payoff[node, position, 1] * scale, payoff[node, position, 2] * scale, values[depth, :n_hands],
                weaker, stronger, card_sum, total_cards,
            )  # fmt: skip
            finished = True
        else:
            actor = player[node]
            n = num_children[node]
            r = round_[node]
            bucket = buckets[r]
            sig = sigma[depth]
            if stack_action[depth] < 0:
                _match(regret, row_start[decision_index[node]], num_buckets[r], n, sig)
                stack_action[depth] = 0
            a = stack_action[depth]
            if a < n:
                other = 1 - actor
                for h in range(n_hands):
                    reach[depth + 1, other, h] = reach[depth, other, h]
                    reach[depth + 1, actor, h] = reach[depth, actor, h] * sig[a, bucket[h]]
                stack_node[depth + 1] = first_child[node] + a
                stack_action[depth + 1] = -1
                depth += 1
                continue
            _finish_decision(
                actor == position, n, row_start[decision_index[node]], num_buckets[r], bucket, sig, child[depth],
                values[depth], reach[depth, position], regret, cumulative, weight, plus, n_hands,
            )  # fmt: skip
            finished = True
        if finished:
            stack_action[depth] = -1
            depth -= 1
            if depth >= 0:
                a = stack_action[depth]
                for h in range(n_hands):
                    child[depth, a, h] = values[depth + 1, h]
                stack_action[depth] = a + 1


@njit(cache=True, nogil=True)
def _finish_decision(own, n, base, nb, bucket, sig, kids, out, own_reach, regret, cumulative, weight, plus, n_hands):
    """A decision's value from its children's; at the walker's own decisions also
    the regret and cumulative-strategy updates of its bucket columns."""
    if not own:
        for h in range(n_hands):
            total = 0.0
            for a in range(n):
                total += kids[a, h]
            out[h] = total
        return
    for h in range(n_hands):
        b = bucket[h]
        value = 0.0
        for a in range(n):
            value += sig[a, b] * kids[a, h]
        out[h] = value
        column = base + b
        for a in range(n):
            regret[a, column] += kids[a, h] - value
        if weight > 0.0:
            scaled = weight * own_reach[h]
            for a in range(n):
                cumulative[a, column] += scaled * sig[a, b]
    if plus:
        for a in range(n):
            for b in range(nb):
                regret[a, base + b] = max(regret[a, base + b], 0.0)


@njit(cache=True, nogil=True)
def normalise_rows(cumulative, row_start, row_actions, out):
    """``out[:, c]`` = the cumulative strategy of column ``c`` normalised over its
    node's actions (uniform where it is all zero); slots past a node's action
    count are 0. ``row_start`` has D + 1 entries, ``row_actions`` D."""
    for d in range(row_actions.shape[0]):
        n = row_actions[d]
        for c in range(row_start[d], row_start[d + 1]):
            total = 0.0
            for a in range(n):
                total += cumulative[a, c]
            for a in range(cumulative.shape[0]):
                if a >= n:
                    out[a, c] = 0.0
                elif total > 0.0:
                    out[a, c] = cumulative[a, c] / total
                else:
                    out[a, c] = 1.0 / n
