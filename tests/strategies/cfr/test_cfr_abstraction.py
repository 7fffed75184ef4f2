"""Card abstraction: exact features against brute force, and the bucket properties.

Features are checked in heads-up limit hold'em against plain loops over the
opponent hands (ranked by :func:`poker.evaluate.rank_hand`, no sorting, no
card-removal formulas). Buckets are checked end to end in a 20-card hold'em
(ranks T to A), small enough to enumerate every board without suit isomorphism.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from poker.cards import cards_from_text, rank_of, suit_of
from poker.deal import private_hands
from poker.evaluate import hand_vs_range_equity, rank_hand, rank_hands
from poker.gamedef import Game, load_game, parse_game
from strategies.cfr.abstraction.bucketing import AbstractionSpec, Feature, Recall, hand_classes, percentile_buckets
from strategies.cfr.abstraction.card_abstraction import (
    CardAbstraction,
    NullAbstraction,
    load_abstraction,
    parse_abstraction_spec,
)
from strategies.cfr.abstraction.card_tables import AbstractionError, card_tables
from strategies.cfr.abstraction.hand_features import hand_features

HULHE = load_game("holdem.limit.2p.reverse_blinds")
SMALL = parse_game(
    """GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 3 4 4 4
numSuits = 4
numRanks = 5
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""
)
SUIT_SWAP = {0: 2, 1: 3, 2: 1, 3: 0}  # a suit permutation: clubs->hearts, diamonds->spades, ...


def _cards(text: str) -> list[int]:
    return list(cards_from_text(text))


def _index(game: Game, text: str) -> int:
    hand = sorted(_cards(text))
    return int(np.flatnonzero((private_hands(game) == hand).all(axis=1))[0])


def _brute_hs(hole: list[int], board: list[int], deck: list[int]) -> float:
    """HS by a loop over every opponent hand (ties 1/2)."""
    ours = rank_hand(hole + board)
    left = [c for c in deck if c not in hole and c not in board]
    wins = ties = total = 0
    for opp in itertools.combinations(left, 2):
        theirs = rank_hand(list(opp) + board)
        wins += ours > theirs
        ties += ours == theirs
        total += 1
    return (wins + ties / 2) / total


@pytest.mark.parametrize(
    ("board", "hands"),
    [
        ("AhKh7h2c2d", ["QhJh", "AsAc", "7c7d", "3s4s", "2h2s"]),  # flush, full houses, pair, quads
        ("9c8c7c6c5c", ["KcQc", "AdAs", "Tc2d", "3h4h"]),  # straight flush on board: ties galore
    ],
)
def test_river_hs_matches_brute_force(board: str, hands: list[str]) -> None:
    cards = _cards(board)
    features = hand_features(HULHE, cards)
    deck = list(HULHE.deck())
    for text in hands:
        h = _index(HULHE, text)
        expected = _brute_hs(_cards(text), cards, deck)
        assert features.hs[h] == pytest.approx(expected, abs=1e-15), text
        assert features.ehs[h] == features.hs[h]
        assert features.ehs2[h] == pytest.approx(expected**2, abs=1e-15)
    clashing = np.isin(private_hands(HULHE), cards).any(axis=1)
    assert np.isnan(features.hs[clashing]).all() and np.isnan(features.ehs2[clashing]).all()
    assert not np.isnan(features.hs[~clashing]).any()


def test_turn_ehs_matches_average_over_rivers() -> None:
    turn = _cards("Kd9s4h3h")
    features = hand_features(HULHE, turn)
    for text in ["AhQh", "5c6c", "KsKc", "2d2s"]:
        hole = _cards(text)
        rivers = [c for c in HULHE.deck() if c not in turn and c not in hole]
        assert len(rivers) == 46
        strengths = []
        for river in rivers:
            board = turn + [river]
            left = [c for c in HULHE.deck() if c not in hole and c not in board]
            opponents = np.array([list(o) + board for o in itertools.combinations(left, 2)])
            theirs = rank_hands(opponents)
            ours = rank_hand(hole + board)
            strengths.append((np.sum(ours > theirs) + np.sum(ours == theirs) / 2) / len(theirs))
        h = _index(HULHE, text)
        assert features.ehs[h] == pytest.approx(np.mean(strengths), abs=1e-14), text
        assert features.ehs2[h] == pytest.approx(np.mean(np.square(strengths)), abs=1e-14), text


