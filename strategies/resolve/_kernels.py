"""Numba kernels of the re-solver: CFR+ on a lookahead with the re-solving gadget
at its root, and one position's values at every node; for the depth-limited
lookahead (:mod:`strategies.resolve.depth_limited`), showdown values over a set
of run-outs and fold values per node; and for ``arena train-values``
(:mod:`strategies.resolve.train`), one epoch of Adam on the value network and
its inference in plain loops (the same bits on every machine).

They reuse the engine's inline building blocks (:mod:`strategies.cfr.tree._kernels`:
``_run_iterations``, ``_propagate_reach``, ``_counterfactual_values``,
``_scratch``) so the tree walk, terminal evaluation and regret-matching+ are the
engine's. The gadget (Burch thesis §5.2.5; DeepStack-Leduc's ``cfrd_gadget.lua``) lives in the
engine's iteration loop as an optional slot: before each of the opponent's
passes its root reach is the gadget's *follow* probability per private hand,
and after the pass each hand's regrets over {follow, terminate} are updated by
regret-matching+ from its root counterfactual value (follow) and its
constraint (terminate) (``_update_gadget`` there).

The arrays follow :mod:`strategies.cfr.tree._kernels` (``[A, D, H]`` strategies,
``[2, N, H]`` reach, ``[N, H]`` values). ``gadget`` is the tuple
``(opponent, constraint float64[H], mask float64[H], regret float64[2, H])``:
the opponent's position, its constraint values, 1 for the hands it may hold
(the root board's mask) and the {follow, terminate} regrets; ``root_reach[opponent]``
holds the follow probabilities on entry and is updated in place.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from strategies.cfr.tree._kernels import (
    FIXED_HANDS,
    _counterfactual_values,
    _propagate_reach,
    _run_iterations,
    _scratch,
    fold_values,
    showdown_values,
)


@njit(cache=True, nogil=True)
def run_gadget_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget):
    """CFR iterations as :func:`strategies.cfr.tree._kernels.run_iterations` (same
    ``state`` tuple, no restriction) with the gadget at the root (the engine's
    inline loop with its gadget slot filled); returns the number of the next
    iteration."""
    return _run_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget)


@njit(cache=True, nogil=True)
def position_values(tree, payoff, strategy, mode, root_reach, reach, values, position):
    """``position``'s counterfactual values at every node into ``values[N, H]``
    against ``strategy`` (``[A, D, H]``): best-response values
    (``MODE_BEST_RESPONSE``, the maximum per hand at its own decisions) or the
    profile's (``MODE_VALUE``). ``reach`` is scratch ``[2, N, H]``."""
    if reach.shape[2] == FIXED_HANDS and tree.hand_cards.shape[1] == 1:
        _position_values(tree, payoff, strategy, mode, root_reach, reach, values, position, FIXED_HANDS, 1)
    else:
        _position_values(
            tree, payoff, strategy, mode, root_reach, reach, values, position, reach.shape[2], tree.hand_cards.shape[1]
        )


@njit(cache=True, nogil=True, inline="always")
def _position_values(tree, payoff, strategy, mode, root_reach, reach, values, position, n_hands, n_hole):
    reach[:, 0, :] = root_reach
    _propagate_reach(tree, strategy, reach, -1, n_hands)
    empty = np.zeros((0, 0, 0))
    _counterfactual_values(
        tree,
        payoff,
        position,
        mode,
        strategy,
        strategy,
        reach,
        values,
        empty,
        empty,
        0.0,
        np.zeros((0, 0)),
        -1,
        n_hands,
        n_hole,
        _scratch(tree, n_hands),
        False,
    )


