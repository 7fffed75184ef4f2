"""Numba kernels behind :mod:`strategies.cfr.solvers.abstract_game`: the joint bucket
tables of a perfect-recall card abstraction and the tree passes of CFR+ and best
response on the abstract game.

Everything is ``@njit(cache=True, nogil=True)`` over arrays and scalars.

Joint tables (:func:`joint_counts`). For one final board, dealt in one order,
every valid private hand h has a last-round bucket sequence ``s[h]`` and a rank.
Over ordered pairs of distinct hands that share no card we want

* ``J[s1, s2]`` += 1 (the pair is a possible deal), and
* ``W[s1, s2]`` += 1 when hand 1 ranks strictly above hand 2 (so ``S = W - W^T``).

Direct enumeration costs H^2 per board and deal order (hold'em: 1.2M, times 2.7M
deal orders). Instead, with m the number of bucket sequences present on the
board (about 120 of 625 in hold'em), in local indices 0..m-1:

* J = n n^T - diag(n) - (pairs of distinct hands sharing a card), n the bucket
  histogram (inclusion-exclusion of Johanson thesis ch2 §2.4: two distinct
  hands share at most one card, so those pairs are the pairs inside each card's
  list of hands). The n n^T part of all boards and orders is one matrix product
  of the stacked histograms, done by the caller (BLAS);
* W = one sweep over the hands in rank order adding the histogram of strictly
  weaker hands to the row of each (tie group, bucket) (m numbers, contiguous),
  minus the strictly ordered pairs inside each card's list.

That is about H*m/4 + 47*C(46, 2) + m^2 operations, far fewer than H^2.

Tree passes. The abstract game's nodes are the betting tree's; a node's vector
runs over the bucket sequences of its round (``width[node]`` entries at
``offset[node]`` of flat arrays). A child whose round is later has ``ratio``
times as many entries: sequence c of the child extends sequence ``c // ratio``
of the parent (perfect recall numbering). Strategy-shaped arrays are
``float64[A, Dw]`` with decision node n owning columns ``doff[n] ..
doff[n] + width[n] - 1`` (the bucket-table layout of
:func:`strategies.cfr.solvers.pcs.row_layout`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from poker.evaluate import rank_cardset
from strategies.cfr import compile_notice
from strategies.cfr.abstraction import _kernels as _ak

compile_notice.install()  # one line on stderr when these kernels compile (a cold numba cache)

DECISION = 0
FOLD = 2
SHOWDOWN = 3

MODE_VALUE = 0  # values of the profile
MODE_BEST_RESPONSE = 1  # the traverser maximises per (node, bucket sequence)
MODE_CFR_PLUS = 2  # values, average and regret-matching+ updates of the traverser


@njit(cache=True, nogil=True)
def joint_counts(
    boards: np.ndarray,
    weights: np.ndarray,
    orders: np.ndarray,
    data: tuple,
    num_sequences: int,
    tables: np.ndarray,
    histograms: np.ndarray,
) -> None:
    """Pair counts of every final board in ``boards`` (int64[B, c], any card order)
    dealt in each order of ``orders`` (int64[O, c]: positions of the board's cards
    in deal order), each count times the board's ``weights`` (suit-class size).
    ``data`` is :attr:`CardAbstraction.kernel_data`; n = ``num_sequences``.

    Adds to ``tables`` (int64[n, n, 2]) ``weight * (-clashing pairs)`` in slot 0
    and ``weight * W`` in slot 1, and writes the bucket histogram of board b in
    order o to ``histograms[b * O + o]`` (float64[B * O, n]): the caller adds
    ``sum weight * hist hist^T - diag`` to slot 0 with one matrix product."""
    hand_sets, hand_cards, total_cards = data[2], data[3], data[4]
    num_hands, num_hole = hand_cards.shape
    num_rounds = total_cards.shape[0]
    num_orders = orders.shape[0]
    n = num_sequences
    counts = np.empty(num_hands, dtype=np.int64)
    order_buf = np.empty(num_hands, dtype=np.int64)
    scratch = np.empty(num_hands, dtype=np.int64)
    per_card = np.empty((2, 52), dtype=np.int64)
    ranks = np.empty(num_hands, dtype=np.int64)
    seqs = np.empty((num_rounds, num_hands), dtype=np.int64)
    card_hands = np.empty((52, num_hands), dtype=np.int64)
    card_len = np.zeros(52, dtype=np.int64)
    tie_start = np.zeros((52, num_hands), dtype=np.int64)
    card_loc = np.empty(num_hands, dtype=np.int64)
    local = np.full(n, -1, dtype=np.int64)
    present = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)
    below = np.zeros(n, dtype=np.int32)
    group_count = np.zeros(n, dtype=np.int32)
    group_members = np.empty(n, dtype=np.int64)
    # Local m x m counts: stronger-weaker pairs (less clashing ones), clashing pairs.
    lw = np.zeros((n, n), dtype=np.int32)
    lc = np.zeros((n, n), dtype=np.int32)
    ordered = np.empty(boards.shape[1], dtype=np.int64)
    loc = np.empty(num_hands, dtype=np.int64)
    for b in range(boards.shape[0]):
        board = boards[b]
        weight = weights[b]
        board_set = _ak.cardset_of(board)
        _ak.strength_counts(hand_sets, hand_cards, board_set, counts, order_buf, scratch, per_card)
        valid = 0
        for h in range(num_hands):
            if not hand_sets[h] & board_set:
                ranks[h] = rank_cardset(hand_sets[h] | board_set)
                order_buf[valid] = h
                valid += 1
        sorted_hands = order_buf[:valid][np.argsort(ranks[order_buf[:valid]], kind="mergesort")]
        card_len[:] = 0
        for i in range(valid):
            h = sorted_hands[i]
            for j in range(num_hole):
                c = hand_cards[h, j]
                size = card_len[c]
                card_hands[c, size] = h
                same = size > 0 and ranks[card_hands[c, size - 1]] == ranks[h]
                tie_start[c, size] = tie_start[c, size - 1] if same else size
                card_len[c] = size + 1
        for o in range(num_orders):
            for i in range(boards.shape[1]):
                ordered[i] = board[orders[o, i]]
            _ak.all_round_buckets(ordered, data, counts, seqs)
            last = seqs[num_rounds - 1]
            hist = histograms[b * num_orders + o]
            for i in range(valid):
                seen[last[sorted_hands[i]]] += 1
            m = 0
            for s in range(n):
                if seen[s]:
                    local[s] = m
                    present[m] = s
                    hist[s] = seen[s]
                    seen[s] = 0
                    m += 1
            for i in range(valid):
                loc[sorted_hands[i]] = local[last[sorted_hands[i]]]
            for a in range(m):
                below[a] = 0
                for x in range(m):
                    lw[a, x] = 0
                    lc[a, x] = 0
            # Sweep by rank: each hand's row gains the histogram of strictly
            # weaker hands (hands of one tie group and bucket at once).
            start = 0
            while start < valid:
                rank = ranks[sorted_hands[start]]
                stop = start + 1
                while stop < valid and ranks[sorted_hands[stop]] == rank:
                    stop += 1
                distinct = 0
                for i in range(start, stop):
                    a = loc[sorted_hands[i]]
                    if group_count[a] == 0:
                        group_members[distinct] = a
                        distinct += 1
                    group_count[a] += 1
                for g in range(distinct):
                    a = group_members[g]
                    times = group_count[a]
                    for x in range(m):
                        lw[a, x] += times * below[x]
                for g in range(distinct):
                    a = group_members[g]
                    below[a] += group_count[a]
                    group_count[a] = 0
                start = stop
            # Pairs of distinct hands sharing a card (each card's list is in rank
            # order): not deals; strictly ordered ones leave W.
            for c in range(52):
                size = card_len[c]
                for i in range(size):
                    card_loc[i] = loc[card_hands[c, i]]
                for j in range(1, size):
                    a = card_loc[j]
                    for i in range(j):
                        lc[a, card_loc[i]] += 1
                    for i in range(tie_start[c, j]):
                        lw[a, card_loc[i]] -= 1
            for a in range(m):
                sa = present[a]
                for x in range(m):
                    sx = present[x]
                    tables[sa, sx, 0] -= weight * (lc[a, x] + lc[x, a])
                    tables[sa, sx, 1] += weight * lw[a, x]
            for a in range(m):
                local[present[a]] = -1


@njit(cache=True, nogil=True)
def propagate_reach(kind, player, first_child, num_children, offset, width, doff, sigma, reach, position):
    """Fill ``reach`` (flat, node vectors at ``offset``) top-down from the root's
    entries (set by the caller): ``position``'s own-action probabilities."""
    for node in range(kind.shape[0]):
        if kind[node] != DECISION:
            continue
        w = width[node]
        base = offset[node]
        mine = player[node] == position
        for a in range(num_children[node]):
            child = first_child[node] + a
            ratio = width[child] // w
            target = offset[child]
            row = doff[node]
            if ratio == 1 and mine:
                for b in range(w):
                    reach[target + b] = reach[base + b] * sigma[a, row + b]
            elif ratio == 1:
                for b in range(w):
                    reach[target + b] = reach[base + b]
            else:
                for b in range(w):
                    value = reach[base + b]
                    if mine:
                        value *= sigma[a, row + b]
                    for j in range(ratio):
                        reach[target + b * ratio + j] = value