def test_flop_ehs_is_equity_against_a_random_hand() -> None:
    # Every river board leaves every hand the same number of opponents, so the
    # mean HS over run-outs is the equity against a uniformly random hand.
    flop = _cards("7h8h2c")
    features = hand_features(HULHE, flop)
    for text in ["AhKh", "7c7d", "9s6d"]:
        equity = hand_vs_range_equity(_cards(text), np.ones(1326), flop, deck=HULHE.deck(), final_board_size=5)
        assert features.ehs[_index(HULHE, text)] == pytest.approx(equity.value, abs=1e-14), text


def test_leduc_hand_strength_with_one_hole_card(tmp_path: Path) -> None:
    leduc = load_game("leduc")  # deck Q, K, A in two suits
    board = _cards("Kh")
    features = hand_features(leduc, board)
    # Ace against Qs Qh Ks As: beats two queens, loses to the pair of kings, ties the ace.
    assert features.hs[_index(leduc, "As")] == (2 + 0.5) / 4
    assert features.hs[_index(leduc, "Ks")] == 1.0
    # Preflop E[HS] of the ace: a queen or a king on board (4 of 5 cards) gives 2.5/4 as
    # above, the other ace pairs it and beats all four hands left.
    assert hand_features(leduc, (), cache_dir=tmp_path).ehs[_index(leduc, "As")] == pytest.approx(0.8 * 0.625 + 0.2, abs=1e-15)