@njit(cache=True, nogil=True)
def runout_values(opp_reach, stakes, hand_cards, ranks, order, n_valid, weight, out):
    """Showdown values averaged over a set of complete boards, for several nodes
    at once: ``out[h, l] = weight * stakes[l] * sum_b (W_b(h) - L_b(h))`` where
    ``W_b``/``L_b`` are the opponent reach ``opp_reach[h', l]`` over hands ``h'``
    compatible with ``h`` and board ``b`` that ``h`` beats / loses to. Hands
    index the rows of ``opp_reach`` and ``out`` (``[H, L]``) and nodes the
    columns, so each step of the sweep serves every node in one contiguous
    (vectorised) run. ``ranks``, ``order`` and ``n_valid`` are per board
    (``[K, H]``, ``[K, H]``, ``[K]``, as the engine's showdown tables); hands
    clashing with a board get nothing from it.

    The engine's two sorted sweeps per board
    (:func:`strategies.cfr.tree._kernels.showdown_values`, per-card
    inclusion-exclusion; the same sums in the same order, so the same bits as
    the engine's showdown), each step over every node at once."""
    n_hands, n_nodes = opp_reach.shape
    out[:] = 0.0
    if n_nodes < NODES_TOGETHER:
        _runout_values_by_node(opp_reach, hand_cards, ranks, order, n_valid, out)
    else:
        _runout_values_together(opp_reach, hand_cards, ranks, order, n_valid, out)
    for h in range(n_hands):
        for q in range(n_nodes):
            out[h, q] *= weight * stakes[q]


#: Nodes from which :func:`runout_values` sweeps them together: with fewer, the
#: bookkeeping of the per-node runs costs more than it saves (measured on HUNL's turn).
NODES_TOGETHER = 3


@njit(cache=True, nogil=True)
def _runout_values_by_node(opp_reach, hand_cards, ranks, order, n_valid, out):
    """:func:`runout_values`'s sums (before the stakes) node by node, by the
    engine's :func:`showdown_values` on each node's reach made contiguous."""
    n_hands, n_nodes = opp_reach.shape
    n_cards = hand_cards.max() + 1
    reach = np.empty(n_hands)
    weaker = np.empty(n_hands)
    stronger = np.empty(n_hands)
    card_sum = np.empty(n_cards)
    total_cards = np.empty(n_cards)
    board_out = np.empty(n_hands)
    for q in range(n_nodes):
        reach[:] = opp_reach[:, q]
        for b in range(ranks.shape[0]):
            showdown_values(
                reach, hand_cards, order[b], np.int64(n_valid[b]), ranks[b], 1.0, 0.0, -1.0,
                board_out, weaker, stronger, card_sum, total_cards,
            )  # fmt: skip
            for h in range(n_hands):
                out[h, q] += board_out[h]


@njit(cache=True, nogil=True)
def _runout_values_together(opp_reach, hand_cards, ranks, order, n_valid, out):
    """:func:`runout_values`'s sums (before the stakes) with every node in each step."""
    n_hands, n_nodes = opp_reach.shape
    card_sum = np.empty((hand_cards.max() + 1, n_nodes))
    running = np.empty(n_nodes)
    weaker = np.empty((n_hands, n_nodes))
    stronger = np.empty((n_hands, n_nodes))
    for b in range(ranks.shape[0]):
        _sweep(opp_reach, hand_cards, ranks[b], order[b], n_valid[b], True, weaker, running, card_sum)
        _sweep(opp_reach, hand_cards, ranks[b], order[b], n_valid[b], False, stronger, running, card_sum)
        for t in range(n_valid[b]):
            h = order[b, t]
            for q in range(n_nodes):
                out[h, q] += weaker[h, q] - stronger[h, q]


@njit(cache=True, nogil=True, inline="always")
def _sweep(opp_reach, hand_cards, rank, by_rank, n, upward, into, running, card_sum):
    """One sweep of :func:`runout_values` over the ``n`` valid hands of a board
    (``by_rank`` weakest first): ``into[h, q]``, the reach ``opp_reach[:, q]`` of
    the hands compatible with ``h`` ranked strictly below it (``upward``) or
    strictly above it, by groups of equal rank."""
    n_nodes = opp_reach.shape[1]
    n_hole = hand_cards.shape[1]
    card_sum[:] = 0.0
    running[:] = 0.0
    step = 1 if upward else -1
    i = 0 if upward else n - 1
    end = n if upward else -1
    while i != end:
        j = i
        while j != end and rank[by_rank[j]] == rank[by_rank[i]]:
            j += step
        for t in range(i, j, step):
            h = by_rank[t]
            for q in range(n_nodes):
                into[h, q] = running[q]
            for c in range(n_hole):
                card = hand_cards[h, c]
                for q in range(n_nodes):
                    into[h, q] -= card_sum[card, q]
        for t in range(i, j, step):
            h = by_rank[t]
            for q in range(n_nodes):
                running[q] += opp_reach[h, q]
            for c in range(n_hole):
                card = hand_cards[h, c]
                for q in range(n_nodes):
                    card_sum[card, q] += opp_reach[h, q]
        i = j


