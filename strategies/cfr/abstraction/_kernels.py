"""Numba kernels behind the card abstraction (:mod:`strategies.cfr.abstraction.card_tables`,
:mod:`strategies.cfr.abstraction.hand_features`, :mod:`strategies.cfr.abstraction.bucketing` and
:mod:`strategies.cfr.abstraction.card_abstraction`): hand strength, canonical boards, percentile
thresholds and bucket look-ups.

Everything is ``@njit(cache=True, nogil=True)`` over arrays and scalars, so the
callers can run chunks of boards on several threads. Two card encodings meet
here: the evaluator's *cardset* (bit ``16 * suit + rank``, from
:func:`poker.evaluate.card_bit`), which :func:`rank_cardset` ranks, and the
*board mask* (bit ``card id``), whose integer value orders canonical boards.

Hand strength is kept as an exact integer, the *strength count*
``n = 2 * wins + ties`` of a hand against every opponent hand that avoids it and
the board (HS = n / (2 * opponents)). Sums of n and n^2 over run-outs are exact
too, so suit-isomorphic (hand, board) pairs get identical values, never values a
rounding apart, and a threshold splits them the same way.

The look-up data travel as one tuple, ``data`` (built by
:func:`strategies.cfr.abstraction.bucketing.kernel_data`)::

    (perm_maps int64[P, 52]      card -> its image under suit permutation p
     hand_map int32[P, H]        hand h -> the hand index of its image under p
     hand_sets int64[H]          cardset of each private hand
     hand_cards int64[H, h]      card ids of each private hand
     total_cards int64[R + 1]    board cards dealt by the end of each round
     num_buckets int64[R + 1]    buckets per round (k_r)
     perfect int64               1: perfect recall (nested), 0: imperfect
     key_start int64[R + 1]      round q's canonical boards are rows
                                 key_start[q]..key_start[q + 1] of ``keys``/``table``
     keys int64[K]               board mask of each canonical board, ascending per round
     table uint[K, H]            index of the hand's feature among ``merged`` (see below)
     merged_start int64[R + 1]   round q's merged thresholds are merged[merged_start[q]
                                 : merged_start[q + 1]] (m_q of them)
     merged int64[M]             the distinct thresholds of all groups of a round, ascending
     local_start int64[max(R, 1)]  round q's local-bucket table starts at local[local_start[q]]
     local int32[L]              local[start + g * (m_q + 1) + i]: bucket of a value with
                                 i merged thresholds at or below it, in group g
     final_thresholds int64[G, max(k_R - 1, 1)]  thresholds of the last round per group)

with R the last round and G its number of groups (bucket sequences of rounds
0..R-1 with perfect recall, else 1). Rounds before the last look their feature
up in ``table`` (one row per canonical board); the last round computes its
strength counts on the fly (one sort of the hands, 30-40 microseconds on a
hold'em river).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from poker.evaluate import card_bit, rank_cardset
from strategies.cfr import compile_notice

compile_notice.install()  # one line on stderr when these kernels compile (a cold numba cache)

#: Threshold of a bucket that no value reaches (its group is empty or all ties below it).
NEVER = np.iinfo(np.int64).max
#: Strength counts sort in two 7-bit radix passes, so rank values must stay below 2^14.
RANK_BITS = 14


_HAND_BITS = 11  # sort keys are rank << 11 | hand: at most 2048 private hands


@njit(cache=True, nogil=True, inline="always")
def _radix_pass(source: np.ndarray, target: np.ndarray, count: int, shift: int) -> None:
    """Stable counting sort of ``source[:count]`` into ``target`` by bits ``shift..shift + 6``."""
    starts = np.zeros(129, dtype=np.int64)
    for i in range(count):
        starts[((source[i] >> shift) & 127) + 1] += 1
    for b in range(128):
        starts[b + 1] += starts[b]
    for i in range(count):
        key = (source[i] >> shift) & 127
        target[starts[key]] = source[i]
        starts[key] += 1


@njit(cache=True, nogil=True)
def strength_counts(
    hand_sets: np.ndarray,
    hand_cards: np.ndarray,
    board_set: int,
    out: np.ndarray,
    order: np.ndarray,
    scratch: np.ndarray,
    per_card: np.ndarray,
) -> int:
    """``out[h] = 2 * wins + ties`` of every hand h against the opponent hands that
    share no card with h or the board, ranked with the board; -1 for hands that
    clash with the board. Returns the number of hands that fit the board.

    One radix sort by rank and one sweep over groups of equal rank (Johanson
    thesis ch2 §2.4, O(n) terminal evaluation): the weaker hands that avoid h are all weaker
    hands minus those holding one of h's cards (per-card counts; no weaker hand
    holds both, as that would be h). Ties are the group's size less its hands
    holding h's cards, plus h itself once for two-card hands, which the per-card
    counts removed twice. ``order``/``scratch`` are int64[H] and ``per_card``
    int64[2, 52] work space; H is at most 2048.
    """
    num_hands = hand_sets.shape[0]
    num_hole = hand_cards.shape[1]
    valid = 0
    for h in range(num_hands):
        if hand_sets[h] & board_set:
            out[h] = -1
        else:
            scratch[valid] = (rank_cardset(hand_sets[h] | board_set) << _HAND_BITS) | h
            valid += 1
    # Two stable passes on 7 bits of the rank each (ranks are below 2^14).
    _radix_pass(scratch, order, valid, _HAND_BITS)
    _radix_pass(order, scratch, valid, _HAND_BITS + 7)
    below = per_card[0]
    equal = per_card[1]
    below[:] = 0
    equal[:] = 0
    below_total = 0
    start = 0
    while start < valid:
        rank = scratch[start] >> _HAND_BITS
        stop = start + 1
        while stop < valid and scratch[stop] >> _HAND_BITS == rank:
            stop += 1
        size = stop - start
        if size == 1:
            h = scratch[start] & (2**_HAND_BITS - 1)
            wins = below_total
            for j in range(num_hole):
                card = hand_cards[h, j]
                wins -= below[card]
                below[card] += 1
            out[h] = 2 * wins
        else:
            for i in range(start, stop):
                h = scratch[i] & (2**_HAND_BITS - 1)
                for j in range(num_hole):
                    equal[hand_cards[h, j]] += 1
            for i in range(start, stop):
                h = scratch[i] & (2**_HAND_BITS - 1)
                wins = below_total
                ties = size + num_hole - 1
                for j in range(num_hole):
                    wins -= below[hand_cards[h, j]]
                    ties -= equal[hand_cards[h, j]]
                out[h] = 2 * wins + ties
            for i in range(start, stop):
                h = scratch[i] & (2**_HAND_BITS - 1)
                for j in range(num_hole):
                    card = hand_cards[h, j]
                    below[card] += 1
                    equal[card] = 0
        below_total += size
        start = stop
    return valid


@njit(cache=True, nogil=True)
def cardset_of(cards: np.ndarray) -> int:
    out = np.int64(0)
    for c in cards:
        out |= card_bit(c)
    return out


@njit(cache=True, nogil=True)
def board_strengths(boards: np.ndarray, hand_sets: np.ndarray, hand_cards: np.ndarray, out: np.ndarray) -> None:
    """Strength counts of every hand on each board (rows of card ids) into ``out[b]``."""
    num_hands = hand_sets.shape[0]
    order = np.empty(num_hands, dtype=np.int64)
    scratch = np.empty(num_hands, dtype=np.int64)
    per_card = np.empty((2, 52), dtype=np.int64)
    for b in range(boards.shape[0]):
        strength_counts(hand_sets, hand_cards, cardset_of(boards[b]), out[b], order, scratch, per_card)


@njit(cache=True, nogil=True)
def completion_sums(
    boards: np.ndarray,
    deck: np.ndarray,
    combos: np.ndarray,
    hand_sets: np.ndarray,
    hand_cards: np.ndarray,
    sum1: np.ndarray,
    sum2: np.ndarray,
) -> None:
    """For each board (row of card ids), the sums over every completion to the
    final board of each hand's final strength count n (``sum1[b]``) and of n^2
    (``sum2[b]``); -1 for hands that clash with the board.

    A completion is drawn from the deck cards not on the board; the ones that
    hit a hand's cards are skipped for that hand (its count is -1 there), so
    each hand sums over exactly the run-outs it can see. ``combos`` holds the
    completions as positions into those remaining cards (every board of a round
    leaves the same number).
    """
    num_hands = hand_sets.shape[0]
    order = np.empty(num_hands, dtype=np.int64)
    scratch = np.empty(num_hands, dtype=np.int64)
    per_card = np.empty((2, 52), dtype=np.int64)
    counts = np.empty(num_hands, dtype=np.int64)
    remaining = np.empty(deck.shape[0], dtype=np.int64)
    for b in range(boards.shape[0]):
        board_set = cardset_of(boards[b])
        left = 0
        for c in deck:
            if not card_bit(c) & board_set:
                remaining[left] = c
                left += 1
        sum1[b, :] = 0
        sum2[b, :] = 0
        for t in range(combos.shape[0]):
            full = board_set
            for j in range(combos.shape[1]):
                full |= card_bit(remaining[combos[t, j]])
            strength_counts(hand_sets, hand_cards, full, counts, order, scratch, per_card)
            for h in range(num_hands):
                n = counts[h]
                if n >= 0:
                    sum1[b, h] += n
                    sum2[b, h] += n * n
        for h in range(num_hands):
            if hand_sets[h] & board_set:
                sum1[b, h] = -1
                sum2[b, h] = -1


@njit(cache=True, nogil=True)
def count_table(boards: np.ndarray, hand_sets: np.ndarray, hand_cards: np.ndarray, out: np.ndarray) -> None:
    """Strength counts of every hand on each board into ``out[b]`` (int16, -1 for clashes)."""
    num_hands = hand_sets.shape[0]
    order = np.empty(num_hands, dtype=np.int64)
    scratch = np.empty(num_hands, dtype=np.int64)
    per_card = np.empty((2, 52), dtype=np.int64)
    counts = np.empty(num_hands, dtype=np.int64)
    for b in range(boards.shape[0]):
        strength_counts(hand_sets, hand_cards, cardset_of(boards[b]), counts, order, scratch, per_card)
        for h in range(num_hands):
            out[b, h] = counts[h]


@njit(cache=True, nogil=True)
def table_weighted_sums(table: np.ndarray, weights: np.ndarray, sum1: np.ndarray, sum2: np.ndarray) -> None:
    """Add ``weights[b] * n`` and ``weights[b] * n^2`` over the rows of a count
    table into ``sum1``/``sum2`` (entries of -1, clashes, add nothing)."""
    for b in range(table.shape[0]):
        w = np.int64(weights[b])
        for h in range(table.shape[1]):
            n = np.int64(table[b, h])
            if n >= 0:
                sum1[h] += w * n
                sum2[h] += w * n * n


@njit(cache=True, nogil=True)
def table_completion_sums(
    boards: np.ndarray,
    deck: np.ndarray,
    combos: np.ndarray,
    square: bool,
    hand_sets: np.ndarray,
    perm_maps: np.ndarray,
    hand_map: np.ndarray,
    final_keys: np.ndarray,
    final_table: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`completion_sums` (of n, or of n^2 if ``square``) read from the
    strength counts of the canonical final boards (``final_keys`` ascending board
    masks, ``final_table`` their counts): each run-out is mapped to its canonical
    board and the hands with it, instead of being ranked again."""
    size = boards.shape[1]
    full = np.empty(size + combos.shape[1], dtype=np.int64)
    remaining = np.empty(deck.shape[0], dtype=np.int64)
    for b in range(boards.shape[0]):
        _cards_left(deck, board_mask(boards[b]), remaining)
        full[:size] = boards[b]
        out[b, :] = 0
        for t in range(combos.shape[0]):
            for j in range(combos.shape[1]):
                full[size + j] = remaining[combos[t, j]]
            mask, perm = canonical_image(full, perm_maps)
            row = np.searchsorted(final_keys, mask)
            for h in range(out.shape[1]):
                n = np.int64(final_table[row, hand_map[perm, h]])
                if n >= 0:
                    out[b, h] += n * n if square else n
        board_set = cardset_of(boards[b])
        for h in range(out.shape[1]):
            if hand_sets[h] & board_set:
                out[b, h] = -1


