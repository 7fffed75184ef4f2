"""Hand ranking and equity, checked against exact counts, hand-derived values and brute force.

Category counts are the standard ones (e.g. Wikipedia "Poker probability"). The
exact values follow the formula in ``poker.evaluate``'s docstring, which is that
of ``rankCardset`` in the ACPC reference dealer.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pytest

import needs
from poker.cards import card_to_text, cards_from_text, cards_to_text
from poker.evaluate import (
    Equity,
    HandClass,
    hand_class,
    hand_vs_range_equity,
    private_hands,
    rank_hand,
    rank_hands,
    showdown_values,
)

HOLDEM_DECK = list(range(52))
LEDUC_DECK = cards_from_text("QhQsKhKsAhAs")  # Leduc: Q K A of hearts and spades
KUHN_DECK = cards_from_text("JsQsKsAs")
CLASS_BASES = np.array([int(c) for c in HandClass])


def plain_value(cards: Sequence[int]) -> int:
    """The reference value, written plainly: the best 5-card subset, then the formula by class."""
    if len(cards) > 5:
        return max(plain_value(five) for five in itertools.combinations(cards, 5))
    flush = len(cards) == 5 and len({card % 4 for card in cards}) == 1
    return plain_value_of_ranks(tuple(sorted(card // 4 for card in cards)), flush)


@functools.cache  # only 6175 rank multisets of 5 cards: keeps 20,000 x 21 subsets fast
def plain_value_of_ranks(ranks: tuple[int, ...], flush: bool) -> int:
    counts = Counter(ranks)
    # Ranks by (multiplicity, rank), highest first: "AAKKQ" -> A, K, Q.
    groups = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    distinct = sorted(counts)

    def colex(chosen: list[int]) -> int:
        return sum(math.comb(rank, i + 1) for i, rank in enumerate(sorted(chosen)))

    def others(*used: int) -> list[int]:
        return [rank for rank in distinct if rank not in used]

    straight_top = None
    if len(distinct) == 5 and distinct[4] - distinct[0] == 4:
        straight_top = distinct[4]
    elif distinct == [0, 1, 2, 3, 12]:
        straight_top = 3
    if straight_top is not None and flush:
        return 12103 + straight_top
    if shape[0] == 4:
        return 11934 + 13 * groups[0] + max(others(groups[0]), default=0)
    if shape[:2] == [3, 2]:
        return 10920 + 78 * groups[0] + groups[1]
    if flush:
        return 9633 + colex(list(ranks))
    if straight_top is not None:
        return 9620 + straight_top
    if shape[0] == 3:
        return 8606 + 78 * groups[0] + colex(others(groups[0]))
    if shape[:2] == [2, 2]:
        return 5005 + 286 * groups[0] + 13 * groups[1] + max(others(groups[0], groups[1]), default=0)
    if shape[0] == 2:
        return 1287 + 286 * groups[0] + colex(others(groups[0]))
    return colex(list(ranks))


def random_hands(count: int, size: int, seed: int) -> np.ndarray:
    keys = np.random.default_rng(seed).random((count, 52))
    return np.argpartition(keys, size - 1, axis=1)[:, :size].astype(np.int8)


def dense_order(values: Sequence[int] | np.ndarray) -> np.ndarray:
    """Each value's position among the distinct values: equal arrays mean the same order and ties."""
    return np.unique(np.asarray(values), return_inverse=True)[1]


def class_counts(values: np.ndarray) -> list[int]:
    return np.bincount(np.searchsorted(CLASS_BASES, values, side="right") - 1, minlength=9).tolist()