@njit(cache=True, nogil=True)
def showdown_sums(ranks, hand_cards, out):
    """``out[h, g]`` (float32 ``[H, H]``): over the boards (the rows of
    ``ranks``, -1 where a hand clashes with the board), the boards on which hand
    ``h`` beats ``g`` minus those on which it loses to ``g``; 0 where the two
    hands share a card. Whole numbers of at most the boards' count, exact in
    float32 to 2**24 boards. :func:`summed_values` reads it."""
    n_boards, n_hands = ranks.shape
    n_hole = hand_cards.shape[1]
    out[:] = 0.0
    for b in range(n_boards):
        rank = ranks[b]
        for h in range(n_hands):
            mine = rank[h]
            if mine < 0:
                continue
            row = out[h]
            for g in range(n_hands):
                theirs = rank[g]
                row[g] += np.float32((theirs >= 0) * ((mine > theirs) - (mine < theirs)))
    for h in range(n_hands):
        for g in range(n_hands):
            for i in range(n_hole):
                for j in range(n_hole):
                    if hand_cards[h, i] == hand_cards[g, j]:
                        out[h, g] = 0.0


@njit(cache=True, nogil=True, fastmath=True)
def summed_values(sums, opp_reach, stakes, weight, out):
    """:func:`runout_values` from :func:`showdown_sums`' table: ``out[l, h] =
    weight * stakes[l] * sum_g sums[h, g] * opp_reach[l, g]`` (nodes in rows
    here, ``[L, H]``). A product with the table, H x H work a node whatever the
    number of boards, where the sweeps do boards x H: on hold'em's turn (48
    rivers) a quarter to a third of their time. Four rows of the table at a time serve every
    node, so the table is read once a call (7 MB for hold'em: read once per
    node, it came from memory each time). The sums are reassociated
    (vectorised), so their last bits follow the machine's vector width, but a
    node's values never depend on the other nodes asked with it."""
    n_nodes, n_hands = opp_reach.shape
    h = 0
    while h + 4 <= n_hands:
        r0, r1, r2, r3 = sums[h], sums[h + 1], sums[h + 2], sums[h + 3]
        for q in range(n_nodes):
            reach = opp_reach[q]
            a0 = a1 = a2 = a3 = 0.0
            for g in range(n_hands):
                x = reach[g]
                a0 += np.float64(r0[g]) * x
                a1 += np.float64(r1[g]) * x
                a2 += np.float64(r2[g]) * x
                a3 += np.float64(r3[g]) * x
            scale = weight * stakes[q]
            out[q, h], out[q, h + 1], out[q, h + 2], out[q, h + 3] = scale * a0, scale * a1, scale * a2, scale * a3
        h += 4
    while h < n_hands:
        row = sums[h]
        for q in range(n_nodes):
            reach = opp_reach[q]
            a0 = 0.0
            for g in range(n_hands):
                a0 += np.float64(row[g]) * reach[g]
            out[q, h] = weight * stakes[q] * a0
        h += 1


