"""Hold'em's exact pre-flop showdown table (:mod:`strategies.resolve.preflop_equity`):
the kernel against brute force, the shipped table against a full enumeration of
boards for one pair of classes, the values' units against sampled run-outs, and
a re-solver whose pre-flop play no longer depends on which boards its seed drew."""

from __future__ import annotations

import itertools
import math

import numpy as np

from poker.evaluate import private_hands, rank_hands
from poker.gamedef import load_game
from poker.state import State
from strategies.base import PublicState, make_strategy
from strategies.resolve.evaluators import HandTable, Runouts, runouts_for
from strategies.resolve.preflop_equity import CLASSES, HandClasses, PreflopShowdowns, canonical_boards, class_sums, hand_classes, load_class_sums

HANDS = private_hands(np.arange(52), 2).astype(np.int64)
CLASS = hand_classes(HANDS)


def _brute_force_sums(boards: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``S`` over ``boards`` pair by pair: every two hands that share no card."""
    sums = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    for board, weight in zip(boards, weights, strict=True):
        valid = np.flatnonzero(~np.isin(HANDS, board).any(axis=1))
        ranks = rank_hands(np.concatenate([HANDS[valid], np.tile(board, (len(valid), 1))], axis=1)).astype(np.int64)
        shared = (HANDS[valid][:, None, :, None] == HANDS[valid][None, :, None, :]).any(axis=(2, 3))
        signs = np.sign(ranks[:, None] - ranks[None, :]) * ~shared
        per_class = np.zeros((len(valid), CLASSES), dtype=np.int64)
        np.add.at(per_class.T, CLASS[valid], signs.T)
        np.add.at(sums, CLASS[valid], weight * per_class)
    return sums


def test_suit_isomorphic_boards_stand_for_every_board() -> None:
    boards, weights = canonical_boards()
    assert len(boards) == 134459 and weights.sum() == math.comb(52, 5)


def test_the_kernel_equals_brute_force() -> None:
    boards, weights = canonical_boards()
    pick = np.random.default_rng(5).choice(len(boards), 40, replace=False)
    np.testing.assert_array_equal(class_sums(boards[pick], weights[pick]), _brute_force_sums(boards[pick], weights[pick]))


def test_the_shipped_table_is_exact_for_aces_against_kings() -> None:
    """``S[AA, KK]`` by enumerating all C(48, 5) boards for one ace pair against
    the six king pairs (every ace pair gives the same sum), and the zero-sum
    identity ``S = -S.T``; AA's equity against KK is the well-known 81.9 %."""
    sums = load_class_sums()
    np.testing.assert_array_equal(sums, -sums.T)
    aces = np.array([48, 49])  # the ace of the first two suits
    kings = list(itertools.combinations(range(44, 48), 2))
    total = 0
    for king in kings:
        deck = np.setdiff1d(np.arange(52), np.r_[aces, king])
        boards = deck[np.array(list(itertools.combinations(range(48), 5)), dtype=np.int64)]
        mine = rank_hands(np.concatenate([np.tile(aces, (len(boards), 1)), boards], axis=1)).astype(np.int64)
        theirs = rank_hands(np.concatenate([np.tile(king, (len(boards), 1)), boards], axis=1)).astype(np.int64)
        total += int(np.sign(mine - theirs).sum())
    aa, kk = 12 * 14, 11 * 14
    assert sums[aa, kk] == 6 * total  # six ace pairs, each against six king pairs
    equity = (1 + total / (6 * math.comb(48, 5))) / 2
    assert 0.819 < equity < 0.820


def test_values_are_run_outs_over_every_board_in_the_engine_units() -> None:
    """Against 4096 sampled boards (what :class:`Runouts` computes, drawn): the
    same values to sampling error, for a range the same across each class; a
    range that is not gets the sampled run-outs themselves."""
    hunl = load_game("hunl")
    table = HandTable(hunl)
    exact = runouts_for(table, ())
    assert isinstance(exact, PreflopShowdowns)
    rng = np.random.default_rng(6)
    reach = rng.random((2, CLASSES))[:, CLASS]
    stakes = np.array([100.0, 2000.0])
    got = exact.values(reach, stakes)
    sampled = Runouts(table, (), max_boards=4096, seed=1).values(reach, stakes)
    scale = stakes[:, None] * reach.sum(axis=1, keepdims=True)
    assert np.abs((got - sampled) / scale).max() < 0.05  # about 6 standard errors of 4096 boards
    assert np.abs((got - sampled) / scale).mean() < 0.01
    np.testing.assert_allclose((got * reach).sum(axis=1), 0.0, atol=1e-9 * np.abs(got * reach).sum())  # zero-sum
    one_hot = np.zeros((1, 1326))
    one_hot[0, 7] = 1.0
    fallback = runouts_for(table, (), max_boards=16, seed=3)
    np.testing.assert_array_equal(fallback.values(one_hot, stakes[:1]), Runouts(table, (), max_boards=16, seed=3).values(one_hot, stakes[:1]))


def test_one_card_to_come_keeps_every_river() -> None:
    table = HandTable(load_game("hunl"))
    runouts = runouts_for(table, (0, 13, 26, 39), max_boards=8, seed=1)
    assert isinstance(runouts, Runouts) and len(runouts.boards) == 48


def test_pre_flop_play_does_not_depend_on_the_boards_drawn() -> None:
    """The first decision's policy was a sample of 8 boards' (a hand's fold
    probability moved by 0.32 on average between seeds); now it is one policy."""
    hunl = load_game("hunl")
    state = State(hunl)
    policies = []
    for seed in (1, 2):
        agent = make_strategy("resolve:evaluator=equity,iterations=20", hunl, seed=seed)
        policies.append(agent.policy(PublicState(state, (), agent.actions(state))))
    np.testing.assert_allclose(policies[0], policies[1], atol=1e-12)


def test_class_reach_is_each_class_mean_and_refuses_a_range_that_differs_within_a_class() -> None:
    classes = HandClasses(HANDS)
    rng = np.random.default_rng(11)
    reach = rng.random((3, CLASSES))[:, classes.classes]
    got = classes.reach(reach)
    assert got is not None
    expected = np.stack([np.bincount(classes.classes, weights=row, minlength=CLASSES) for row in reach]) / classes.sizes
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0.0)
    nearly = reach.copy()
    nearly[2, 100] *= 1 + 1e-12  # within the tolerance: still one reach per class
    nearly_reach = classes.reach(nearly)
    assert nearly_reach is not None
    np.testing.assert_allclose(nearly_reach, expected, rtol=1e-11, atol=0.0)
    apart = reach.copy()
    apart[2, 100] += 1e-6
    assert classes.reach(apart) is None
