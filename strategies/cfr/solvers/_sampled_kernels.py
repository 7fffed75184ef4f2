"""Numba kernels of external-sampling MCCFR for three-player limit games
(:mod:`strategies.cfr.solvers.sampled_multiplayer`).

The betting tree travels as a *signature graph*: one row per distinct betting
situation (round, spent chips, folds, raises this round, who acts), so the
14-million-node betting tree of 3-player limit hold'em is a few thousand rows.
A tree node is a row plus its running decision counters, one per round: the
node's own index among its round's decisions (in preorder) is the counter of
its round, and ``offset[s, a]`` moves the counters from a node to its child
``a``. Information sets are rows of the regret and average tables:
``base[r] + index * buckets[r] + bucket``.

Randomness is a counter-based stream (splitmix64): iteration ``t`` of seed
``seed`` always draws the same deal and the same opponent actions, however the
iterations are split into batches, so a resumed solve gives the same bytes as
an uninterrupted one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from poker.evaluate import card_bit, rank_cardset
from strategies.cfr import compile_notice
from strategies.cfr.abstraction import _kernels as _ak

compile_notice.install()

DECISION, TERMINAL = 0, 1
#: Stream tags: deals and action draws of one iteration use independent streams.
_DEAL_STREAM = np.uint64(0x5DEECE66D)
_PLAY_STREAM = np.uint64(0xB5297A4D)


@njit(cache=True, nogil=True, inline="always")
def _mix(x: np.uint64) -> np.uint64:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _stream(seed: int, iteration: int, tag: np.uint64) -> np.uint64:
    """The first state of iteration ``iteration``'s stream ``tag``."""
    return _mix(_mix(np.uint64(seed) ^ tag) + np.uint64(iteration) * np.uint64(0x9E3779B97F4A7C15))


@njit(cache=True, nogil=True, inline="always")
def _next(state: np.ndarray) -> np.uint64:
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    return _mix(state[0])