@njit(cache=True, nogil=True)
def sequence_values(matrices, group, opp_reach, sequence, hand_cards, out):
    """Leaf values by blueprint bucket sequences: ``out[l, h] = sum_h'
    matrices[l, s(h), s(h')] * opp_reach[group[l], h']`` over the hands ``h'``
    sharing no card with ``h``, where ``s`` is ``sequence`` (-1: the hand clashes
    with the board; it holds nothing and gets 0). Leaves of one group share the
    opponent's reach row. Per reach row, the reach per sequence in total and per
    card (``[C, n]``) once; a hand's compatible reach per sequence is the total
    less its cards' rows, plus itself once for two-card hands
    (inclusion-exclusion, as :func:`fold_reach_rows`), so its value is the
    leaf's matrix row times each of those: per leaf the matrix times the total
    (``[n]``) and times every card's row (``[n, C]``), O(n^2 C), then O(H) a leaf
    to read them off, where a dot product per hand and leaf took O(H n)."""
    n_leaves, width = matrices.shape[0], matrices.shape[1]
    n_hands, n_hole = hand_cards.shape
    n_groups = opp_reach.shape[0]
    n_cards = hand_cards.max() + 1
    # The leaves of each group, contiguous: members[start[g]:start[g + 1]].
    members = np.argsort(group, kind="mergesort")
    start = np.zeros(n_groups + 1, dtype=np.int64)
    for leaf in range(n_leaves):
        start[group[leaf] + 1] += 1
    for g in range(n_groups):
        start[g + 1] += start[g]
    total = np.empty(width)
    by_card = np.empty((width, n_cards))  # sequence-major: the products below run along the cards
    of_total = np.empty(width)
    of_card = np.empty((width, n_cards))
    out[:] = 0.0
    for g in range(n_groups):
        if start[g] == start[g + 1]:
            continue
        reach = opp_reach[g]
        total[:] = 0.0
        by_card[:] = 0.0
        for h in range(n_hands):
            s = sequence[h]
            if s >= 0:
                total[s] += reach[h]
                for c in range(n_hole):
                    by_card[s, hand_cards[h, c]] += reach[h]
        for m in range(start[g], start[g + 1]):
            leaf = members[m]
            matrix = matrices[leaf]
            for s in range(width):
                row = matrix[s]
                v = 0.0
                for t in range(width):
                    v += row[t] * total[t]
                of_total[s] = v
                into = of_card[s]
                into[:] = 0.0
                for t in range(width):  # independent sums, one per card: no chain of dependent adds
                    weight = row[t]
                    cards = by_card[t]
                    for c in range(n_cards):
                        into[c] += weight * cards[c]
            for h in range(n_hands):
                s = sequence[h]
                if s < 0:
                    continue
                v = of_total[s]
                for c in range(n_hole):
                    v -= of_card[s, hand_cards[h, c]]
                if n_hole == 2:
                    v += matrix[s, s] * reach[h]
                out[leaf, h] = v


@njit(cache=True, nogil=True)
def street_reach(root_reach, nodes, rows, players, child_start, children, sigma, reach):
    """Both positions' reach ``reach[2, N, H]`` on a street tree
    (:mod:`strategies.resolve.depth_limited`) under ``sigma`` (``[D, A, H]``)
    from ``root_reach[2, H]``. Decision ``i`` (parents before children) is node
    ``nodes[i]``, strategy row ``rows[i]`` of ``players[i]``, with children
    ``children[child_start[i]:child_start[i + 1]]``, its actions in order."""
    n_hands = root_reach.shape[1]
    for q in range(2):
        for h in range(n_hands):
            reach[q, 0, h] = root_reach[q, h]
    for i in range(nodes.shape[0]):
        node, d, player = nodes[i], rows[i], players[i]
        for a in range(child_start[i + 1] - child_start[i]):
            child = children[child_start[i] + a]
            for q in range(2):
                if q == player:
                    for h in range(n_hands):
                        reach[q, child, h] = reach[q, node, h] * sigma[d, a, h]
                else:
                    for h in range(n_hands):
                        reach[q, child, h] = reach[q, node, h]


