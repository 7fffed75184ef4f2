"""Numba kernels of the public-tree solvers: pure functions over arrays.

Everything here is ``@njit(cache=True, nogil=True)`` and takes only arrays and
scalars; :mod:`strategies.cfr.solvers.solver` and :mod:`strategies.cfr.best_response.exact`
build the arrays and call these. The tree arrays travel as one named tuple,
``tree``, read by field name (:class:`strategies.cfr.tree.public.KernelTree`, from
:attr:`strategies.cfr.tree.public.Tree.kernel_arrays`; layout in
:mod:`strategies.cfr.tree.public`)::

    KernelTree(kind int8[N], player int8[N], first_child int32[N], action_child int32[N, A],
     num_children int32[N], decision_index int32[N], board_index int32[N],
     chance_weight float64[N], group_start int32[G + 1], board_mask float64[B, H],
     hand_cards int64[H, k], hand_rank int32[B, H], rank_order int32[B, H],
     num_valid int32[B], outcome int8[B, H, H] or int8[0, 0, 0],
     sign float64[B, H, H] or float64[0, 0, 0], image_start int32[N + 1],
     image_perm int32[M], hand_perm int32[P, H])

where ``hand_cards`` numbers the cards by their index in the sorted deck (0..C-1,
C = deck size), so per-card scratch sums have only C entries.

Array layouts inside the kernels (the public API transposes strategies to
``[D, A, H]``):

* strategy-shaped arrays (current ``sigma``, ``regret``, ``cumulative``) are
  ``float64[A, D, H]``: action, decision row, private hand. Action-major, so one
  action's rows of a node group are one contiguous run of ``size * H`` numbers;
  slots past a node's action count are never read.
* reach is ``float64[2, N, H]``: the probability that each position's own actions
  (and board card removal) lead to the node, holding each hand.
* values are ``float64[N, H]`` for one position: counterfactual values, already
  weighted by the opponent's reach and the chance probabilities below the root,
  so at the root ``sum_h reach[p, 0, h] * values[0, h]`` divided by
  ``Tree.root_pairs`` is the expected value.

Decision and reach work runs per group on flat runs of ``size * H`` numbers (one
betting history under all its boards), which the compiler vectorises; terminals
and chance nodes run per node.

Terminal payoffs come per node and position as ``payoff float64[N, 2, 3]``:
``[win, tie, lose]`` chips at a showdown and the payoff (in slot 0) at a fold.
The zero-sum default is ``(stake, 0, -stake)`` and ``(+/- the folder's chips)``;
other arrays (tilts) make the game non-zero-sum.

Terminal evaluation is O(H) per node (Johanson 2016 thesis ch2 §2.4, O(n) terminal evaluation):
the opponent's reach over hands compatible with ours is the total minus the
per-card sums of our cards, plus our own hand once for two-card hands
(inclusion-exclusion); at a showdown one sweep over the hands sorted by rank
accumulates the reach of weaker hands (and, downward, stronger ones) with the
same per-card correction, ties being what is left. Trees with few hands use an
H x H outcome table per board instead, which is faster there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from strategies.cfr import compile_notice

compile_notice.install()  # one line on stderr when these kernels compile (a cold numba cache)

DECISION = 0
CHANCE = 1
FOLD = 2
SHOWDOWN = 3

#: _counterfactual_values modes
MODE_VALUE = 0  # both positions play sigma_play: the values of the profile
MODE_BEST_RESPONSE = 1  # the traverser maximises per hand
MODE_CFR = 2  # values of the profile, and regret-matching regret updates
MODE_CFR_PLUS = 3  # as MODE_CFR with regrets clipped at zero (regret-matching+)

#: The hand-axis width that :func:`run_iterations` and :func:`root_values`
#: compile a second time, for one hole card, with the hand and hole-card counts
#: as constants, so the per-hand loops have a literal trip count. The solver
#: pads smaller hand axes to it with dummy hands of zero reach that clash with
#: every board (:meth:`strategies.cfr.tree.public.Tree.padded_kernel_arrays`), which only
#: adds exact zeros to the real hands' sums.
FIXED_HANDS = 6


@njit(cache=True, nogil=True)
def regret_matching(regret, num_actions, decision_player, position, sigma):
    """sigma[a, d, h] = max(regret, 0) / its sum over actions, or uniform if that
    sum is 0, for every decision row ``d`` of ``position`` (all rows if -1).
    Arrays are ``[A, D, H]``."""
    _, n_decisions, n_hands = regret.shape
    total = np.empty(n_hands)
    for d in range(n_decisions):
        if position >= 0 and decision_player[d] != position:
            continue
        n = num_actions[d]
        total[:] = 0.0
        for a in range(n):
            row = regret[a, d]
            for h in range(n_hands):
                total[h] += max(row[h], 0.0)
        for a in range(n):
            row = regret[a, d]
            out = sigma[a, d]
            for h in range(n_hands):
                out[h] = max(row[h], 0.0) / total[h] if total[h] > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def normalise(cumulative, num_actions, out):
    """out = cumulative / its sum over actions, uniform where that sum is 0 (``[A, D, H]``)."""
    _, n_decisions, n_hands = cumulative.shape
    total = np.empty(n_hands)
    for d in range(n_decisions):
        n = num_actions[d]
        total[:] = 0.0
        for a in range(n):
            for h in range(n_hands):
                total[h] += cumulative[a, d, h]
        for a in range(n):
            for h in range(n_hands):
                out[a, d, h] = cumulative[a, d, h] / total[h] if total[h] > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def mix_fixed(sigma, fixed, p_conf, decision_player, restricted, sigma_play):
    """The restricted position's played strategy ``p_conf * fixed + (1 - p_conf) *
    sigma`` at its rows (Johanson thesis Eq 6.1); other rows are copied.
    ``sigma``, ``fixed``, ``sigma_play`` are ``[A, D, H]``; ``p_conf`` is ``[D, H]``."""
    n_actions, n_decisions, n_hands = sigma.shape
    for a in range(n_actions):
        for d in range(n_decisions):
            if decision_player[d] == restricted:
                for h in range(n_hands):
                    p = p_conf[d, h]
                    sigma_play[a, d, h] = p * fixed[a, d, h] + (1.0 - p) * sigma[a, d, h]
            else:
                for h in range(n_hands):
                    sigma_play[a, d, h] = sigma[a, d, h]


@njit(cache=True, nogil=True, inline="always")
def _propagate_reach(tree, sigma_play, reach, only, n_hands):
    """Fill ``reach[:, 1:]`` top-down from ``reach[:, 0]`` (set by the caller), or
    only ``reach[only]`` if ``only`` is 0 or 1 (the other position's reach is
    left as it is: valid when only ``only``'s strategy changed); -1 for both.
    ``n_hands`` is ``reach.shape[2]`` (a compile-time constant on the fixed-width path)."""
    for p in range(2):
        if only == -1 or only == p:
            _propagate_position(tree, sigma_play, reach[p].reshape(reach.shape[1] * n_hands), p, n_hands)


@njit(cache=True, nogil=True, inline="always")
def _propagate_position(tree, sigma_play, flat_reach, p, n_hands):
    """:func:`_propagate_reach` for position ``p``, on its flat ``[N * H]`` reach."""
    kind, player, first_child, action_child = tree.kind, tree.player, tree.first_child, tree.action_child
    num_children, decision_index, board_index = tree.num_children, tree.decision_index, tree.board_index
    group_start, board_mask = tree.group_start, tree.board_mask
    n_actions, n_decisions, _ = sigma_play.shape
    flat_sigma = sigma_play.reshape(n_actions, n_decisions * n_hands)
    for g in range(group_start.shape[0] - 1):
        start = group_start[g]
        k = kind[start]
        if k == DECISION:
            width = (group_start[g + 1] - start) * n_hands
            source = flat_reach[start * n_hands : start * n_hands + width]
            for a in range(num_children[start]):
                first = action_child[start, a] * n_hands
                target = flat_reach[first : first + width]
                if player[start] == p:
                    row = decision_index[start] * n_hands
                    sigma_a = flat_sigma[a, row : row + width]
                    for x in range(width):
                        target[x] = source[x] * sigma_a[x]
                else:
                    for x in range(width):  # a loop: numba's slice assignment costs more
                        target[x] = source[x]
        elif k == CHANCE:
            # Per node, so flat offsets rather than views: a numba view costs a
            # reference count, more than the six multiplications of a small game.
            for node in range(start, group_start[g + 1]):
                source = node * n_hands
                for j in range(num_children[node]):
                    c = first_child[node] + j
                    b = board_index[c]
                    target = c * n_hands
                    for h in range(n_hands):
                        flat_reach[target + h] = flat_reach[source + h] * board_mask[b, h]


@njit(cache=True, nogil=True, inline="always")
def fold_values(opp_reach, hand_cards, amount, out, card_sum):
    """out[h] = amount * (opponent reach over hands sharing no card with h).
    ``card_sum`` is scratch space of C floats (one per deck card)."""
    _fold_values(opp_reach, 0, hand_cards, amount, out, card_sum, hand_cards.shape[0], hand_cards.shape[1])


@njit(cache=True, nogil=True, inline="always")
def _fold_values_one_card(flat_opp, base, amount, flat_out, n_hands):
    """:func:`_fold_values` for one-card hands: each hand holds a different card
    (padding hands share one past the deck, with zero reach), so a hand clashes
    only with itself. Same arithmetic as the per-card sums, without them."""
    total = 0.0
    for h in range(n_hands):
        total += flat_opp[base + h]
    for h in range(n_hands):
        flat_out[base + h] = amount * (total - flat_opp[base + h])


@njit(cache=True, nogil=True, inline="always")
def _fold_values(flat_opp, base, hand_cards, amount, flat_out, card_sum, n_hands, n_hole):
    """:func:`fold_values` on the run of ``n_hands`` entries at ``base`` of the flat
    ``flat_opp`` and ``flat_out`` (``hand_cards.shape`` is ``(n_hands, n_hole)``)."""
    card_sum[:] = 0.0
    total = 0.0
    for h in range(n_hands):
        r = flat_opp[base + h]
        total += r
        for j in range(n_hole):
            card_sum[hand_cards[h, j]] += r
    for h in range(n_hands):
        compatible = total
        for j in range(n_hole):
            compatible -= card_sum[hand_cards[h, j]]
        if n_hole == 2:
            compatible += flat_opp[base + h]  # the identical hand was subtracted twice
        flat_out[base + h] = amount * compatible


@njit(cache=True, nogil=True)
def showdown_values(
    opp_reach, hand_cards, order, n_valid, ranks, win, tie, lose, out, weaker, stronger, card_sum, total_cards
):
    """out[h] = win * W(h) + tie * T(h) + lose * L(h) for the valid hands of one
    board, where W, T, L are the opponent reach over compatible weaker, equal and
    stronger hands (hands that clash with the board get 0). ``weaker`` and
    ``stronger`` (H floats) and ``card_sum``, ``total_cards`` (C floats, one per
    deck card) are scratch space."""
    n_hands, n_hole = hand_cards.shape
    card_sum[:] = 0.0
    # Upward sweep: reach of strictly weaker hands, by groups of equal rank.
    running = 0.0
    i = 0
    while i < n_valid:
        j = i
        while j < n_valid and ranks[order[j]] == ranks[order[i]]:
            j += 1
        for t in range(i, j):
            h = order[t]
            s = running
            for c in range(n_hole):
                s -= card_sum[hand_cards[h, c]]
            weaker[h] = s
        for t in range(i, j):
            h = order[t]
            r = opp_reach[h]
            running += r
            for c in range(n_hole):
                card_sum[hand_cards[h, c]] += r
        i = j
    total = running
    total_cards[:] = card_sum
    # Downward sweep: reach of strictly stronger hands.
    card_sum[:] = 0.0
    running = 0.0
    i = n_valid - 1
    while i >= 0:
        j = i
        while j >= 0 and ranks[order[j]] == ranks[order[i]]:
            j -= 1
        for t in range(i, j, -1):
            h = order[t]
            s = running
            for c in range(n_hole):
                s -= card_sum[hand_cards[h, c]]
            stronger[h] = s
        for t in range(i, j, -1):
            h = order[t]
            r = opp_reach[h]
            running += r
            for c in range(n_hole):
                card_sum[hand_cards[h, c]] += r
        i = j
    out[:] = 0.0
    for t in range(n_valid):
        h = order[t]
        v = win * weaker[h] + lose * stronger[h]
        if tie != 0.0:
            compatible = total
            for c in range(n_hole):
                compatible -= total_cards[hand_cards[h, c]]
            if n_hole == 2:
                compatible += opp_reach[h]
            v += tie * (compatible - weaker[h] - stronger[h])
        out[h] = v


@njit(cache=True, nogil=True, inline="always")
def _showdown_sign(flat_opp, base, sign, b, win, flat_out, n_hands):
    """The zero-sum showdown on board ``b`` (lose = -win, tie = 0) by its H x H
    ``sign`` table (+1 win, -1 lose, 0 otherwise, ``[B, H, H]``), on the run of
    ``n_hands`` entries at ``base`` of the flat ``flat_opp`` and ``flat_out``:
    out = win * sign[b] @ opp.

    The table is read by opponent row, ``sign[b, o, h] = -sign[b, h, o]``, so the
    sum over ``o`` runs in the same order for every ``h`` at once: independent,
    vectorisable accumulators instead of one serial chain of additions per
    hand, with the same rounding as summing row ``h``."""
    for h in range(n_hands):
        flat_out[base + h] = 0.0
    for o in range(n_hands):
        r = flat_opp[base + o]
        for h in range(n_hands):
            flat_out[base + h] += sign[b, o, h] * r
    for h in range(n_hands):
        flat_out[base + h] *= -win


@njit(cache=True, nogil=True)
def _showdown_outcome(flat_opp, base, outcome, b, win, tie, lose, flat_out, n_hands):
    """:func:`_showdown_sign` for any payoff: each pair's payoff is looked up by its
    ``outcome`` code (lose 0, tie 1, win 2, none 3; code ``c`` of (o, h) is ``2 -
    c`` for (h, o)). Not inlined: a non-zero-sum solve is the rare case, and its
    table lookups slow the zero-sum path down when compiled into it."""
    table = np.array((win, tie, lose, 0.0))  # by the code of (o, h)
    for h in range(n_hands):
        flat_out[base + h] = 0.0
    for o in range(n_hands):
        r = flat_opp[base + o]
        for h in range(n_hands):
            flat_out[base + h] += table[outcome[b, o, h]] * r


@njit(cache=True, nogil=True, inline="always")
def _scratch(tree, n_hands):
    """Scratch arrays of :func:`_counterfactual_values`, allocated once per kernel
    call: two runs of the largest group's ``size * H`` entries, two of ``H`` and
    two of one entry per card."""
    group_start = tree.group_start
    largest = 1
    for g in range(group_start.shape[0] - 1):
        largest = max(largest, group_start[g + 1] - group_start[g])
    n_cards = tree.hand_cards.max() + 1
    return (
        np.empty(largest * n_hands),
        np.empty(largest * n_hands),
        np.zeros(n_hands),
        np.zeros(n_hands),
        np.zeros(n_cards),
        np.zeros(n_cards),
    )


@njit(cache=True, nogil=True, inline="always")
def _counterfactual_values(
    tree,
    payoff,
    position,
    mode,
    sigma,
    sigma_play,
    reach,
    values,
    regret,
    cumulative,
    average_weight,
    p_conf,
    restricted,
    n_hands,
    n_hole,
    scratch,
    may_update,
):
    """Bottom-up pass for ``position``: counterfactual values of every node into
    ``values[N, H]`` against the opponent's reach in ``reach`` (from
    :func:`_propagate_reach`; ``(n_hands, n_hole)`` is ``hand_cards.shape``;
    ``scratch`` is :func:`_scratch`'s).

    At the position's own decisions the value is ``sum_a sigma_play * child`` (or
    the maximum over actions in ``MODE_BEST_RESPONSE``); at the opponent's, the
    plain sum (its strategy is in the reach already). In the CFR modes the pass
    also adds ``average_weight * reach * sigma`` to ``cumulative`` (if the weight
    is positive) and ``(1 - p_conf) * (child - sum_a sigma * child)`` to
    ``regret`` (``p_conf`` applies only if ``position == restricted``; an empty
    ``p_conf`` means no restriction), clipping at zero in ``MODE_CFR_PLUS``, and
    then regret-matches the position's rows of ``sigma`` (as
    :func:`regret_matching`; each row is read only at its own node, so updating it
    there changes nothing else in the pass). All in one sweep of each group.
    ``may_update`` is a constant of the caller: False leaves the update code out
    of its compilation (:func:`root_values` never updates).
    """
    kind, player, first_child, action_child = tree.kind, tree.player, tree.first_child, tree.action_child
    num_children, decision_index, board_index = tree.num_children, tree.decision_index, tree.board_index
    chance_weight, group_start, board_mask = tree.chance_weight, tree.group_start, tree.board_mask
    hand_cards, hand_rank, rank_order, num_valid = tree.hand_cards, tree.hand_rank, tree.rank_order, tree.num_valid
    outcome, sign = tree.outcome, tree.sign
    image_start, image_perm, hand_perm = tree.image_start, tree.image_perm, tree.hand_perm
    n_nodes = values.shape[0]
    n_actions, n_decisions, _ = sigma.shape
    opp = 1 - position
    mixing = position == restricted and p_conf.shape[0] > 0
    dense = outcome.shape[0] > 0
    flat_values = values.reshape(n_nodes * n_hands)
    flat_sigma = sigma.reshape(n_actions, n_decisions * n_hands)
    flat_play = sigma_play.reshape(n_actions, n_decisions * n_hands)
    own_reach = reach[position].reshape(n_nodes * n_hands)
    opp_reach = reach[opp].reshape(n_nodes * n_hands)
    updating = may_update and (mode == MODE_CFR or mode == MODE_CFR_PLUS)
    if updating:
        flat_regret = regret.reshape(n_actions, n_decisions * n_hands)
        flat_cumulative = cumulative.reshape(n_actions, n_decisions * n_hands)
    else:
        flat_regret = np.zeros((0, 0))
        flat_cumulative = np.zeros((0, 0))
    flat_p_conf = p_conf.reshape(p_conf.size)
    positive, baseline, weaker, stronger, card_sum, total_cards = scratch
    for g in range(group_start.shape[0] - 2, -1, -1):
        start = group_start[g]
        end = group_start[g + 1]
        k = kind[start]
        if k == FOLD:
            for node in range(start, end):
                if n_hole == 1:
                    _fold_values_one_card(opp_reach, node * n_hands, payoff[node, position, 0], flat_values, n_hands)
                else:
                    _fold_values(
                        opp_reach, node * n_hands, hand_cards, payoff[node, position, 0], flat_values, card_sum, n_hands, n_hole
                    )
        elif k == SHOWDOWN:
            for node in range(start, end):
                b = board_index[node]
                win, tie, lose = payoff[node, position, 0], payoff[node, position, 1], payoff[node, position, 2]
                if dense and tie == 0.0 and lose == -win:
                    _showdown_sign(opp_reach, node * n_hands, sign, b, win, flat_values, n_hands)
                elif dense:
                    # np.int64: the fixed width's literal would compile it twice.
                    _showdown_outcome(
                        opp_reach, node * n_hands, outcome, b, win, tie, lose, flat_values, np.int64(n_hands)
                    )
                else:
                    showdown_values(
                        reach[opp, node],
                        hand_cards,
                        rank_order[b],
                        np.int64(num_valid[b]),  # as PCS passes it: one specialisation
                        hand_rank[b],
                        win,
                        tie,
                        lose,
                        values[node],
                        weaker,
                        stronger,
                        card_sum,
                        total_cards,
                    )
        elif k == CHANCE:
            # Each child also stands for its suit-isomorphic images: the value of
            # hand h on the image board under permutation p is the child's value
            # of the hand p maps onto h (identity only without isomorphism).
            for node in range(start, end):
                w = chance_weight[node]
                out = node * n_hands
                for h in range(n_hands):
                    flat_values[out + h] = 0.0
                for j in range(num_children[node]):
                    c = first_child[node] + j
                    b = board_index[c]
                    child = c * n_hands
                    for i in range(image_start[c], image_start[c + 1]):
                        perm = image_perm[i]
                        if perm == 0:
                            for h in range(n_hands):
                                flat_values[out + h] += w * board_mask[b, h] * flat_values[child + h]
                        else:
                            for h in range(n_hands):
                                q = hand_perm[perm, h]
                                flat_values[out + h] += w * board_mask[b, q] * flat_values[child + q]
        else:
            width = (end - start) * n_hands
            out = flat_values[start * n_hands : end * n_hands]
            n = num_children[start]
            children = action_child[start]
            row = decision_index[start] * n_hands
            # The first action's term starts each sum (0 + y = y exactly), and
            # loops, not slice assignments, which cost more in numba.
            first = flat_values[children[0] * n_hands : children[0] * n_hands + width]
            if player[start] != position:
                for x in range(width):
                    out[x] = first[x]
                for a in range(1, n):
                    child = flat_values[children[a] * n_hands : children[a] * n_hands + width]
                    for x in range(width):
                        out[x] += child[x]
            elif mode == MODE_BEST_RESPONSE:
                for x in range(width):
                    out[x] = first[x]
                for a in range(1, n):
                    child = flat_values[children[a] * n_hands : children[a] * n_hands + width]
                    for x in range(width):
                        out[x] = max(out[x], child[x])
            else:
                play = flat_play[0, row : row + width]
                for x in range(width):
                    out[x] = play[x] * first[x]
                for a in range(1, n):
                    child = flat_values[children[a] * n_hands : children[a] * n_hands + width]
                    play = flat_play[a, row : row + width]
                    for x in range(width):
                        out[x] += play[x] * child[x]
                if updating:
                    _update_group(
                        flat_values,
                        flat_sigma,
                        flat_regret,
                        flat_cumulative,
                        own_reach[start * n_hands : end * n_hands],
                        flat_p_conf,
                        mixing,
                        mode == MODE_CFR_PLUS,
                        average_weight,
                        out,
                        children,
                        n_hands,
                        row,
                        width,
                        n,
                        positive[:width],
                        baseline[:width],
                    )


@njit(cache=True, nogil=True, inline="always")
def _update_group(
    values,
    sigma,
    regret,
    cumulative,
    own_reach,
    p_conf,
    mixing,
    plus,
    weight,
    out,
    children,
    n_hands,
    row,
    width,
    n,
    positive,
    baseline,
):
    """The traverser's updates at one decision group in a CFR pass, whose values
    ``out`` are already summed: cumulative strategy, regrets, then the
    regret-matched strategy into ``sigma`` (the arithmetic of separate passes,
    each loop over the group's whole run of ``width`` entries). ``values``,
    ``sigma``, ``regret``, ``cumulative`` and ``p_conf`` are the flat arrays
    (child ``a``'s run at ``children[a] * n_hands``, strategy rows at ``row``); ``own_reach``,
    ``positive`` and ``baseline`` are runs of ``width`` (the last two scratch)."""
    if weight > 0.0:
        for a in range(n):
            cumulative_a = cumulative[a, row : row + width]
            sigma_a = sigma[a, row : row + width]
            for x in range(width):
                cumulative_a[x] += weight * own_reach[x] * sigma_a[x]
    keep = p_conf[row : row + width]  # empty unless mixing
    if mixing:
        for x in range(width):
            baseline[x] = 0.0
        for a in range(n):
            child = values[children[a] * n_hands : children[a] * n_hands + width]
            sigma_a = sigma[a, row : row + width]
            for x in range(width):
                baseline[x] += sigma_a[x] * child[x]
    for x in range(width):
        positive[x] = 0.0
    for a in range(n):
        child = values[children[a] * n_hands : children[a] * n_hands + width]
        regret_a = regret[a, row : row + width]
        for x in range(width):
            if mixing:
                delta = (1.0 - keep[x]) * (child[x] - baseline[x])
            else:
                delta = child[x] - out[x]
            r = regret_a[x] + delta
            if plus and r < 0.0:
                r = 0.0
            regret_a[x] = r
            positive[x] += max(r, 0.0)
    for a in range(n):
        regret_a = regret[a, row : row + width]
        sigma_a = sigma[a, row : row + width]
        for x in range(width):
            sigma_a[x] = max(regret_a[x], 0.0) / positive[x] if positive[x] > 0.0 else 1.0 / n


@njit(cache=True, nogil=True)
def root_values(tree, payoff, strategy, mode, root_reach, reach, values, out):
    """Both positions' root values against ``strategy`` (``[A, D, H]``) into
    ``out[2, H]``: best-response values (``MODE_BEST_RESPONSE``) or the profile's
    (``MODE_VALUE``). ``reach`` and ``values`` are scratch of the usual shapes."""
    if reach.shape[2] == FIXED_HANDS and tree.hand_cards.shape[1] == 1:
        _root_values(tree, payoff, strategy, mode, root_reach, reach, values, out, FIXED_HANDS, 1)
    else:
        _root_values(tree, payoff, strategy, mode, root_reach, reach, values, out, reach.shape[2], tree.hand_cards.shape[1])


@njit(cache=True, nogil=True, inline="always")
def _root_values(tree, payoff, strategy, mode, root_reach, reach, values, out, n_hands, n_hole):
    """:func:`root_values` with ``(n_hands, n_hole)`` the shape of the tree's hand cards."""
    reach[:, 0, :] = root_reach
    _propagate_reach(tree, strategy, reach, -1, n_hands)
    scratch = _scratch(tree, n_hands)
    empty = np.zeros((0, 0, 0))
    for position in range(2):
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
            scratch,
            False,
        )
        out[position, :] = values[0]


@njit(cache=True, nogil=True)
def average_best_response(tree, payoff, cumulative, num_actions, root_reach, average, reach, values, out):
    """:func:`normalise` ``cumulative`` into ``average``, then the best-response
    :func:`root_values` against it into ``out[2, H]``."""
    normalise(cumulative, num_actions, average)
    # np.int64: a bare constant would reach root_values as Literal[int](1), a
    # second specialisation of it (as long to compile) beside the int64 one
    # that Python callers use.
    root_values(tree, payoff, average, np.int64(MODE_BEST_RESPONSE), root_reach, reach, values, out)


@njit(cache=True, nogil=True)
def run_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state):
    """Run CFR iterations ``first_iteration .. first_iteration + iterations - 1``
    (numbered from 1) in place on ``regret``, ``cumulative`` and ``sigma``
    (``[A, D, H]``); returns the number of the next iteration. ``state`` is the
    tuple ``(plus, alternating, linear, delay, regret, cumulative, sigma,
    sigma_play, fixed, p_conf, restricted, reach, values)``.

    Each iteration, for each position in turn (``alternating``) or both against
    the same profile: (1) mix the restricted position's fixed model in, (2) reach
    top-down, (3) values bottom-up with regret and average updates (average
    weight ``max(t - delay, 0)`` if ``linear`` else 1 from ``t > delay`` on),
    (4) regret-match the updated position (inside the same pass, see
    :func:`_counterfactual_values`). ``sigma`` must hold the current
    strategy on entry (uniform at the start); ``sigma_play`` is ``sigma`` itself
    when nobody is restricted.
    """
    gadget = (np.int64(-1), np.zeros(0), np.zeros(0), np.zeros((2, 0)))  # no gadget
    return _run_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget)


