"""Continual re-solving in HUNL with the ``equity`` heuristic at each street's
end: a short match over TCP within the dealer's default time limits, and the
LBR acceptance figure that is exact (always-fold: 750 mbb/g); with the
blueprint's continuations at each street's end, the values carried to the
next street."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena.commands.match import main as match_main
from poker.gamedef import load_game
from poker.state import CALL, State
from strategies.base import PublicState, make_strategy
from strategies.lbr import LbrConfig, run_lbr
from strategies.resolve.agent import ResolvingStrategy
from strategies.resolve.street_tree import StreetTree

HUNL = load_game("hunl")
SPEC = "resolve:evaluator=equity,iterations=30,boards=16"


def test_lbr_wins_exactly_750_mbb_against_always_fold_in_hunl() -> None:
    """Always-fold folds every hand it may: LBR (which never folds for free)
    wins the small blind (50) as the big blind and the big blind (100) as the
    small blind: 75 chips = 750 mbb/g per duplicate pair, with no variance."""
    result = run_lbr(HUNL, "always-fold", 6, seed=2, config=LbrConfig("fcpa", frozenset({0, 1, 2, 3})))
    assert result.values.tolist() == [[50.0, 100.0]] * 6 or result.values.tolist() == [[100.0, 50.0]] * 6
    assert result.estimate.mean * 10 == 750.0 and result.estimate.half_width == 0.0


@pytest.mark.slow
def test_hunl_match_over_tcp_without_warnings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["hunl", SPEC, "always-call", "--hands", "10", "--seed", "3", "--duplicate", "--in-process"]
    assert match_main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs
    assert [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    results = json.loads((run / "results.json").read_text())
    assert "resolve" in json.dumps(results)


def test_hunl_policy_answers_every_hand_and_carries_across_the_flop() -> None:
    agent = make_strategy(SPEC, HUNL, seed=1)
    assert isinstance(agent, ResolvingStrategy)
    root = agent.root_solve()
    assert root.tree.kind.tolist().count(1) > 0  # stops at the flop
    state = State(HUNL).apply(CALL).apply(CALL)  # limp, check: the flop, the big blind to act
    board = (0, 13, 26)
    policy = agent.policy(PublicState(state, board, agent.actions(state)))
    assert policy.shape == (1326, len(agent.actions(state)))
    dealt = np.array([any(c in board for c in hand) for hand in agent._hand_row])
    np.testing.assert_allclose(policy[~dealt].sum(axis=1), 1.0)
    resolved = agent.resolution(state, board)
    assert resolved is not None and resolved.constraint is not None
    assert np.isfinite(resolved.constraint).all()


def test_continuation_leaves_carry_the_opponent_s_values_to_the_turn() -> None:
    """``resolve:evaluator=continuations`` (the shipped blueprint's four
    continuations from the flop on): the flop re-solve's depth limits are the
    opponent's picks, and the turn re-solve after a checked flop starts from its
    values on the turn card that came (finite constraints); the policy is a
    distribution for every hand and the same for the same seed."""
    spec = "resolve:evaluator=continuations,iterations=10"
    agent, again = (make_strategy(spec, HUNL, seed=4) for _ in range(2))
    assert isinstance(agent, ResolvingStrategy) and isinstance(again, ResolvingStrategy)
    flop = State(HUNL).apply(CALL).apply(CALL)
    board = (0, 13, 26)
    resolved = agent.resolution(flop, board)
    assert resolved is not None and isinstance(resolved.tree, StreetTree)
    assert any(resolved.tree.is_pick(node) for node in range(resolved.tree.num_nodes))
    turn = flop.apply(CALL).apply(CALL)
    dealt = (*board, 39)
    later = agent.resolution(turn, dealt)
    assert later is not None and later.constraint is not None and np.isfinite(later.constraint).all()
    public = PublicState(turn, dealt, agent.actions(turn))
    policy = agent.policy(public)
    live = np.array([not any(c in dealt for c in hand) for hand in agent._hand_row])
    np.testing.assert_allclose(policy[live].sum(axis=1), 1.0)
    np.testing.assert_array_equal(policy, again.policy(public))