@njit(cache=True, nogil=True)
def street_regrets(
    values, reach, sigma, regret, cumulative, nodes, rows, players, child_start, children, position, weight, discounted,
    keep_positive, keep_negative,
):  # fmt: skip
    """One position's pass of CFR on a street tree (decisions as
    :func:`street_reach`), children before parents: ``values[N, H]``, filled at
    the terminals and leaves, gets ``position``'s values at every decision; at
    its own decisions the average (``cumulative``, weighted by ``weight`` times
    its reach), the regrets and ``sigma`` (regret matching on the positive
    regrets) are updated. Regrets are clipped at zero (CFR+) or, ``discounted``,
    multiplied by ``keep_positive`` where positive and ``keep_negative`` where
    not (discounted CFR)."""
    n_hands = values.shape[1]
    value = np.empty(n_hands)
    total = np.empty(n_hands)
    # Hands innermost in every loop (contiguous, vectorised); each hand's sums still run over the
    # actions in order, so the bits are those of a loop over the actions inside one over the hands.
    for i in range(nodes.shape[0] - 1, -1, -1):
        node, d = nodes[i], rows[i]
        first = child_start[i]
        n = child_start[i + 1] - first
        into = values[node]
        if players[i] != position:
            into[:] = 0.0
            for a in range(n):
                child = values[children[first + a]]
                for h in range(n_hands):
                    into[h] += child[h]
            continue
        value[:] = 0.0
        for a in range(n):
            child = values[children[first + a]]
            strategy = sigma[d, a]
            for h in range(n_hands):
                value[h] += strategy[h] * child[h]
        into[:] = value
        mass = reach[position, node]
        total[:] = 0.0
        for a in range(n):
            child = values[children[first + a]]
            strategy, average, regrets = sigma[d, a], cumulative[d, a], regret[d, a]
            for h in range(n_hands):
                average[h] += weight * mass[h] * strategy[h]
                r = regrets[h] + child[h] - value[h]
                if discounted:
                    r *= keep_positive if r > 0.0 else keep_negative
                elif r < 0.0:
                    r = 0.0
                regrets[h] = r
                total[h] += r if r > 0.0 else 0.0
        for a in range(n):
            strategy, regrets = sigma[d, a], regret[d, a]
            for h in range(n_hands):
                r = regrets[h]
                strategy[h] = (r if r > 0.0 else 0.0) / total[h] if total[h] > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def fold_reach_rows(opp_reach, hand_cards, out):
    """``out[l, h]``: the opponent reach ``opp_reach[l]`` over hands sharing no
    card with ``h`` (the engine's per-card inclusion-exclusion,
    :func:`strategies.cfr.tree._kernels.fold_values` with amount 1), per row."""
    card_sum = np.empty(hand_cards.max() + 1)
    for node in range(opp_reach.shape[0]):
        fold_values(opp_reach[node], hand_cards, 1.0, out[node], card_sum)


#: Adam's constants (Kingma & Ba's defaults), for :func:`train_epoch`.
ADAM_BETA1, ADAM_BETA2, ADAM_EPSILON = 0.9, 0.999, 1e-8


@njit(cache=True, nogil=True)
def train_epoch(x, y, m, order, weights, biases, moments, squares, step, learning_rate, batch, zero_sum):
    """One pass of Adam over the rows in ``order`` (batches of ``batch``);
    ``weights`` are ``(w0, w1, w2)``, ``biases`` ``(b0, b1, b2)``, ``moments``
    and ``squares`` Adam's first and second moments, ``(weights, biases)``
    tuples of the same shapes (all updated in place). Returns the next step
    number. With ``zero_sum`` the loss is on the zero-sum corrected outputs
    (:mod:`strategies.resolve.values`: ``y -= (r . y) / 2`` with the ranges
    ``r``, the first ``n_out`` inputs), as DeepStack trains its outer layer, so
    the net fits what play reads. Plain loops: the same sums in the same order
    on every machine."""
    w0, w1, w2 = weights
    b0, b1, b2 = biases
    n1 = w0.shape[1]
    n2 = w1.shape[1]
    n_out = w2.shape[1]
    grad_w = (np.zeros_like(w0), np.zeros_like(w1), np.zeros_like(w2))
    grad_b = (np.zeros_like(b0), np.zeros_like(b1), np.zeros_like(b2))
    h1 = np.empty((batch, n1))
    h2 = np.empty((batch, n2))
    d_out = np.empty((batch, n_out))
    d2 = np.empty((batch, n2))
    d1 = np.empty((batch, n1))
    for start in range(0, order.shape[0], batch):
        rows = order[start : start + batch]
        size = rows.shape[0]
        count = 0.0
        for i in range(size):
            for k in range(n_out):
                count += m[rows[i], k]
        if count == 0.0:
            continue
        w1t = np.ascontiguousarray(w1.T)  # the weights change only after the batch
        for i in range(size):
            r = rows[i]
            # Each sum runs over the same terms in the same order as a dot product
            # per output would; the loops only put the contiguous index innermost,
            # where the compiler can process several outputs at once.
            a1 = h1[i]
            _dense(x[r], w0, b0, a1, True)
            a2 = h2[i]
            _dense(a1, w1, b1, a2, True)
            out = d_out[i]
            _dense(a2, w2, b2, out, False)
            error = 0.0
            if zero_sum:
                for j in range(n_out):
                    error += x[r, j] * out[j]
            total = 0.0
            for j in range(n_out):
                out[j] = 2.0 * (out[j] - 0.5 * error - y[r, j]) * m[r, j] / count
                total += out[j]
            if zero_sum:
                for j in range(n_out):
                    out[j] -= 0.5 * x[r, j] * total
            for k in range(n2):
                s = 0.0
                for j in range(n_out):
                    s += out[j] * w2[k, j]
                d2[i, k] = s if a2[k] > 0.0 else 0.0
            back = d1[i]
            back[:] = 0.0
            for j in range(n2):
                dj = d2[i, j]
                for k in range(n1):
                    back[k] += dj * w1t[j, k]
            for k in range(n1):
                back[k] = back[k] if a1[k] > 0.0 else 0.0
        for g in grad_w:
            g[...] = 0.0
        for g in grad_b:
            g[...] = 0.0
        for i in range(size):
            _accumulate(grad_w[0], grad_b[0], x[rows[i]], d1[i])
            _accumulate(grad_w[1], grad_b[1], h1[i], d2[i])
            _accumulate(grad_w[2], grad_b[2], h2[i], d_out[i])
        step += 1
        correction1 = 1.0 - ADAM_BETA1**step
        correction2 = 1.0 - ADAM_BETA2**step
        for i in range(3):
            adam(weights[i].ravel(), moments[0][i].ravel(), squares[0][i].ravel(), grad_w[i].ravel(), learning_rate, correction1, correction2)
            adam(biases[i], moments[1][i], squares[1][i], grad_b[i], learning_rate, correction1, correction2)
    return step


