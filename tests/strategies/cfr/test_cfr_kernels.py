"""Each kernel against a direct pure-Python computation on small random inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from strategies.cfr.tree import _kernels


def _hands(n_cards: int, n_hole: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(n_cards), n_hole)), dtype=np.int64).reshape(-1, n_hole)


@pytest.mark.parametrize("n_hole", [1, 2])
def test_kernels_fold_values_equal_the_pairwise_sum(n_hole: int) -> None:
    rng = np.random.default_rng(7)
    hands = _hands(9, n_hole)
    reach = rng.random(len(hands))
    out = np.zeros(len(hands))
    _kernels.fold_values(reach, hands, -3.0, out, np.zeros(9))
    for h, mine in enumerate(hands):
        expected = sum(reach[o] for o, theirs in enumerate(hands) if not set(mine) & set(theirs))
        assert out[h] == pytest.approx(-3.0 * expected, rel=1e-12)


@pytest.mark.parametrize("n_hole", [1, 2])
def test_kernels_showdown_values_equal_the_pairwise_sum(n_hole: int) -> None:
    rng = np.random.default_rng(11)
    hands = _hands(10, n_hole)
    n = len(hands)
    reach = rng.random(n)
    ranks = rng.integers(0, 6, size=n).astype(np.int32)  # few ranks: many ties
    valid = rng.random(n) < 0.8  # the rest clash with a (notional) board
    reach[~valid] = 0.0
    ranks[~valid] = -1
    order = np.flatnonzero(valid)[np.argsort(ranks[valid], kind="stable")].astype(np.int32)
    order = np.concatenate([order, np.zeros(n - len(order), dtype=np.int32)])
    win, tie, lose = 2.5, 0.25, -1.5
    out = np.zeros(n)
    _kernels.showdown_values(
        reach,
        hands,
        order,
        int(valid.sum()),
        ranks,
        win,
        tie,
        lose,
        out,
        np.zeros(n),
        np.zeros(n),
        np.zeros(10),
        np.zeros(10),
    )
    for h, mine in enumerate(hands):
        expected = 0.0
        if valid[h]:
            for o, theirs in enumerate(hands):
                if set(mine) & set(theirs) or not valid[o]:
                    continue
                outcome = win if ranks[h] > ranks[o] else lose if ranks[h] < ranks[o] else tie
                expected += outcome * reach[o]
        assert out[h] == pytest.approx(expected, rel=1e-12, abs=1e-12)


# Strategy-shaped kernel arrays are [action, decision row, hand].


def test_kernels_regret_matching_normalises_positive_regrets() -> None:
    regret = np.array([[[3.0, -1.0]], [[1.0, -2.0]], [[-5.0, 0.0]]])  # 3 actions, one row, 2 hands
    sigma = np.zeros_like(regret)
    _kernels.regret_matching(regret, np.array([3], dtype=np.int32), np.array([0], dtype=np.int8), -1, sigma)
    # Hand 0: positive regrets 3 and 1 -> 3/4, 1/4, 0. Hand 1: none positive -> uniform.
    assert sigma[:, 0, 0].tolist() == [0.75, 0.25, 0.0]
    assert sigma[:, 0, 1].tolist() == pytest.approx([1 / 3] * 3)


def test_kernels_regret_matching_skips_the_other_position() -> None:
    regret = np.ones((2, 2, 1))
    sigma = np.full_like(regret, 7.0)
    _kernels.regret_matching(regret, np.array([2, 2], dtype=np.int32), np.array([0, 1], dtype=np.int8), 1, sigma)
    assert sigma[:, 0].ravel().tolist() == [7.0, 7.0]
    assert sigma[:, 1].ravel().tolist() == [0.5, 0.5]


def test_kernels_normalise_falls_back_to_uniform() -> None:
    cumulative = np.array([[[2.0, 0.0]], [[6.0, 0.0]]])
    out = np.zeros_like(cumulative)
    _kernels.normalise(cumulative, np.array([2], dtype=np.int32), out)
    assert out[:, 0].tolist() == [[0.25, 0.5], [0.75, 0.5]]


def test_kernels_mix_fixed_mixes_only_the_restricted_rows() -> None:
    sigma = np.array([[[1.0], [1.0]], [[0.0], [0.0]]])
    fixed = np.array([[[0.0], [0.0]], [[1.0], [1.0]]])
    p_conf = np.array([[0.25], [0.25]])
    out = np.zeros_like(sigma)
    _kernels.mix_fixed(sigma, fixed, p_conf, np.array([0, 1], dtype=np.int8), 1, out)
    assert out[:, 0].ravel().tolist() == [1.0, 0.0]
    assert out[:, 1].ravel().tolist() == [0.75, 0.25]
