"""Pre-flop depth limits valued by the blueprint's flop values, each hand by its
own flop sequences (:mod:`strategies.resolve.preflop_leaves`): the class
matrices against a brute-force average over every flop, the suit symmetry that
lets 1,755 flops stand for 22,100, and the fallback for a range that is not the
same across a class."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest

from poker.gamedef import load_game
from poker.state import CALL, Action, State
from strategies.resolve.continuations import Blueprint, ContinuationLeaves, ContinuationValues, open_blueprint
from strategies.resolve.evaluators import HandTable
from strategies.resolve.preflop_leaves import FlopAveraged

HUNL = load_game("hunl")


@cache
def _blueprint() -> Blueprint:
    return open_blueprint(HUNL, None, "test")


@cache
def _averaged() -> FlopAveraged:
    blueprint = _blueprint()
    return FlopAveraged(blueprint.sequences, HandTable(HUNL).cards.astype(np.int64), blueprint.game.sequences[1])


def _brute_force(values: np.ndarray, reach: np.ndarray, hand: int, position: int) -> float:
    """Hand ``hand``'s counterfactual value: over every flop it misses, the
    opponent's hands that miss the flop and the hand, each weighted by its reach,
    with ``values`` (position 0's chips by flop sequence pair) on that flop."""
    cards = HandTable(HUNL).cards.astype(np.int64)
    mine = set(cards[hand].tolist())
    others = ~np.isin(cards, list(mine)).any(axis=1)
    total = 0.0
    for flop in itertools.combinations([c for c in range(52) if c not in mine], 3):
        seq = _blueprint().sequences.buckets(1, list(flop)).astype(np.int64)
        valid = others & (seq >= 0)
        chips = values[seq[hand], seq[valid]] if position == 0 else -values[seq[valid], seq[hand]]
        total += float((reach[valid] * chips).sum())
    return total / math.comb(48, 3)


@pytest.mark.parametrize("position", [0, 1])
def test_class_values_equal_the_average_over_every_flop(position: int) -> None:
    averaged = _averaged()
    width = averaged.width
    rng = np.random.default_rng(position)
    values = rng.normal(size=(width, width))
    reach = rng.random(169)[averaged.hand_classes.classes]
    class_reach = averaged.hand_classes.reach(reach[None])
    assert class_reach is not None
    got = averaged.values(class_reach, averaged.matrix(values, position)[None])[0]
    hand = int(np.flatnonzero(averaged.hand_classes.classes == 12 * 13 + 11)[0])  # AKs
    assert got[hand] == pytest.approx(_brute_force(values, reach, hand, position), rel=1e-12)


def test_flop_buckets_treat_suits_alike() -> None:
    """What lets a suit-isomorphic flop stand for its class: a suit permutation of
    the flop and the hand gives the same bucket sequence."""
    sequences = _blueprint().sequences
    cards = HandTable(HUNL).cards.astype(np.int64)
    row = {tuple(sorted(h)): i for i, h in enumerate(cards.tolist())}
    rng = np.random.default_rng(3)
    for _ in range(20):
        flop = rng.choice(52, 3, replace=False)
        suits = rng.permutation(4)
        mapped = (cards // 4) * 4 + suits[cards % 4]
        order = np.array([row[tuple(sorted(h))] for h in mapped.tolist()])
        before = sequences.buckets(1, flop.tolist())
        after = sequences.buckets(1, ((flop // 4) * 4 + suits[flop % 4]).tolist())
        np.testing.assert_array_equal(after[order], before)


def test_a_range_not_the_same_across_a_class_keeps_the_bucket_values() -> None:
    """Class matrices hold only for class-symmetric ranges: any other is valued
    by the blueprint's pre-flop buckets, as without them."""
    table = HandTable(HUNL)
    leaves = ContinuationLeaves(ContinuationValues(_blueprint(), 1), table, 1, blueprint_before=True)
    state = State(HUNL).apply(Action.raise_to(300)).apply(CALL)
    symmetric = np.ones((2, 1, table.num_hands))
    assert leaves.blueprint_street_values([state], symmetric) is not None
    lopsided = symmetric.copy()
    lopsided[1, 0, 0] = 0.5
    assert leaves.blueprint_street_values([state], lopsided) is None


def test_a_blend_mixes_the_blueprint_and_equity_values_by_its_share() -> None:
    """``preflop_blend=W``: a pre-flop leaf's values are W of the blueprint's
    (each hand by its flop sequences) and 1 - W of check-down equity's, for
    both positions, at a called raise and at a limp; W = 1 is the blueprint's."""
    from strategies.resolve.continuations import CarriedByBlueprint
    from strategies.resolve.evaluators import EquityEvaluator

    table = HandTable(HUNL)
    equity = EquityEvaluator(HUNL)
    leaves_states = [State(HUNL).apply(Action.raise_to(300)).apply(CALL), State(HUNL).apply(CALL).apply(CALL)]
    reach = np.random.default_rng(3).random((2, 1, 169))[:, :, _classes(table)].repeat(2, axis=1)
    picks = np.full(2, -1, dtype=np.int8)
    blueprint = ContinuationLeaves(ContinuationValues(_blueprint(), 1), table, 1, blueprint_before=1.0)
    pure, deals, by_deal = CarriedByBlueprint(equity, blueprint, 1.0).street_values((), leaves_states, picks, reach)
    known = blueprint.blueprint_street_values(leaves_states, reach)
    assert known is not None and deals == [] and by_deal is None
    np.testing.assert_array_equal(pure, known[0])
    own = equity.street_values((), leaves_states, picks, reach)[0]
    assert np.abs(own - pure).max() > 100  # the two differ by chips: a mix is not either
    mixed, deals, by_deal = CarriedByBlueprint(equity, blueprint, 0.25).street_values((), leaves_states, picks, reach)
    assert deals == [] and by_deal is None
    np.testing.assert_allclose(mixed, 0.25 * pure + 0.75 * own, rtol=0, atol=1e-9)


def _classes(table: HandTable) -> np.ndarray:
    """Each hand's class (0-168): a range drawn per class is the same across it."""
    from strategies.resolve.preflop_equity import hand_classes

    return hand_classes(table.cards.astype(np.int64))