# ---- rank_hands / rank_hand: exact values ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2c", 0),  # a single card is worth its rank index
        ("As", 12),
        ("7c5d4h3s2c", 1),  # lowest high card: colex5 {0,1,2,3,5} = C(5,5)
        ("AsKdQhJc9s", 1285),  # 7 + 36 + 120 + 330 + 792
        ("2c2d5h4s3c", 1290),  # lowest pair: 1287 + colex3 {1,2,3} = 1287 + 1 + 1 + 1
        ("AcAdKhQsJc", 4938),  # 1287 + 286*12 + (9 + 45 + 165)
        ("AcAdKhKsQc", 8590),  # 5005 + 286*12 + 13*11 + 10
        ("2c2d2h4s3c", 8608),  # 8606 + colex2 {1,2} = 8606 + 1 + 1
        ("As2c3d4h5s", 9623),  # the wheel: 9620 + 3
        ("6s2c3d4h5s", 9624),
        ("AsKcQdJhTs", 9632),
        ("7h5h4h3h2h", 9634),  # lowest flush: 9633 + 1
        ("AcAdAhKsKc", 11867),  # 10920 + 78*12 + 11
        ("AcAdAhAsKc", 12101),  # 11934 + 13*12 + 11
        ("As2s3s4s5s", 12106),  # steel wheel: 12103 + 3
        ("AsKsQsJsTs", 12115),
        ("QhQs", 4147),  # Leduc pair of queens: 1287 + 286*10
        ("KhQs", 65),  # Leduc K-Q: C(10,1) + C(11,2)
        ("AhKs", 77),  # C(11,1) + C(12,2)
        ("AsAhAd", 9542),  # trips, nothing else: 8606 + 78*12
        ("AsAhAdAc", 12090),  # four cards of quads, no kicker: 11934 + 13*12
        ("AsAhKdKc", 8580),  # two pair, no kicker: 5005 + 286*12 + 13*11
        ("AsKsQsJsTs9s8s", 12115),  # 7 suited cards: the best straight flush counts
        ("AsAhAdKsKhKd2c", 11867),  # two trips: aces full of kings
        ("AsAhKsKhQsQh2c", 8590),  # three pairs: the third pair is the kicker
        ("As2c3d4h5s6d8h", 9624),  # a six-high straight beats the wheel it contains
    ],
)
def test_rank_hand_exact_reference_values(text: str, value: int) -> None:
    assert rank_hand(cards_from_text(text)) == value


def test_rank_hands_all_5_card_hands_class_counts_and_7462_levels() -> None:
    hands = private_hands(HOLDEM_DECK, 5)
    values = rank_hands(hands)
    assert values.dtype == np.int32 and values.shape == (2_598_960,)
    assert class_counts(values) == [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 40]
    levels = np.unique(values)
    assert levels.size == 7462
    # Distinct levels per class: 1277 + 2860 + 858 + 858 + 10 + 1277 + 156 + 156 + 10.
    assert class_counts(levels) == [1277, 2860, 858, 858, 10, 1277, 156, 156, 10]
    # Every straight value is 9620 + top rank, wheel (top 3) the lowest.
    straights = levels[(levels >= HandClass.STRAIGHT) & (levels < HandClass.FLUSH)]
    assert straights.tolist() == list(range(9623, 9633))


@pytest.mark.slow
def test_rank_hands_all_7_card_hands_class_counts() -> None:
    """All 133,784,560 7-card hands: 3 to 7 s on a 2-core VM, half of it building the hands."""
    fives = private_hands(HOLDEM_DECK, 5)
    first_row_from = np.searchsorted(fives[:, 0], np.arange(53))  # rows whose lowest card >= c
    levels = np.zeros(12116, dtype=np.int64)
    for low in range(52):
        for second in range(low + 1, 48):
            tail = fives[first_row_from[second + 1] :]
            hands = np.empty((tail.shape[0], 7), dtype=np.int8)
            hands[:, 0], hands[:, 1], hands[:, 2:] = low, second, tail
            levels += np.bincount(rank_hands(hands), minlength=12116)
    bounds = [*CLASS_BASES.tolist(), 12116]
    counts = [int(levels[bounds[i] : bounds[i + 1]].sum()) for i in range(9)]
    assert counts == [23294460, 58627800, 31433400, 6461620, 6180020, 4047644, 3473184, 224848, 41584]


def test_rank_hands_matches_plain_best_of_21_on_random_7_card_hands() -> None:
    hands = random_hands(20_000, 7, seed=7)
    expected = [plain_value(row) for row in hands.tolist()]
    assert rank_hands(hands).tolist() == expected


@pytest.mark.parametrize("size", [1, 2, 3])
def test_rank_hands_matches_plain_value_on_every_small_hand(size: int) -> None:
    hands = private_hands(HOLDEM_DECK, size)
    assert rank_hands(hands).tolist() == [plain_value(row) for row in hands.tolist()]


@pytest.mark.parametrize("size", [4, 5, 6])
def test_rank_hands_matches_plain_value_on_random_hands(size: int) -> None:
    hands = random_hands(10_000, size, seed=size)
    assert rank_hands(hands).tolist() == [plain_value(row) for row in hands.tolist()]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6, 7])