@njit(cache=True, nogil=True, inline="always")
def _run_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget):
    """:func:`run_iterations` with the re-solving gadget's slot (see :func:`_iterate`)."""
    reach = state[11]
    # The fixed width goes in as a literal, so the inlined body compiles with
    # constant per-hand trip counts.
    if reach.shape[2] == FIXED_HANDS and tree.hand_cards.shape[1] == 1:
        return _iterate(
            tree, payoff, decision_player, root_reach, first_iteration, iterations, state, FIXED_HANDS, 1, gadget
        )
    return _iterate(
        tree,
        payoff,
        decision_player,
        root_reach,
        first_iteration,
        iterations,
        state,
        reach.shape[2],
        tree.hand_cards.shape[1],
        gadget,
    )


@njit(cache=True, nogil=True, inline="always")
def _iterate(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, n_hands, n_hole, gadget):
    """:func:`run_iterations` with ``(n_hands, n_hole)`` the shape of the tree's
    hand cards, and the re-solving gadget's slot (Burch thesis §5.2.5; used by
    :mod:`strategies.resolve._kernels`): ``gadget`` is ``(opponent, constraint
    float64[H], mask float64[H], regret float64[2, H])``, and after each pass of
    position ``opponent`` its root reach ``root_reach[opponent]`` (the follow
    probabilities) is updated in place by :func:`_update_gadget`. Opponent -1:
    no gadget (:func:`run_iterations`). The gadget is part of the opponent's
    strategy, so it changes exactly when the opponent's strategy does and the
    "propagate only the position that changed" shortcut below stays valid."""
    plus, alternating, linear, delay, regret, cumulative, sigma, sigma_play, fixed, p_conf, restricted, reach, values = (
        state
    )
    opponent, constraint, mask, gadget_regret = gadget
    mode = MODE_CFR_PLUS if plus else MODE_CFR
    mixing = p_conf.shape[0] > 0
    scratch = _scratch(tree, n_hands)
    for t in range(first_iteration, first_iteration + iterations):
        if linear:
            weight = float(max(t - delay, 0))
        else:
            weight = 1.0 if t > delay else 0.0
        for step in range(2 if alternating else 1):
            if mixing:
                mix_fixed(sigma, fixed, p_conf, decision_player, restricted, sigma_play)
            reach[:, 0, :] = root_reach
            # With alternating updates only the last updated position's strategy
            # changed since the previous pass (except on the very first pass).
            fresh = t == first_iteration and step == 0
            only = -1 if fresh or not alternating or mixing else 1 - step
            _propagate_reach(tree, sigma_play, reach, only, n_hands)
            for p in range(2):
                if alternating and p != step:
                    continue
                _counterfactual_values(
                    tree,
                    payoff,
                    p,
                    mode,
                    sigma,
                    sigma_play,
                    reach,
                    values,
                    regret,
                    cumulative,
                    weight,
                    p_conf,
                    restricted,
                    n_hands,
                    n_hole,
                    scratch,
                    True,
                )
                if p == opponent:
                    _update_gadget(values[0], constraint, mask, gadget_regret, root_reach[opponent], plus, n_hands)
    return first_iteration + iterations


