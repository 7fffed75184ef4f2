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
from strategies.cfr.tree.betting_graph import TERMINAL

compile_notice.install()

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


#: Deepest chain of traverser decisions a traversal keeps open (3p limit hold'em: about 40).
MAX_DEPTH = 256


@njit(cache=True, nogil=True, inline="always")
def _policy(regret: np.ndarray, row: int, n: int) -> tuple[float, float, float]:
    """Regret matching at a row of ``n`` actions (the third 0 when n is 2)."""
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
    return s0, s1, s2


@njit(cache=True, nogil=True)
def _traverse(root, traverser, updater, code, bucket, graph, regret, cumulative, rng, frames, counters, floats):  # type: ignore[no-untyped-def]
    """One external-sampling traversal from the root, depth first with an
    explicit stack (numba's cache breaks self-recursive kernels): the
    traverser's actions all explored in order (regrets updated when the last
    child returns), the others' sampled from their current strategies;
    ``updater``'s strategies are added to the average where it acts. ``graph``
    is (kind, player, round, num_actions, child, offset, value, base, width).
    Open traverser decisions are ``frames[d] = (node, row, actions, next
    child)``, ``counters[d]`` their round counters and ``floats[d] = (sigma
    x 3, child values x 3)``. Returns the traverser's sampled value (chips)."""
    kind, player, round_, num_actions, child, offset, value, base, width = graph
    s = root
    c0 = c1 = c2 = c3 = 0
    depth = 0
    while True:
        # down: sample the others' actions until a terminal or a traverser decision
        while kind[s] != TERMINAL:
            p = player[s]
            r = round_[s]
            index = c0 if r == 0 else c1 if r == 1 else c2 if r == 2 else c3
            row = base[r] + index * width[r] + bucket[p, r]
            n = num_actions[s]
            s0, s1, s2 = _policy(regret, row, n)
            if p == traverser:
                frames[depth, 0] = s
                frames[depth, 1] = row
                frames[depth, 2] = n
                frames[depth, 3] = 1
                counters[depth, 0] = c0
                counters[depth, 1] = c1
                counters[depth, 2] = c2
                counters[depth, 3] = c3
                floats[depth, 0] = s0
                floats[depth, 1] = s1
                floats[depth, 2] = s2
                floats[depth, 3] = floats[depth, 4] = floats[depth, 5] = 0.0
                depth += 1
                a = 0
            else:
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
            c0 += offset[s, a, 0]
            c1 += offset[s, a, 1]
            c2 += offset[s, a, 2]
            c3 += offset[s, a, 3]
            s = child[s, a]
        result = value[s, code, traverser]
        # up: hand the value to the open decision; its next child, or close it
        while depth > 0:
            d = depth - 1
            done = frames[d, 3]
            floats[d, 2 + done] = result
            if done < frames[d, 2]:
                frames[d, 3] = done + 1
                node = frames[d, 0]
                c0 = counters[d, 0] + offset[node, done, 0]
                c1 = counters[d, 1] + offset[node, done, 1]
                c2 = counters[d, 2] + offset[node, done, 2]
                c3 = counters[d, 3] + offset[node, done, 3]
                s = child[node, done]
                break
            row = frames[d, 1]
            v0, v1, v2 = floats[d, 3], floats[d, 4], floats[d, 5]
            total = floats[d, 0] * v0 + floats[d, 1] * v1 + floats[d, 2] * v2
            regret[row, 0] += v0 - total
            regret[row, 1] += v1 - total
            if frames[d, 2] > 2:
                regret[row, 2] += v2 - total
            result = total
            depth -= 1
        if depth == 0:
            return result


@njit(cache=True, nogil=True)
def iterate(seed, start, buckets, codes, root, graph, regret, cumulative):  # type: ignore[no-untyped-def]
    """Iterations ``start .. start + len(codes) - 1`` on their deals' buckets and
    showdown codes: per iteration one traversal per position (alternating
    updates), the average strategy of position ``(traverser + 1) % 3`` updated on
    each (OpenSpiel's simple averaging for external sampling)."""
    rng = np.empty(1, dtype=np.uint64)
    frames = np.empty((MAX_DEPTH, 4), dtype=np.int64)
    counters = np.empty((MAX_DEPTH, 4), dtype=np.int64)
    floats = np.empty((MAX_DEPTH, 6), dtype=np.float64)
    for i in range(codes.shape[0]):
        rng[0] = _stream(seed, start + i, _PLAY_STREAM)
        for traverser in range(3):
            _traverse(root, traverser, (traverser + 1) % 3, codes[i], buckets[i], graph, regret, cumulative, rng,
                      frames, counters, floats)  # fmt: skip


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