@njit(cache=True, nogil=True, inline="always")
def board_mask(cards: np.ndarray) -> int:
    out = np.int64(0)
    for c in cards:
        out |= np.int64(1) << np.int64(c)
    return out


@njit(cache=True, nogil=True, inline="always")
def _cards_left(deck: np.ndarray, board_bits: int, remaining: np.ndarray) -> None:
    """Write the deck cards not in ``board_bits`` (a ``board_mask``) to the front of
    ``remaining``, in deck order."""
    left = 0
    for c in deck:
        if not (np.int64(1) << c) & board_bits:
            remaining[left] = c
            left += 1


@njit(cache=True, nogil=True)
def canonical_image(cards: np.ndarray, perm_maps: np.ndarray) -> tuple[int, int]:
    """(smallest board mask over the suit permutations of ``cards``, the first
    permutation that gives it)."""
    best = np.int64(-1)
    best_perm = 0
    for p in range(perm_maps.shape[0]):
        mask = np.int64(0)
        for c in cards:
            mask |= np.int64(1) << perm_maps[p, c]
        if best < 0 or mask < best:
            best = mask
            best_perm = p
    return best, best_perm


@njit(cache=True, nogil=True)
def canonical_boards(deck: np.ndarray, size: int, perm_maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ``size``-card board of ``deck`` that is the canonical member of its
    suit-isomorphism class (its mask is the smallest image), with the class size.
    Returns (cards int64[N, size] ascending, orbit int64[N]) in the order met."""
    n = deck.shape[0]
    total = np.int64(1)
    for i in range(size):
        total = total * (n - i) // (i + 1)
    cards = np.empty((total, size), dtype=np.int64)
    orbit = np.empty(total, dtype=np.int64)
    images = np.empty(perm_maps.shape[0], dtype=np.int64)
    row = np.arange(size)
    board = np.empty(size, dtype=np.int64)
    found = 0
    for _ in range(total):
        for j in range(size):
            board[j] = deck[row[j]]
        own = board_mask(board)
        canonical = True
        for p in range(perm_maps.shape[0]):
            mask = np.int64(0)
            for c in board:
                mask |= np.int64(1) << perm_maps[p, c]
            images[p] = mask
            if mask < own:
                canonical = False
                break
        if canonical:
            distinct = np.unique(images)
            cards[found, :] = board
            orbit[found] = distinct.shape[0]
            found += 1
        i = size - 1
        while i >= 0 and row[i] == n - size + i:
            i -= 1
        if i < 0:
            break
        row[i] += 1
        for j in range(i + 1, size):
            row[j] = row[j - 1] + 1
    return cards[:found].copy(), orbit[:found].copy()


@njit(cache=True, nogil=True)
def _locate(cards: np.ndarray, q: int, data: tuple) -> tuple[int, int]:
    """(table row, suit permutation) of the round-q board ``cards``."""
    perm_maps, key_start, keys = data[0], data[7], data[8]
    mask, perm = canonical_image(cards, perm_maps)
    lo, hi = key_start[q], key_start[q + 1]
    row = lo + np.searchsorted(keys[lo:hi], mask)
    return row, perm


@njit(cache=True, nogil=True, inline="always")
def _apply_round(board: np.ndarray, q: int, data: tuple, final_counts: np.ndarray, seq: np.ndarray) -> None:
    """Move ``seq`` (each hand's bucket sequence index up to round q - 1, -1 for
    clashes) on to round q: -1 for hands clashing with round q's cards, else
    ``seq * k_q + bucket`` (perfect recall) or round q's bucket alone."""
    hand_map, hand_sets = data[1], data[2]
    total_cards, num_buckets, perfect = data[4], data[5], data[6]
    table, merged_start = data[9], data[10]
    local_start, local, final_thresholds = data[12], data[13], data[14]
    k = num_buckets[q]
    board_set = cardset_of(board[: total_cards[q]])
    for h in range(hand_sets.shape[0]):
        if hand_sets[h] & board_set:
            seq[h] = -1
    if q < total_cards.shape[0] - 1:
        row, perm = _locate(board[: total_cards[q]], q, data)
        stride = merged_start[q + 1] - merged_start[q] + 1
        base = local_start[q]
        for h in range(hand_sets.shape[0]):
            if seq[h] >= 0:
                group = seq[h] if perfect else 0
                bucket = local[base + group * stride + np.int64(table[row, hand_map[perm, h]])]
                seq[h] = group * k + bucket if perfect else bucket
    else:
        for h in range(hand_sets.shape[0]):
            if seq[h] >= 0:
                group = seq[h] if perfect else 0
                bucket = np.searchsorted(final_thresholds[group, : k - 1], final_counts[h], side="right")
                seq[h] = group * k + bucket if perfect else bucket


@njit(cache=True, nogil=True)
def sequence_buckets(board: np.ndarray, upto: int, data: tuple, final_counts: np.ndarray, out: np.ndarray) -> None:
    """Bucket of every hand at round ``upto`` for ``board`` (card ids in deal
    order, at least round ``upto``'s cards): with perfect recall the index of the
    bucket sequence of rounds 0..upto (``((b0 * k1 + b1) * k2 + b2) ...``), with
    imperfect recall the round's own bucket; -1 for hands that clash.

    ``final_counts`` holds the hands' strength counts on the last round's board
    when ``upto`` is the last round (unused otherwise).
    """
    out[:] = 0
    for q in range(0 if data[6] else upto, upto + 1):
        _apply_round(board, q, data, final_counts, out)


@njit(cache=True, nogil=True)
def all_round_buckets(board: np.ndarray, data: tuple, final_counts: np.ndarray, out: np.ndarray) -> None:
    """:func:`sequence_buckets` of every round for a final board, into ``out[r]``."""
    seq = np.zeros(out.shape[1], dtype=np.int64)
    for q in range(out.shape[0]):
        _apply_round(board, q, data, final_counts, seq)
        out[q] = seq


@njit(cache=True, nogil=True)
def round_pair_keys(
    boards: np.ndarray,
    orbit: np.ndarray,
    values: np.ndarray,
    splits: np.ndarray,
    q: int,
    data: tuple,
    value_bits: int,
    weight_bits: int,
    out: np.ndarray,
) -> int:
    """Sort keys ``group << (value_bits + weight_bits) | value << weight_bits |
    weight`` of every (hand, deal order) pair of round q's canonical boards.

    ``splits`` lists the deal orders of a board's cards (positions into its
    ascending cards: which cards came in which earlier round); with perfect
    recall the group is the hand's bucket sequence up to round q - 1 under that
    order, otherwise there is one split and group 0. The weight is the board's
    class size. Returns the number of keys written.
    """
    hand_sets = data[2]
    perfect = data[6]
    num_hands = hand_sets.shape[0]
    groups = np.zeros(num_hands, dtype=np.int64)
    ordered = np.empty(boards.shape[1], dtype=np.int64)
    unused = np.empty(0, dtype=np.int64)
    written = 0
    for b in range(boards.shape[0]):
        board_set = cardset_of(boards[b])
        for s in range(splits.shape[0]):
            if perfect and q > 0:
                for j in range(boards.shape[1]):
                    ordered[j] = boards[b, splits[s, j]]
                sequence_buckets(ordered, q - 1, data, unused, groups)
            for h in range(num_hands):
                if hand_sets[h] & board_set:
                    continue
                group = groups[h] if perfect and q > 0 else 0
                out[written] = (((group << value_bits) | values[b, h]) << weight_bits) | orbit[b]
                written += 1
    return written


@njit(cache=True, nogil=True)
def table_histogram(table: np.ndarray, weights: np.ndarray, hist: np.ndarray) -> None:
    """Add ``weights[b]`` to ``hist[0, n]`` for every count n >= 0 in row b of a count table."""
    for b in range(table.shape[0]):
        for h in range(table.shape[1]):
            n = np.int64(table[b, h])
            if n >= 0:
                hist[0, n] += weights[b]


@njit(cache=True, nogil=True)
def nested_final_histogram(
    boards: np.ndarray,
    orbit: np.ndarray,
    splits: np.ndarray,
    deck: np.ndarray,
    combos: np.ndarray,
    data: tuple,
    final_keys: np.ndarray,
    final_table: np.ndarray,
    hist: np.ndarray,
) -> None:
    """Perfect recall, last round: for each canonical board of the round before
    (weight ``orbit[b]``), each deal order of its cards (``splits``) and each
    run-out to the final board, add the weight to ``hist[group, n]`` of every
    hand that fits: group = the hand's bucket sequence so far, n = its strength
    count on the final board (read from the canonical count table)."""
    perm_maps, hand_map = data[0], data[1]
    last = data[4].shape[0] - 1
    num_hands = hand_map.shape[1]
    size = boards.shape[1]
    groups = np.empty((splits.shape[0], num_hands), dtype=np.int64)
    counts = np.empty(num_hands, dtype=np.int64)
    ordered = np.empty(size, dtype=np.int64)
    full = np.empty(size + combos.shape[1], dtype=np.int64)
    remaining = np.empty(deck.shape[0], dtype=np.int64)
    unused = np.empty(0, dtype=np.int64)
    width = hist.shape[1]
    flat = hist.reshape(-1)
    for b in range(boards.shape[0]):
        _cards_left(deck, board_mask(boards[b]), remaining)
        full[:size] = boards[b]
        for s in range(splits.shape[0]):
            for j in range(size):
                ordered[j] = boards[b, splits[s, j]]
            sequence_buckets(ordered, last - 1, data, unused, groups[s])
            for h in range(num_hands):
                groups[s, h] *= width  # row offsets into the flat histogram (-width for clashes)
        weight = orbit[b]
        for t in range(combos.shape[0]):
            for j in range(combos.shape[1]):
                full[size + j] = remaining[combos[t, j]]
            mask, perm = canonical_image(full, perm_maps)
            row = np.searchsorted(final_keys, mask)
            for h in range(num_hands):
                counts[h] = final_table[row, hand_map[perm, h]]
            for s in range(splits.shape[0]):
                for h in range(num_hands):
                    if counts[h] >= 0:
                        flat[groups[s, h] + counts[h]] += weight


@njit(cache=True, nogil=True, inline="always")
def _advance(thresholds: np.ndarray, g: int, k: int, next_j: int, below: int, total: int, value: int) -> int:
    """Give ``value`` (with weight ``below`` strictly under it) every threshold j
    it is the first to reach: k * below >= j * total."""
    while next_j < k and k * below >= next_j * total:
        thresholds[g, next_j - 1] = value
        next_j += 1
    return next_j


@njit(cache=True, nogil=True)
def thresholds_from_keys(keys: np.ndarray, value_bits: int, weight_bits: int, num_groups: int, k: int) -> np.ndarray:
    """Percentile thresholds per group from sorted pair keys (see
    :func:`round_pair_keys`): ``thresholds[g, j - 1]`` is the smallest value v of
    group g whose weight strictly below it, C(v), reaches j/k of the group's
    weight W (``k * C(v) >= j * W``); :data:`NEVER` if none does."""
    thresholds = np.full((num_groups, max(k - 1, 1)), NEVER, dtype=np.int64)
    value_mask = (np.int64(1) << value_bits) - 1
    weight_mask = (np.int64(1) << weight_bits) - 1
    shift = value_bits + weight_bits
    start = 0
    while start < keys.shape[0]:
        g = keys[start] >> shift
        stop = start
        total = 0
        while stop < keys.shape[0] and keys[stop] >> shift == g:
            total += keys[stop] & weight_mask
            stop += 1
        below = 0
        next_j = 1
        i = start
        while i < stop:
            value = (keys[i] >> weight_bits) & value_mask
            next_j = _advance(thresholds, g, k, next_j, below, total, value)
            while i < stop and (keys[i] >> weight_bits) & value_mask == value:
                below += keys[i] & weight_mask
                i += 1
        start = stop
    return thresholds


@njit(cache=True, nogil=True)
def thresholds_from_histogram(hist: np.ndarray, k: int) -> np.ndarray:
    """The thresholds of :func:`thresholds_from_keys` from ``hist[g, value]`` weights."""
    num_groups = hist.shape[0]
    thresholds = np.full((num_groups, max(k - 1, 1)), NEVER, dtype=np.int64)
    for g in range(num_groups):
        total = 0
        for v in range(hist.shape[1]):
            total += hist[g, v]
        below = 0
        next_j = 1
        for v in range(hist.shape[1]):
            if hist[g, v] == 0:
                continue
            next_j = _advance(thresholds, g, k, next_j, below, total, v)
            below += hist[g, v]
    return thresholds
