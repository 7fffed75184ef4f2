"""Three-player CFR and the seven-step epsilon check of seed 003 on 3p Kuhn."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from poker.evaluate import rank_hand
from poker.gamedef import load_game
from poker.state import State
from strategies.cfr.solvers.multiplayer import MultiCFR, MultiTree, build_multi_tree, seven_step_epsilon
from strategies.cfr.tree.public import TreeError

KUHN3 = build_multi_tree(load_game("kuhn3p"))


def _reference_best_response(tree: MultiTree, strategy: np.ndarray, position: int) -> float:
    """Per-history best response on a game without board cards: for each own
    card, the other two positions' card pairs carry their reach in a dict."""
    keys = {tree.states[n].betting_string(): n for n in range(len(tree.kind)) if tree.kind[n] == 0}
    cards = [int(h[0]) for h in tree.hands]

    def walk(state: State, own: int, others: dict[tuple[int, int], float]) -> float:
        if state.finished:
            total = 0.0
            for (a, b), r in others.items():
                hands = [a, b]
                hands.insert(position, own)
                ranks = [rank_hand([cards[h]]) for h in hands] if state.is_showdown() else None
                total += r * float(state.values(ranks)[position])
            return total
        node = keys[state.betting_string()]
        d = int(tree.decision_index[node])
        actions = [state.apply(a) for a in state.legal_actions()]
        actor = state.current_player()
        if actor == position:
            return max(walk(child, own, others) for child in actions)
        slot = [p for p in range(3) if p != position].index(actor)
        return sum(
            walk(child, own, {pair: r * strategy[d, a, pair[slot]] for pair, r in others.items()})
            for a, child in enumerate(actions)
        )

    total = 0.0
    for own in range(len(cards)):
        pairs = {(a, b): 1.0 for a, b in itertools.permutations(range(len(cards)), 2) if own not in (a, b)}
        total += walk(State(tree.game), own, pairs)
    return total / tree.num_deals


def test_multiplayer_uniform_profile_is_zero_sum_and_best_responses_match_the_reference() -> None:
    solver = MultiCFR(KUHN3)
    rng = np.random.default_rng(9)
    strategy = rng.random((KUHN3.num_decisions, KUHN3.max_actions, len(KUHN3.hands)))
    strategy /= strategy.sum(axis=1, keepdims=True)
    check = seven_step_epsilon(solver, strategy)
    assert sum(check.profile_values) == pytest.approx(0.0, abs=1e-12)
    for position in range(3):
        assert check.best_response_values[position] == pytest.approx(
            _reference_best_response(KUHN3, strategy, position), abs=1e-12
        )


def test_multiplayer_kuhn3p_seven_step_epsilon_below_one_hundredth() -> None:
    # Seed 003 (Abou Risk & Szafron 2010, Table 1): CFR on 3p Kuhn is an
    # epsilon-Nash equilibrium, epsilon 0.0016902 antes/hand after 1e8 iterations.
    # Our vanilla CFR (simultaneous updates, uniform average) with exact best
    # responses reaches epsilon 0.00552 after 1000 iterations (gains 0.00611,
    # 0.00602, 0.00444) and 0.00072 after 10000 (measured).
    solver = MultiCFR(KUHN3)
    solver.run(1000)
    check = seven_step_epsilon(solver)
    assert check.epsilon == pytest.approx(0.005524, abs=1e-5)
    assert check.epsilon < 0.01
    assert all(g >= -1e-12 for g in check.gains)  # a best response never does worse
    assert sum(check.profile_values) == pytest.approx(0.0, abs=1e-12)


def test_multiplayer_rejects_two_player_games() -> None:
    with pytest.raises(TreeError, match="this solver is for 3 players; the game has 2"):
        build_multi_tree(load_game("kuhn"))