def test_rank_hand_in_plain_python_matches_the_kernels(size: int) -> None:
    """poker.hand_rank ranks one hand without numba; it must agree with rank_hands."""
    hands = random_hands(20_000, size, seed=100 + size)
    assert [rank_hand(row) for row in hands.tolist()] == rank_hands(hands).tolist()


def test_rank_hands_orders_7_card_hands_like_eval7() -> None:
    eval7 = needs.importorskip("eval7", "eval7")
    hands = random_hands(20_000, 7, seed=11)
    deck = [eval7.Card(card_to_text(card)) for card in HOLDEM_DECK]
    theirs = [eval7.evaluate([deck[card] for card in row]) for row in hands.tolist()]
    assert np.array_equal(dense_order(rank_hands(hands)), dense_order(theirs))


def test_rank_hands_wheel_is_the_lowest_straight() -> None:
    wheel = rank_hand(cards_from_text("5s4c3d2hAh"))
    assert wheel == 9623
    assert wheel < rank_hand(cards_from_text("6s5c4d3h2h")) == 9624
    best_trips = rank_hand(cards_from_text("AsAhAdKcQc"))
    assert wheel > best_trips == 9607  # 8606 + 78*12 + C(10,1) + C(11,2)


def test_rank_hands_kuhn_orders_j_q_k_a() -> None:
    values = rank_hands(np.array(KUHN_DECK)[:, None])
    assert values.tolist() == [9, 10, 11, 12]


def test_rank_hands_leduc_pairs_beat_high_cards_and_suits_never_rank() -> None:
    hands = private_hands(LEDUC_DECK, 2)
    by_text = {cards_to_text(row): value for row, value in zip(hands.tolist(), rank_hands(hands).tolist())}
    pairs = [by_text[t] for t in ("QhQs", "KhKs", "AhAs")]
    high_cards = [by_text[t] for t in ("QhKh", "QhKs", "QsKh", "QsKs", "QhAh", "QsAs", "KhAh", "KsAs")]
    assert pairs == sorted(pairs) and len(set(pairs)) == 3
    assert min(pairs) > max(high_cards)
    assert by_text["QhKh"] == by_text["QsKh"] == by_text["QsKs"] == 65  # K-Q, whatever the suits
    assert by_text["QhAh"] == by_text["QsAs"] == 76  # A-Q beats K-Q: C(10,1) + C(12,2)
    assert by_text["KhAh"] == by_text["KsAs"] == 77  # A-K beats A-Q


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_rank_hands_same_values_for_every_integer_dtype(dtype: type) -> None:
    hands = random_hands(500, 7, seed=3)
    assert np.array_equal(rank_hands(hands.astype(dtype)), rank_hands(hands))


def test_rank_hands_accepts_non_contiguous_views_and_empty_batches() -> None:
    wide = random_hands(100, 7, seed=5)
    assert np.array_equal(rank_hands(wide[::2, ::-1]), rank_hands(np.ascontiguousarray(wide[::2])))
    assert rank_hands(np.empty((0, 7), dtype=np.int8)).shape == (0,)


def test_hand_class_of_values() -> None:
    assert hand_class(0) is HandClass.HIGH_CARD
    assert hand_class(9623) is HandClass.STRAIGHT
    assert hand_class(9633) is HandClass.FLUSH
    assert hand_class(12115) is HandClass.STRAIGHT_FLUSH
    with pytest.raises(ValueError, match=r"rank value 12116 is outside 0\.\.12115"):
        hand_class(12116)


# ---- input errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([[0, 1, 2], [4, 5, 5]], r"card 5 appears more than once in hand 1 \[4, 5, 5\]"),
        ([[0, 52]], r"card 52 in hand 0 \[0, 52\] is outside 0\.\.51"),
        ([[-1, 3]], r"card -1 in hand 0 \[-1, 3\] is outside 0\.\.51"),
        (np.zeros((2, 8), dtype=np.int8), r"shape \(n_hands, 1\.\.7\).*got shape \(2, 8\)"),
        (np.zeros((2, 0), dtype=np.int8), r"got shape \(2, 0\)"),
        ([1, 2, 3], r"got shape \(3,\)"),
    ],
)
def test_rank_hands_rejects_bad_input(cards: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rank_hands(cards)  # type: ignore[arg-type]


def test_rank_hands_rejects_non_integer_cards() -> None:
    with pytest.raises(TypeError, match="cards must be integer card ids; got dtype float64"):
        rank_hands([[1.0, 2.0]])


def test_rank_hand_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"card 3 appears more than once in the hand \[3, 3\]"):
        rank_hand([3, 3])
    with pytest.raises(ValueError, match=r"1 to 7 card ids; got shape \(8,\)"):
        rank_hand(list(range(8)))
    with pytest.raises(ValueError, match=r"card 60 in the hand \[60\] is outside 0\.\.51"):
        rank_hand([60])