@njit(cache=True, nogil=True)
def gather_rows(nodes, offset, width, level_width, reach, out):
    """``out[t]`` = the reach vector of terminal ``nodes[t]`` broadcast to
    ``level_width`` sequences (a node of an earlier round spreads each entry over
    its extensions)."""
    for t in range(nodes.shape[0]):
        node = nodes[t]
        ratio = level_width // width[node]
        base = offset[node]
        for c in range(level_width):
            out[t, c] = reach[base + c // ratio]


@njit(cache=True, nogil=True)
def scatter_rows(nodes, offset, width, scale, rows, values):
    """Terminal values: node ``nodes[t]``'s vector is ``scale[t] * rows[t]``
    summed back to the node's own width (each entry over its extensions)."""
    for t in range(nodes.shape[0]):
        node = nodes[t]
        w = width[node]
        ratio = rows.shape[1] // w
        base = offset[node]
        for b in range(w):
            total = 0.0
            for j in range(ratio):
                total += rows[t, b * ratio + j]
            values[base + b] = scale[t] * total


@njit(cache=True, nogil=True)
def decision_values(
    kind, player, first_child, num_children, offset, width, doff, position, mode, weight, sigma, regret, cumulative,
    own_reach, values, play, keep,
):  # fmt: skip
    """Bottom-up over the decision nodes (terminal values already in ``values``):
    ``position``'s counterfactual values per own bucket sequence. At its nodes
    the value is the ``play``-weighted sum (``MODE_VALUE``, ``MODE_CFR_PLUS``, which
    also adds ``weight * own_reach * sigma`` to ``cumulative``, then updates the
    regrets with regret-matching+ and regret-matches ``sigma``) or the maximum
    (``MODE_BEST_RESPONSE``); at the other position's nodes the plain sum (its
    reach is inside the terminal values). Children of a later round are summed
    over the extensions of each sequence.

    ``play`` is the strategy ``position`` plays: ``sigma`` itself, or when
    ``position`` is restricted (data-biased response, Johanson thesis Eq 6.1)
    the mix ``keep * fixed + (1 - keep) * sigma`` with ``keep`` the confidence
    ``float64[Dw]`` per column. A non-empty ``keep`` turns on the restricted
    regret update of :func:`strategies.cfr.tree._kernels._update_group`: the
    regrets are those of the free part ``sigma``, ``(1 - keep) * (child - sum_a
    sigma * child)``, written so that at ``keep = 0`` they are the plain update
    bit for bit."""
    max_actions = sigma.shape[0]
    mixing = keep.shape[0] > 0
    child_values = np.empty(max_actions)
    starts = np.empty(max_actions, dtype=np.int64)
    ratios = np.empty(max_actions, dtype=np.int64)
    for node in range(kind.shape[0] - 1, -1, -1):
        if kind[node] != DECISION:
            continue
        w = width[node]
        base = offset[node]
        n = num_children[node]
        mine = player[node] == position
        row = doff[node]
        flat = True
        for a in range(n):
            child = first_child[node] + a
            starts[a] = offset[child]
            ratios[a] = width[child] // w
            flat = flat and ratios[a] == 1
        if not mine:
            for b in range(w):
                total = 0.0
                for a in range(n):
                    if flat:
                        total += values[starts[a] + b]
                    else:
                        for j in range(ratios[a]):
                            total += values[starts[a] + b * ratios[a] + j]
                values[base + b] = total
            continue
        for b in range(w):
            for a in range(n):
                if flat:
                    child_values[a] = values[starts[a] + b]
                else:
                    total = 0.0
                    for j in range(ratios[a]):
                        total += values[starts[a] + b * ratios[a] + j]
                    child_values[a] = total
            if mode == MODE_BEST_RESPONSE:
                best = child_values[0]
                for a in range(1, n):
                    best = max(best, child_values[a])
                values[base + b] = best
                continue
            value = 0.0
            for a in range(n):
                value += play[a, row + b] * child_values[a]
            values[base + b] = value
            if mode != MODE_CFR_PLUS:
                continue
            if weight > 0.0:
                scale = weight * own_reach[base + b]
                for a in range(n):
                    cumulative[a, row + b] += scale * sigma[a, row + b]
            free = 1.0
            baseline = value
            if mixing:
                free = 1.0 - keep[row + b]
                baseline = 0.0
                for a in range(n):
                    baseline += sigma[a, row + b] * child_values[a]
            positive = 0.0
            for a in range(n):
                # (regret + free * child) - free * baseline: at free = 1 the
                # unrestricted update's own arithmetic, so keep = 0 is bit for bit a plain solve.
                r = max(regret[a, row + b] + free * child_values[a] - free * baseline, 0.0)
                regret[a, row + b] = r
                positive += r
            for a in range(n):
                sigma[a, row + b] = regret[a, row + b] / positive if positive > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def normalise(cumulative, num_children, decision_nodes, doff, width, out):
    """``out`` = ``cumulative`` normalised over each decision's actions, uniform where it sums to 0."""
    for i in range(decision_nodes.shape[0]):
        node = decision_nodes[i]
        n = num_children[node]
        for b in range(width[node]):
            col = doff[node] + b
            total = 0.0
            for a in range(n):
                total += cumulative[a, col]
            for a in range(n):
                out[a, col] = cumulative[a, col] / total if total > 0.0 else 1.0 / n