@pytest.mark.slow
def test_preflop_figures(tmp_path_factory: pytest.TempPathFactory) -> None:
    features = hand_features(HULHE, (), cache_dir=tmp_path_factory.mktemp("cache"))
    aces = _index(HULHE, "AsAh")
    assert round(float(features.ehs[aces]), 3) == 0.852  # the well-known 85.2% against a random hand
    sampled = hand_vs_range_equity(
        _cards("AsAh"), np.ones(1326), (), deck=HULHE.deck(), final_board_size=5, samples=50_000, seed=7
    )
    assert abs(features.ehs[aces] - sampled.value) < 0.002  # about 4 standard errors of the sample
    assert round(float(features.ehs[_index(HULHE, "7c2d")]), 4) == 0.3458
    # Against one random hand the weakest start is 32o (0.3230), not 72o.
    weakest = private_hands(HULHE)[np.argmin(features.ehs)]
    assert sorted(c // 4 for c in weakest) == [0, 1] and weakest[0] % 4 != weakest[1] % 4
    assert np.argmin(features.ehs2) == np.argmin(features.ehs)
    # Suit-isomorphic hands get identical values, exactly.
    assert features.ehs2[aces] == features.ehs2[_index(HULHE, "AdAc")]


def test_percentile_buckets_balance() -> None:
    rng = np.random.default_rng(3)
    values = rng.permutation(1000)  # distinct: bucket j ends at ceil((j + 1) * 1000 / 7)
    assert np.bincount(percentile_buckets(values, np.ones(1000, np.int64), 7)).tolist() == [143] * 6 + [142]
    weights = rng.integers(1, 10, size=1000)
    buckets = percentile_buckets(values, weights, 7)
    per_bucket = np.bincount(buckets, weights=weights)
    assert np.all(np.abs(per_bucket - weights.sum() / 7) < weights.max())
    assert np.all(np.diff(buckets[np.argsort(values)]) >= 0)  # monotone in the value
    tied = np.repeat(np.arange(10), 30)  # ties never split: 10 groups of 30 into 4 buckets
    assert np.bincount(percentile_buckets(tied, np.ones(300, np.int64), 4)).tolist() == [90, 60, 90, 60]


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    spec = AbstractionSpec(Feature.EHS2, (3,), Recall.PERFECT)
    return CardAbstraction.build(SMALL, spec, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def imperfect(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    spec = AbstractionSpec(Feature.EHS, (2, 4, 4, 5), Recall.IMPERFECT)
    return CardAbstraction.build(SMALL, spec, cache_dir=tmp_path_factory.mktemp("cache"))


def _random_boards(count: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    deck = np.array(SMALL.deck())
    return [rng.choice(deck, size=5, replace=False).tolist() for _ in range(count)]


def test_perfect_recall_buckets_refine(perfect: CardAbstraction) -> None:
    assert perfect.name == "ehs2:3:perfect"
    assert [perfect.num_buckets(r) for r in range(4)] == [3, 9, 27, 81]
    for board in _random_boards(20, seed=1):
        previous = perfect.buckets(0, [])
        for r, size in enumerate([3, 4, 5], start=1):
            current = perfect.buckets(r, board[:size])
            valid = current >= 0
            assert np.array_equal(current[valid] // 3, previous[valid])
            assert np.all(current[valid] < perfect.num_buckets(r))
            assert np.array_equal(valid, ~np.isin(private_hands(SMALL), board[:size]).any(axis=1))
            previous = current


@pytest.mark.parametrize("name", ["perfect", "imperfect"])
def test_isomorphic_boards_give_identical_buckets(name: str, request: pytest.FixtureRequest) -> None:
    abstraction: CardAbstraction = request.getfixturevalue(name)
    hands = private_hands(SMALL)
    index = {tuple(h): i for i, h in enumerate(hands.tolist())}
    image = [index[tuple(sorted((c // 4) * 4 + SUIT_SWAP[c % 4] for c in h))] for h in hands.tolist()]
    for board in _random_boards(10, seed=2):
        swapped = [(c // 4) * 4 + SUIT_SWAP[c % 4] for c in board]
        for r, size in enumerate([0, 3, 4, 5]):
            original = abstraction.buckets(r, board[:size])
            assert np.array_equal(abstraction.buckets(r, swapped[:size])[image], original)


def _all_pairs(round: int, feature: Feature) -> tuple[list[list[int]], npt.NDArray[np.int64]]:
    """Every board of the round (no isomorphism) and the feature of every hand on
    it as the exact integer sum over run-outs (-1 for clashes)."""
    size = [0, 3, 4, 5][round]
    boards = [list(b) for b in itertools.combinations(SMALL.deck(), size)]
    runs = math.comb(len(SMALL.deck()) - size - 2, 5 - size)
    opponents = 2 * math.comb(len(SMALL.deck()) - 5 - 2, 2)
    scale = runs * opponents ** (2 if feature is Feature.EHS2 else 1)
    values = [getattr(hand_features(SMALL, b), str(feature)) * scale for b in boards]
    return boards, np.rint(np.nan_to_num(values, nan=-1)).astype(np.int64)


@pytest.mark.parametrize("round", [1, 2])
def test_imperfect_buckets_are_percentiles_of_every_pair(imperfect: CardAbstraction, round: int) -> None:
    # Rebuild the round's buckets from every (hand, board) pair with unit weights,
    # through the single-board feature kernel: no suit isomorphism, no tables.
    boards, values = _all_pairs(round, Feature.EHS)
    valid = values >= 0
    expected = percentile_buckets(values[valid], np.ones(valid.sum(), np.int64), imperfect.num_buckets(round))
    got = np.array([imperfect.buckets(round, b) for b in boards])
    assert np.array_equal(got[valid], expected)
    assert np.all(got[~valid] == -1)
    # Balanced within the largest tie (equal values never split).
    largest_tie = np.unique(values[valid], return_counts=True)[1].max()
    counts = np.bincount(expected)
    assert np.all(np.abs(counts - valid.sum() / imperfect.num_buckets(round)) < largest_tie)


def test_perfect_flop_buckets_split_each_preflop_bucket(perfect: CardAbstraction) -> None:
    boards, values = _all_pairs(1, Feature.EHS2)
    preflop = np.broadcast_to(perfect.buckets(0, []), values.shape)
    got = np.array([perfect.buckets(1, b) for b in boards])
    for group in range(3):
        members = (values >= 0) & (preflop == group)
        expected = percentile_buckets(values[members], np.ones(members.sum(), np.int64), 3)
        assert np.array_equal(got[members], group * 3 + expected)


def _mask(cards: list[int] | tuple[int, ...]) -> int:
    return sum(1 << c for c in cards)


def _group_percentiles(
    groups: npt.NDArray[np.int64], values: npt.NDArray[np.int64], weights: npt.NDArray[np.int64], k: int
) -> dict[tuple[int, int], int]:
    """(group, value) -> percentile bucket of the value within its group."""
    out = {}
    for g in np.unique(groups):
        members = groups == g
        buckets = percentile_buckets(values[members], weights[members], k)
        out.update({(int(g), int(v)): int(b) for v, b in zip(values[members], buckets)})
    return out


@pytest.mark.slow
def test_perfect_turn_buckets_split_each_flop_sequence(perfect: CardAbstraction) -> None:
    # Every (hand, flop, turn card) sequence once, grouped by its flop bucket sequence.
    turns, values = _all_pairs(2, Feature.EHS2)
    value_of = {_mask(t): v for t, v in zip(turns, values)}
    deck = SMALL.deck()
    groups, pair_values, got = [], [], []
    for flop in itertools.combinations(deck, 3):
        flop_buckets = perfect.buckets(1, flop)
        for turn in (c for c in deck if c not in flop):
            v = value_of[_mask(flop) | 1 << turn]
            valid = v >= 0
            groups.append(flop_buckets[valid])
            pair_values.append(v[valid])
            got.append(perfect.buckets(2, [*flop, turn])[valid])
    g, v = np.concatenate(groups).astype(np.int64), np.concatenate(pair_values)
    expected = _group_percentiles(g, v, np.ones_like(v), 3)
    assert np.array_equal(np.concatenate(got), [3 * a + expected[(a, b)] for a, b in zip(g.tolist(), v.tolist())])


@pytest.mark.slow
def test_perfect_river_buckets_split_each_turn_sequence(perfect: CardAbstraction) -> None:
    # The river counts of every (hand, flop, turn, river) sequence, grouped by the
    # turn bucket sequence, in a histogram; then a sample of sequences is checked.
    deck = SMALL.deck()
    opponents = 2 * math.comb(len(deck) - 7, 2)
    counts = {}
    for river in itertools.combinations(deck, 5):
        hs = hand_features(SMALL, river).hs
        counts[_mask(river)] = np.rint(np.nan_to_num(hs * opponents, nan=-1)).astype(np.int64)
    hist = np.zeros((perfect.num_buckets(2), opponents + 1), dtype=np.int64)
    for flop in itertools.combinations(deck, 3):
        for turn in (c for c in deck if c not in flop):
            turn_buckets = perfect.buckets(2, [*flop, turn])
            base = _mask(flop) | 1 << turn
            rows = np.array([counts[base | 1 << river] for river in deck if not base >> river & 1])
            valid = rows >= 0
            np.add.at(hist, (np.broadcast_to(turn_buckets, rows.shape)[valid], rows[valid]), 1)
    g, v = np.nonzero(hist)
    expected = _group_percentiles(g.astype(np.int64), v.astype(np.int64), hist[g, v], 3)
    for board in _random_boards(300, seed=5):
        got = perfect.buckets(3, board)
        groups = perfect.buckets(2, board[:4])
        valid = got >= 0
        want = [3 * a + expected[(a, b)] for a, b in zip(groups[valid].tolist(), counts[_mask(board)][valid].tolist())]
        assert np.array_equal(got[valid], want)


def test_save_load_round_trip(perfect: CardAbstraction, tmp_path: Path) -> None:
    path = tmp_path / "small.abstraction"
    perfect.save(path)
    loaded = CardAbstraction.load(path)
    assert (loaded.name, loaded.game, loaded.buckets_per_round, loaded.recall) == (
        "ehs2:3:perfect", SMALL, (3, 3, 3, 3), Recall.PERFECT
    )
    for board in _random_boards(5, seed=4):
        for r, size in enumerate([0, 3, 4, 5]):
            assert np.array_equal(loaded.buckets(r, board[:size]), perfect.buckets(r, board[:size]))


def test_load_abstraction_builds_once_then_reads_the_cache(tmp_path: Path) -> None:
    built = load_abstraction("hs:2,3,3,3:imperfect", SMALL, cache_dir=tmp_path)
    files = [p.name for p in tmp_path.glob("*.abstraction")]
    assert len(files) == 1 and files[0].startswith("hs-2_3_3_3-imperfect-")
    again = load_abstraction("HS:2,3,3,3:imperfect", SMALL, cache_dir=tmp_path)
    assert isinstance(again, CardAbstraction) and again.name == built.name == "hs:2,3,3,3:imperfect"
    board = _cards("AsKhQdTcTh")
    assert np.array_equal(again.buckets(3, board), built.buckets(3, board))


def test_bucket_of_one_hand(imperfect: CardAbstraction) -> None:
    board = _cards("AsKhQdJcTs")
    hole = _cards("AhJs")
    assert imperfect.bucket(3, hole, board) == imperfect.buckets(3, board)[_index(SMALL, "AhJs")]
    with pytest.raises(ValueError, match="share a card with the board"):
        imperfect.bucket(3, _cards("AsAh"), board)
    with pytest.raises(ValueError, match="round 2 needs 4 board cards, got 5"):
        imperfect.buckets(2, board)


def test_null_abstraction_is_the_identity() -> None:
    null = load_abstraction("none", load_game("leduc"))
    assert isinstance(null, NullAbstraction) and null.name == "none"
    assert null.num_buckets(1) == 6
    assert null.buckets(1, _cards("Kh")).tolist() == [0, 1, -1, 3, 4, 5]
    assert null.bucket(0, _cards("As"), []) == 5


def test_leduc_perfect_recall_buckets(tmp_path: Path) -> None:
    leduc = load_game("leduc")  # hands Qh Qs Kh Ks Ah As
    abstraction = CardAbstraction.build(leduc, AbstractionSpec(Feature.EHS2, (2,), Recall.PERFECT), cache_dir=tmp_path)
    # Preflop E[HS²]: Q < K < A. Six equal weights in two buckets: the aces start at 4/6 >= 1/2.
    assert abstraction.buckets(0, []).tolist() == [0, 0, 0, 0, 1, 1]
    # On the Kh: inside preflop bucket 0 the queens (losing to all) take bucket 0 and
    # the Ks (a pair) bucket 1; the aces, alone in their group, tie into 1 * 2 + 0.
    assert abstraction.buckets(1, _cards("Kh")).tolist() == [0, 0, -1, 1, 2, 2]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ehs2:5", r"must be FEATURE:BUCKETS:RECALL \(e.g. 'ehs2:5:perfect'\) or 'none'"),
        ("emd:5:perfect", "unknown feature 'emd' .* expected one of hs, ehs, ehs2"),
        ("ehs2:0:perfect", "buckets '0' .* must be a positive whole number"),
        ("ehs2:5,x:perfect", "buckets '5,x' .* must be a positive whole number"),
        ("ehs2:5:partial", "recall 'partial' .* must be 'perfect' or 'imperfect'"),
    ],
)
def test_bad_specs_are_rejected(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_abstraction_spec(spec)


def test_bucket_list_must_match_the_rounds() -> None:
    spec = parse_abstraction_spec("ehs:5,5:imperfect")
    assert spec == AbstractionSpec(Feature.EHS, (5, 5), Recall.IMPERFECT)
    with pytest.raises(ValueError, match="lists 2 bucket counts but the game has 4 rounds"):
        spec.buckets_per_round(HULHE)


@pytest.mark.parametrize("content", [b"damaged", b"", b"\x93\x01\x02\x03"])
def test_a_damaged_abstraction_file_is_reported_not_crashed_on(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.abstraction"
    path.write_bytes(content)
    with pytest.raises(AbstractionError, match="not a card abstraction file: .*bad.abstraction"):
        CardAbstraction.load(path)


# Lossless round 0 (``ehs2:lossless,50,50,50:imperfect``: the 169 pre-flop classes of hold'em).


def _shape(hand: np.ndarray) -> tuple[int, int, bool]:
    """The class key of a two-card hand as people name it: high rank, low rank, suited."""
    a, b = (int(c) for c in hand)
    high, low = sorted((rank_of(a), rank_of(b)), reverse=True)
    return high, low, suit_of(a) == suit_of(b)


def test_holdem_hands_fall_into_the_169_classes_exactly() -> None:
    classes, representatives = hand_classes(card_tables(HULHE))
    hands = private_hands(HULHE)
    assert len(representatives) == 169 and classes.shape == (1326,)
    shapes = [_shape(h) for h in hands]
    # One class per shape and one shape per class: the map is the suit-isomorphism quotient.
    by_class: dict[int, set[tuple[int, int, bool]]] = {}
    for c, shape in zip(classes.tolist(), shapes, strict=True):
        by_class.setdefault(c, set()).add(shape)
    assert all(len(s) == 1 for s in by_class.values())
    assert len({next(iter(s)) for s in by_class.values()}) == 169
    sizes = Counter(classes.tolist())
    kinds = Counter(
        ("pair" if shape[0] == shape[1] else "suited" if shape[2] else "offsuit", sizes[c])
        for i, (c, shape) in enumerate(zip(classes.tolist(), shapes, strict=True))
        if representatives[c] == i
    )
    assert kinds == {("pair", 6): 13, ("suited", 4): 78, ("offsuit", 12): 78}
    assert all(classes[representatives[c]] == c for c in range(169))


@pytest.fixture(scope="module")
def lossless(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    spec = parse_abstraction_spec("ehs2:lossless,3,3,4:imperfect")
    assert spec is not None
    return CardAbstraction.build(SMALL, spec, cache_dir=tmp_path_factory.mktemp("cache"))


def test_lossless_round_zero_gives_each_class_its_own_bucket_by_strength(
    lossless: CardAbstraction, tmp_path: Path
) -> None:
    assert lossless.name == "ehs2:lossless,3,3,4:imperfect"
    assert lossless.buckets_per_round == (25, 3, 3, 4) and lossless.num_buckets(0) == 25
    classes, representatives = hand_classes(card_tables(SMALL))
    buckets = lossless.buckets(0, [])
    # Bucket = the class's rank by pre-flop E[HS^2] (ties by class number): a bijection.
    ehs2 = hand_features(SMALL, (), cache_dir=tmp_path).ehs2[representatives]
    expected = np.empty(25, dtype=np.int64)
    expected[np.lexsort((np.arange(25), ehs2))] = np.arange(25)
    assert buckets.tolist() == expected[classes].tolist()
    top = max(rank_of(c) for c in SMALL.deck())
    best_pair = [i for i, h in enumerate(private_hands(SMALL)) if _shape(h)[:2] == (top, top)]
    assert set(buckets[best_pair].tolist()) == {24}


def test_lossless_round_zero_leaves_the_later_rounds_as_they_were(lossless: CardAbstraction, tmp_path: Path) -> None:
    spec = AbstractionSpec(Feature.EHS2, (2, 3, 3, 4), Recall.IMPERFECT)
    percentile = CardAbstraction.build(SMALL, spec, cache_dir=tmp_path)
    rng = np.random.default_rng(5)
    for _ in range(20):
        board = rng.choice(np.array(SMALL.deck()), size=5, replace=False).tolist()
        ours, theirs = lossless.bucket_rounds(board), percentile.bucket_rounds(board)
        assert ours[1:].tolist() == theirs[1:].tolist()


def test_lossless_with_perfect_recall_nests_under_the_classes(tmp_path: Path) -> None:
    abstraction = load_abstraction("ehs2:lossless,2,2,2:perfect", SMALL, cache_dir=tmp_path)
    assert [abstraction.num_buckets(r) for r in range(4)] == [25, 50, 100, 200]
    board = [int(c) for c in SMALL.deck()[:5]]
    rounds = abstraction.bucket_rounds(board)
    fits = rounds[3] >= 0
    assert (rounds[1][fits] // 2 == abstraction.buckets(0, [])[fits]).all()


def test_the_lossless_spec_survives_the_cache(lossless: CardAbstraction, tmp_path: Path) -> None:
    path = tmp_path / "a.abstraction"
    lossless.save(path)
    again = CardAbstraction.load(path)
    assert (again.name, again.lossless, again.buckets_per_round) == (lossless.name, True, (25, 3, 3, 4))
    built = load_abstraction("EHS2:lossless,3,3,4:imperfect", SMALL, cache_dir=tmp_path)
    read = load_abstraction("ehs2:lossless,3,3,4:imperfect", SMALL, cache_dir=tmp_path)
    assert read.name == built.name == lossless.name
    assert read.buckets(0, []).tolist() == lossless.buckets(0, []).tolist()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ehs2:lossless:imperfect", "'lossless' is for round 0 only; give a count for every round"),
        ("ehs2:5,lossless,5,5:imperfect", r"must be a positive whole number .* \(the first may be 'lossless'\)"),
        ("ehs2:lossless,5:imperfect", r"lists 2 bucket counts but the game has 4 rounds; .*\(lossless is round 0's"),
    ],
)
def test_bad_lossless_specs_are_one_clear_error(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parsed = parse_abstraction_spec(spec)
        assert parsed is not None
        parsed.buckets_per_round(HULHE)
