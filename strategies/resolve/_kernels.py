"""Numba kernels of the re-solver: CFR+ on a lookahead with the re-solving gadget
at its root, and one position's values at every node.

They reuse the engine's inline building blocks (:mod:`strategies.cfr.tree._kernels`:
``_propagate_reach``, ``_counterfactual_values``, ``_scratch``) so the tree
walk, terminal evaluation and regret-matching+ are the engine's, and add only
what the gadget needs (Burch thesis §5.2.5; seed 002 §4 and §7): before each of
the opponent's passes its root reach is the gadget's *follow* probability per
private hand, and after the pass each hand's regrets over {follow, terminate}
are updated by regret-matching+ from its root counterfactual value (follow) and
its constraint (terminate). The gadget is part of the opponent's strategy, so
it changes exactly when the opponent's strategy does, which keeps the engine's
"propagate only the position that changed" shortcut valid.

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
    MODE_CFR,
    MODE_CFR_PLUS,
    _counterfactual_values,
    _propagate_reach,
    _scratch,
)


@njit(cache=True, nogil=True)
def run_gadget_iterations(tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget):
    """CFR iterations as :func:`strategies.cfr.tree._kernels.run_iterations` (same
    ``state`` tuple, no restriction) with the gadget at the root; returns the
    number of the next iteration."""
    reach = state[11]
    if reach.shape[2] == FIXED_HANDS and tree[10].shape[1] == 1:
        return _run_gadget(
            tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget, FIXED_HANDS, 1
        )
    return _run_gadget(
        tree,
        payoff,
        decision_player,
        root_reach,
        first_iteration,
        iterations,
        state,
        gadget,
        reach.shape[2],
        tree[10].shape[1],
    )


@njit(cache=True, nogil=True, inline="always")
def _run_gadget(
    tree, payoff, decision_player, root_reach, first_iteration, iterations, state, gadget, n_hands, n_hole
):
    plus, alternating, linear, delay, regret, cumulative, sigma, sigma_play, fixed, p_conf, restricted, reach, values = (
        state
    )
    opponent, constraint, mask, gadget_regret = gadget
    mode = MODE_CFR_PLUS if plus else MODE_CFR
    scratch = _scratch(tree, n_hands)
    for t in range(first_iteration, first_iteration + iterations):
        if linear:
            weight = float(max(t - delay, 0))
        else:
            weight = 1.0 if t > delay else 0.0
        for step in range(2 if alternating else 1):
            reach[:, 0, :] = root_reach
            fresh = t == first_iteration and step == 0
            only = -1 if fresh or not alternating else 1 - step
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
    """Regret matching(+) over {follow, terminate} for every opponent hand: the
    follow action is worth the hand's root counterfactual value, terminate its
    constraint; the new follow probability goes into ``follow`` (0 for hands the
    opponent cannot hold)."""
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
def position_values(tree, payoff, strategy, mode, root_reach, reach, values, position):
    """``position``'s counterfactual values at every node into ``values[N, H]``
    against ``strategy`` (``[A, D, H]``): best-response values
    (``MODE_BEST_RESPONSE``, the maximum per hand at its own decisions) or the
    profile's (``MODE_VALUE``). ``reach`` is scratch ``[2, N, H]``."""
    if reach.shape[2] == FIXED_HANDS and tree[10].shape[1] == 1:
        _position_values(tree, payoff, strategy, mode, root_reach, reach, values, position, FIXED_HANDS, 1)
    else:
        _position_values(
            tree, payoff, strategy, mode, root_reach, reach, values, position, reach.shape[2], tree[10].shape[1]
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