def test_private_hands_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"num_hole_cards 7 is outside 1\.\.6"):
        private_hands(LEDUC_DECK, 7)
    with pytest.raises(ValueError, match=r"card 40 appears more than once in deck"):
        private_hands([40, 41, 40], 1)


# ---- private_hands / showdown_values ----------------------------------------------------


def test_private_hands_canonical_order() -> None:
    holdem = private_hands(HOLDEM_DECK, 2)
    assert holdem.dtype == np.int8 and holdem.shape == (1326, 2)
    assert holdem[:3].tolist() == [[0, 1], [0, 2], [0, 3]] and holdem[-1].tolist() == [50, 51]
    assert private_hands(LEDUC_DECK[::-1], 1).ravel().tolist() == [42, 43, 46, 47, 50, 51]
    assert private_hands(LEDUC_DECK, 2).shape == (15, 2)


def test_showdown_values_leduc_board_kh() -> None:
    hands = private_hands(LEDUC_DECK, 1)  # Qh Qs Kh Ks Ah As
    # Q with K on board: K-Q high (65); Kh collides (-1); Ks pairs kings (1287 + 286*11);
    # A with K: A-K high (77).
    assert showdown_values(hands, cards_from_text("Kh")).tolist() == [65, 65, -1, 4433, 77, 77]


def test_showdown_values_holdem_river_matches_rank_hands() -> None:
    board = cards_from_text("2c7d9hTsJs")
    hands = private_hands(HOLDEM_DECK, 2)
    values = showdown_values(hands, board)
    collide = np.isin(hands, board).any(axis=1)
    assert (values[collide] == -1).all() and collide.sum() == 1326 - 1081
    full = np.hstack([hands[~collide], np.tile(np.array(board, dtype=np.int8), (1081, 1))])
    assert np.array_equal(values[~collide], rank_hands(full))


def test_showdown_values_rejects_too_many_cards() -> None:
    with pytest.raises(ValueError, match=r"h \+ 5 board cards at most 7; got shape \(4, 3\)"):
        showdown_values(np.zeros((4, 3), dtype=np.int8), cards_from_text("2c3c4c5c6c"))


# ---- hand_vs_range_equity ----------------------------------------------------------------


def leduc_equity(hole: str, board: str, weights: np.ndarray | None = None) -> Equity:
    """Equity at Leduc showdown (one board card), against a uniform range by default."""
    weights = np.ones(6) if weights is None else weights
    return hand_vs_range_equity(
        cards_from_text(hole), weights, cards_from_text(board), deck=LEDUC_DECK, final_board_size=1
    )


def holdem_equity(hole: str, board: str, *, samples: int | None = None, seed: int | None = None) -> Equity:
    """Equity at hold'em showdown against a uniform range."""
    return hand_vs_range_equity(
        cards_from_text(hole),
        np.ones(1326),
        cards_from_text(board),
        deck=HOLDEM_DECK,
        final_board_size=5,
        samples=samples,
        seed=seed,
    )


def test_equity_leduc_pair_of_kings_wins_outright() -> None:
    # Ks with Kh on board: the opponent holds Q or A (Kh and Ks are gone), never a pair.
    assert leduc_equity("Ks", "Kh") == Equity(win=1.0, tie=0.0)


def test_equity_leduc_king_preflop_vs_uniform() -> None:
    # Opponent (Ks removed): Q with 2/5, Kh 1/5, A 2/5; then one board card from the other 4.
    #   vs Q: lose only to the other Q on board: win 3/4.  vs Kh: same ranks, always tie.
    #   vs A: win only if Kh falls: 1/4.  win = 2/5*3/4 + 2/5*1/4 = 2/5; tie = 1/5.
    equity = leduc_equity("Ks", "")
    assert equity.win == pytest.approx(0.4, abs=1e-15)
    assert equity.tie == pytest.approx(0.2, abs=1e-15)
    assert equity.value == pytest.approx(0.5, abs=1e-15)