@njit(cache=True, nogil=True, inline="always")
def _uniform(state: np.ndarray) -> float:
    return float(_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def deal_batch(seed: int, start: int, deck: np.ndarray, out: np.ndarray) -> None:
    """``out[i]``: the cards of iteration ``start + i`` (a partial Fisher-Yates
    shuffle of ``deck``): every position's hole cards, then the full board."""
    n = deck.shape[0]
    cards = np.empty(n, dtype=np.int64)
    state = np.empty(1, dtype=np.uint64)
    for i in range(out.shape[0]):
        state[0] = _stream(seed, start + i, _DEAL_STREAM)
        cards[:] = deck
        for j in range(out.shape[1]):
            k = j + np.int64(_next(state) % np.uint64(n - j))
            cards[j], cards[k] = cards[k], cards[j]
            out[i, j] = cards[j]


@njit(cache=True, nogil=True, inline="always")
def _hand_of(hand_sets: np.ndarray, cardset: int) -> int:
    for h in range(hand_sets.shape[0]):
        if hand_sets[h] == cardset:
            return h
    return -1


@njit(cache=True, nogil=True)
def showdown_codes(deals: np.ndarray, hole: int, codes: np.ndarray) -> None:
    """The weak ordering of the three hands on each deal's full board as
    ``9 * o0 + 3 * o1 + o2``, ``o_i`` = the distinct ranks among the others below
    position i's (the rank list :meth:`poker.state.State.values` is asked with)."""
    ranks = np.empty(3, dtype=np.int64)
    for i in range(deals.shape[0]):
        board = np.int64(0)
        for j in range(3 * hole, deals.shape[1]):
            board |= card_bit(deals[i, j])
        for p in range(3):
            own = board
            for j in range(hole):
                own |= card_bit(deals[i, p * hole + j])
            ranks[p] = rank_cardset(own)
        code = 0
        for p in range(3):
            a, b = ranks[(p + 1) % 3], ranks[(p + 2) % 3]
            below = (a < ranks[p]) + (b < ranks[p]) - ((a == b) and (a < ranks[p]))
            code = code * 3 + below
        codes[i] = code


@njit(cache=True, nogil=True)
def abstract_buckets(
    deals: np.ndarray, hole: int, data: tuple, hand_sets: np.ndarray, hand_cards: np.ndarray, out: np.ndarray
) -> None:
    """``out[i, p, r]``: position p's round-r bucket on deal i, from a card
    abstraction's look-up ``data`` (:func:`strategies.cfr.abstraction.bucketing.kernel_data`;
    the river's strength counts computed once per deal, 30-40 us)."""
    num_hands = hand_sets.shape[0]
    rounds = out.shape[2]
    counts = np.empty((1, num_hands), dtype=np.int64)
    every = np.empty((rounds, num_hands), dtype=np.int64)
    for i in range(deals.shape[0]):
        board = deals[i, 3 * hole :].copy()
        _ak.board_strengths(board.reshape(1, -1), hand_sets, hand_cards, counts)
        _ak.all_round_buckets(board, data, counts[0], every)
        for p in range(3):
            own = np.int64(0)
            for j in range(hole):
                own |= card_bit(deals[i, p * hole + j])
            h = _hand_of(hand_sets, own)
            for r in range(rounds):
                out[i, p, r] = every[r, h]


@njit(cache=True, nogil=True)
def lossless_buckets(
    deals: np.ndarray,
    hole: int,
    hand_sets: np.ndarray,
    position: np.ndarray,
    n: int,
    total_cards: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[i, p, r]``: the lossless bucket of (hand, board through round r):
    ``hand * C(n, b_r) + colex rank of the board's deck positions`` (boards of at
    most two cards: 3p Kuhn and Leduc); ``n`` cards in the deck, ``position``
    each card's place in it."""
    for i in range(deals.shape[0]):
        for p in range(3):
            own = np.int64(0)
            for j in range(hole):
                own |= card_bit(deals[i, p * hole + j])
            h = _hand_of(hand_sets, own)
            for r in range(out.shape[2]):
                b = total_cards[r]
                code = 0
                boards = 1
                if b == 1:
                    code = position[deals[i, 3 * hole]]
                    boards = n
                elif b == 2:
                    x, y = position[deals[i, 3 * hole]], position[deals[i, 3 * hole + 1]]
                    if x > y:
                        x, y = y, x
                    code = y * (y - 1) // 2 + x
                    boards = n * (n - 1) // 2
                out[i, p, r] = h * boards + code


# Not cached: numba's cache of a self-recursive function loads broken code (a
# segfault on the second process, numba 0.6x); compiling both takes a few seconds.
@njit(nogil=True)
def _traverse(s, i0, i1, i2, i3, traverser, updater, code, bucket, graph, regret, cumulative, rng):  # type: ignore[no-untyped-def]
    """One external-sampling traversal below node (``s``, counters ``i0..i3``):
    the traverser's actions all explored (regrets updated), the others' sampled
    from their current strategies; ``updater``'s strategies are added to the
    average where it acts. ``graph`` is (kind, player, round, num_actions,
    child, offset, value, base, width). Returns the traverser's sampled value
    (chips)."""
    kind, player, round_, num_actions, child, offset, value, base, width = graph
    if kind[s] == TERMINAL:
        return value[s, code, traverser]
    p = player[s]
    r = round_[s]
    index = i0 if r == 0 else i1 if r == 1 else i2 if r == 2 else i3
    row = base[r] + index * width[r] + bucket[p, r]
    n = num_actions[s]
    positive = 0.0
    for a in range(n):
        if regret[row, a] > 0.0:
            positive += regret[row, a]
    s0 = s1 = s2 = 1.0 / n
    if positive > 0.0:
        s0 = max(regret[row, 0], 0.0) / positive
        s1 = max(regret[row, 1], 0.0) / positive
        s2 = max(regret[row, 2], 0.0) / positive if n > 2 else 0.0
    if n < 3:
        s2 = 0.0
    if p == traverser:
        v0 = v1 = v2 = 0.0
        for a in range(n):
            o = offset[s, a]
            v = _traverse(child[s, a], i0 + o[0], i1 + o[1], i2 + o[2], i3 + o[3], traverser, updater, code, bucket,
                          graph, regret, cumulative, rng)  # fmt: skip
            if a == 0:
                v0 = v
            elif a == 1:
                v1 = v
            else:
                v2 = v
        total = s0 * v0 + s1 * v1 + s2 * v2
        regret[row, 0] += v0 - total
        regret[row, 1] += v1 - total
        if n > 2:
            regret[row, 2] += v2 - total
        return total
    if p == updater:
        cumulative[row, 0] += s0
        cumulative[row, 1] += s1
        cumulative[row, 2] += s2
    draw = _uniform(rng)
    a = n - 1
    if draw < s0:
        a = 0
    elif draw < s0 + s1:
        a = 1
    o = offset[s, a]
    return _traverse(child[s, a], i0 + o[0], i1 + o[1], i2 + o[2], i3 + o[3], traverser, updater, code, bucket,
                     graph, regret, cumulative, rng)  # fmt: skip


@njit(nogil=True)
def iterate(seed, start, buckets, codes, root, graph, regret, cumulative):  # type: ignore[no-untyped-def]
    """Iterations ``start .. start + len(codes) - 1`` on their deals' buckets and
    showdown codes: per iteration one traversal per position (alternating
    updates), the average strategy of position ``(traverser + 1) % 3`` updated on
    each (OpenSpiel's simple averaging for external sampling)."""
    rng = np.empty(1, dtype=np.uint64)
    for i in range(codes.shape[0]):
        rng[0] = _stream(seed, start + i, _PLAY_STREAM)
        for traverser in range(3):
            _traverse(root, 0, 0, 0, 0, traverser, (traverser + 1) % 3, codes[i], buckets[i], graph, regret,
                      cumulative, rng)  # fmt: skip


@njit(cache=True, nogil=True)
def normalise(cumulative: np.ndarray, num_actions_of_row: np.ndarray, out: np.ndarray) -> None:
    """The average strategy of every row: cumulative / its sum, uniform where empty."""
    for row in range(cumulative.shape[0]):
        n = num_actions_of_row[row]
        total = 0.0
        for a in range(n):
            total += cumulative[row, a]
        for a in range(out.shape[1]):
            if a >= n:
                out[row, a] = 0.0
            elif total > 0.0:
                out[row, a] = cumulative[row, a] / total
            else:
                out[row, a] = 1.0 / n


@njit(cache=True, nogil=True)
def row_actions(
    root: int,
    kind: np.ndarray,
    round_: np.ndarray,
    num_actions: np.ndarray,
    child: np.ndarray,
    offset: np.ndarray,
    base: np.ndarray,
    width: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[row]``: the number of actions of every table row (an explicit walk of
    the whole betting tree, iteratively: 14 million nodes take about a second)."""
    stack_s = np.empty(4096, dtype=np.int64)
    stack_i = np.empty((4096, 4), dtype=np.int64)
    top = 0
    stack_s[0] = root
    stack_i[0, :] = 0
    top = 1
    while top > 0:
        top -= 1
        s = stack_s[top]
        if kind[s] == TERMINAL:
            continue
        r = round_[s]
        first = base[r] + stack_i[top, r] * width[r]
        for b in range(width[r]):
            out[first + b] = num_actions[s]
        counters = stack_i[top].copy()
        for a in range(num_actions[s]):
            stack_s[top] = child[s, a]
            for q in range(4):
                stack_i[top, q] = counters[q] + offset[s, a, q]
            top += 1