@njit(cache=True, nogil=True, inline="always")
def _accumulate(grad_w, grad_b, inputs, delta):
    """One row's gradient of a dense layer added in place: ``grad_w[k, j] +=
    inputs[k] * delta[j]`` (``inputs`` the layer's input activations, ``delta``
    the loss's derivative at its pre-activations) and ``grad_b[j] += delta[j]``."""
    for k in range(grad_w.shape[0]):
        xk = inputs[k]
        for j in range(grad_w.shape[1]):
            grad_w[k, j] += xk * delta[j]
    for j in range(grad_w.shape[1]):
        grad_b[j] += delta[j]


@njit(cache=True, nogil=True, inline="always")
def _dense(inputs, w, b, out, relu):
    """``out = inputs @ w + b`` (then ReLU when ``relu``), summed input by input
    with the contiguous output index innermost: per output the same terms in
    the same order as a dot product. Inputs that are 0 (ReLU's, most of an
    averaged file's block-diagonal layer meets only them) add nothing and are
    skipped: the sums are the same bits but for the sign of a zero, which no
    later product or ReLU keeps."""
    out[:] = b
    for k in range(w.shape[0]):
        v = inputs[k]
        if v == 0.0:
            continue
        for j in range(w.shape[1]):
            out[j] += v * w[k, j]
    if relu:
        for j in range(out.shape[0]):
            out[j] = out[j] if out[j] > 0.0 else 0.0


@njit(cache=True, nogil=True)
def forward_rows(x, weights, biases, out):
    """The network's raw outputs ``out[N, O]`` for inputs ``x[N, I]`` (ReLU
    after every layer but the last), row by row by :func:`_dense`: the same
    bits on every machine, where a BLAS product's rounding depends on the CPU
    (``arena train-values --refine`` plays the agent this way)."""
    last = len(weights) - 1
    width = x.shape[1]
    for w in weights:
        width = max(width, w.shape[1])
    a = np.empty(width)
    b = np.empty(width)
    for r in range(x.shape[0]):
        n_in = x.shape[1]
        a[:n_in] = x[r]
        for i in range(len(weights)):
            n_out = weights[i].shape[1]
            _dense(a[:n_in], weights[i], biases[i], b[:n_out], i < last)
            a[:n_out] = b[:n_out]
            n_in = n_out
        out[r, :] = a[:n_in]


@njit(cache=True, nogil=True)
def adam(param, moment, square, grad, learning_rate, correction1, correction2):
    """One Adam step on flat arrays (in place)."""
    for q in range(param.shape[0]):
        moment[q] = ADAM_BETA1 * moment[q] + (1.0 - ADAM_BETA1) * grad[q]
        square[q] = ADAM_BETA2 * square[q] + (1.0 - ADAM_BETA2) * grad[q] * grad[q]
        param[q] -= learning_rate * (moment[q] / correction1) / (np.sqrt(square[q] / correction2) + ADAM_EPSILON)