def test_equity_kuhn_king_beats_two_of_three() -> None:
    equity = hand_vs_range_equity(cards_from_text("Ks"), np.ones(4), [], deck=KUHN_DECK, final_board_size=0)
    assert equity.win == pytest.approx(2 / 3, abs=1e-15) and equity.tie == 0.0


def test_equity_card_removal_drops_and_renormalises_blocked_hands() -> None:
    # Weights over Qh Qs Kh Ks Ah As. Kh is on the board and Ks is ours: only Qh can be dealt.
    assert leduc_equity("Ks", "Kh", np.array([1.0, 0, 50, 50, 0, 0])) == Equity(win=1.0, tie=0.0)
    with pytest.raises(ValueError, match="no weight on hands that avoid our hole cards and the board"):
        leduc_equity("Ks", "Kh", np.array([0, 0, 1.0, 1, 0, 0]))


def test_equity_holdem_river_certain_outcomes() -> None:
    assert holdem_equity("AsKs", "QsJsTs2c3d") == Equity(win=1.0, tie=0.0)  # royal flush
    # The board is a royal flush: everybody plays it and splits.
    board_plays = holdem_equity("2c3d", "AsKsQsJsTs")
    assert board_plays == Equity(win=0.0, tie=1.0) and board_plays.value == 0.5


def test_equity_matches_brute_force_on_a_small_deck() -> None:
    # Deck Q K A of all suits (12 cards), 2 hole cards, one board card dealt, 3 in all.
    deck = [c for c in HOLDEM_DECK if c // 4 >= 10]
    hole, board = cards_from_text("KhQd"), cards_from_text("As")
    hands = private_hands(deck, 2)
    weights = np.random.default_rng(0).integers(0, 4, size=len(hands)).astype(float)
    win = tie = total = Fraction(0)
    for index, opp in enumerate(hands.tolist()):
        if set(opp) & set(hole + board) or weights[index] == 0:
            continue
        rest = [c for c in deck if c not in set(opp) | set(hole + board)]
        for runout in itertools.combinations(rest, 2):
            ours = plain_value(hole + board + runout)
            theirs = plain_value(tuple(opp) + board + runout)
            weight = Fraction(int(weights[index]))
            total += weight
            win += weight * (ours > theirs)
            tie += weight * (ours == theirs)
    equity = hand_vs_range_equity(hole, weights, board, deck=deck, final_board_size=3)
    assert equity.win == pytest.approx(float(win / total), abs=1e-12)
    assert equity.tie == pytest.approx(float(tie / total), abs=1e-12)


def test_equity_sampling_is_seeded_and_close_to_exact() -> None:
    exact = holdem_equity("AhKh", "Qh7c2h")
    first = holdem_equity("AhKh", "Qh7c2h", samples=3000, seed=1)
    assert first == holdem_equity("AhKh", "Qh7c2h", samples=3000, seed=1)
    # Each sample scores the whole range, so the error is well under 0.5/sqrt(3000) ~ 0.009.
    assert first.value == pytest.approx(exact.value, abs=0.03)
    # On the river there is nothing to sample.
    assert holdem_equity("AhKh", "Qh7c2h3s4d", samples=10, seed=2) == holdem_equity("AhKh", "Qh7c2h3s4d")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opp_range": np.ones(5)}, r"one weight per private hand, shape \(6,\); got shape \(5,\)"),
        ({"opp_range": np.array([1, 1, -1.0, 1, 1, 1])}, r"opp_range\[2\] = -1\.0 is not a finite non-neg"),
        ({"opp_range": np.array([1, 1, np.nan, 1, 1, 1])}, r"opp_range\[2\] = nan"),
        ({"hole": [0]}, r"card 0 in hole is not in the deck"),
        ({"board": cards_from_text("Ks")}, r"card 47 is both in the hole and on the board"),
        ({"final_board_size": 7}, r"final_board_size 7 is outside 0\.\.6"),
        ({"final_board_size": 5}, r"cannot deal 5 more board cards: 5 cards are left and the opp\w+ holds 1"),
        ({"samples": 0}, r"samples 0 must be a positive whole number of run-outs"),
        ({"hole": []}, r"hole must hold at least one card"),
    ],
)
def test_equity_rejects_bad_input(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "hole": cards_from_text("Ks"),
        "opp_range": np.ones(6),
        "board": [],
        "deck": LEDUC_DECK,
        "final_board_size": 1,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        hand_vs_range_equity(**args)  # type: ignore[arg-type]