@njit(cache=True, nogil=True, inline="always")
def _update_gadget(root_values, constraint, mask, regret, follow, plus, n_hands):
    """Regret matching(+) over the gadget's {follow, terminate} for every
    opponent hand: the follow action is worth the hand's root counterfactual
    value, terminate its constraint; the new follow probability goes into
    ``follow`` (0 for hands the opponent cannot hold)."""
    for h in range(n_hands):
        if mask[h] == 0.0:
            follow[h] = 0.0
            continue
        p = follow[h]
        v_follow = root_values[h]
        v_terminate = constraint[h]
        mixed = p * v_follow + (1.0 - p) * v_terminate
        r0 = regret[0, h] + v_follow - mixed
        r1 = regret[1, h] + v_terminate - mixed
        if plus:
            r0 = max(r0, 0.0)
            r1 = max(r1, 0.0)
        regret[0, h] = r0
        regret[1, h] = r1
        positive = max(r0, 0.0) + max(r1, 0.0)
        follow[h] = max(r0, 0.0) / positive if positive > 0.0 else 0.5


@njit(cache=True, nogil=True)
def run_to_target(tree, payoff, decision_player, root_reach, first_iteration, last_iteration, check_every, target, state, check):
    """:func:`run_iterations` from ``first_iteration`` on, measuring the exact
    exploitability of the average strategy (chips per hand) every
    ``check_every`` iterations, until it is at most ``target`` or
    ``last_iteration`` is done. Returns ``(next iteration, exploitability)``.

    ``state`` is :func:`run_iterations`' tuple; ``check`` is ``(real_payoff,
    num_actions, full_reach, pairs, average, br_reach, root_out)``: the real
    game's payoff and the ranges to measure in, ``pairs`` their root pair mass,
    and buffers. No check is made while the average is still empty (iterations
    up to ``delay`` carry no weight); one check always follows the last
    iteration run. One kernel call for the whole solve, so small games pay no
    Python round trip per check."""
    delay = state[3]
    real_payoff, num_actions, full_reach, pairs, average, br_reach, root_out = check
    values = state[12]
    t = first_iteration
    first_check = min(max(first_iteration, delay + 1) + check_every - 1, last_iteration)
    while True:
        stop = min(first_check if t <= first_check else t + check_every - 1, last_iteration)
        if stop >= t:
            t = run_iterations(tree, payoff, decision_player, root_reach, t, stop - t + 1, state)
        average_best_response(tree, real_payoff, state[5], num_actions, full_reach, average, br_reach, values, root_out)
        total = 0.0
        for position in range(2):
            for h in range(root_out.shape[1]):
                total += full_reach[position, h] * root_out[position, h]
        exploitability = total / pairs / 2.0
        if exploitability <= target or t > last_iteration:
            return t, exploitability
