"""The tree sizes counted without building (strategies.cfr.tree.budget) equal the
built trees', and each limit stops the count."""

from __future__ import annotations

import pytest

from poker.gamedef import load_game
from strategies.cfr.tree.betting import build_betting_tree
from strategies.cfr.tree.budget import TooManyDecisions, TreeBudgetError, tree_size
from strategies.cfr.tree.multi import build_multi_tree
from strategies.cfr.tree.public import BettingAbstraction, build_tree

GAMES = {
    "kuhn": ("kuhn", None),
    "leduc": ("leduc", None),
    "no-limit leduc, pot and all-in": ("leduc.nolimit", BettingAbstraction()),
    "no-limit leduc, half pot, pot, 2 pots": ("leduc.nolimit", BettingAbstraction((0.5, 1.0, 2.0))),
}
UNLIMITED = {"max_betting_nodes": 10**9, "max_work": 10**9}


@pytest.mark.parametrize("case", sorted(GAMES))
def test_counts_equal_the_built_trees(case: str) -> None:
    name, abstraction = GAMES[case]
    game = load_game(name)
    size = tree_size(game, abstraction, **UNLIMITED)
    betting = build_betting_tree(game, abstraction)
    public = build_tree(game, abstraction)
    assert (size.betting_nodes, size.betting_decisions) == (betting.num_nodes, betting.num_decisions)
    assert (size.public_nodes, size.public_decisions) == (public.num_nodes, public.num_decisions)


def test_three_player_counts_equal_the_built_tree() -> None:
    game = load_game("kuhn3p")
    size = tree_size(game, None, **UNLIMITED)
    tree = build_multi_tree(game)
    decisions = len(tree.decision_nodes)
    assert (size.public_nodes, size.public_decisions) == (len(tree.kind), decisions)
    assert (size.betting_nodes, size.betting_decisions) == (len(tree.kind), decisions)  # no board: the same tree


@pytest.mark.parametrize("case", sorted(GAMES))
def test_the_decision_limit_is_exact(case: str) -> None:
    name, abstraction = GAMES[case]
    game = load_game(name)
    decisions = build_betting_tree(game, abstraction).num_decisions
    assert tree_size(game, abstraction, max_betting_decisions=decisions, **UNLIMITED).betting_decisions == decisions
    with pytest.raises(TooManyDecisions, match=f"over {decisions - 1:,} decisions"):
        tree_size(game, abstraction, max_betting_decisions=decisions - 1, **UNLIMITED)


def test_the_walk_stops_at_the_decision_limit_before_the_work_limit() -> None:
    # No-limit Leduc with 2,000,000-chip stacks and a 0.001-pot raise: tens of
    # thousands of situations; the walk stops after the 100th distinct one.
    from dataclasses import replace

    game = replace(load_game("leduc.nolimit"), stack=(2_000_000,) * 2, blind=(1, 1))
    tiny = BettingAbstraction((0.001,))
    with pytest.raises(TooManyDecisions, match="over 100 decisions"):
        tree_size(game, tiny, max_betting_nodes=10**9, max_work=1_000, max_betting_decisions=100)
    with pytest.raises(TreeBudgetError, match="too big to size up"):
        tree_size(game, tiny, max_betting_nodes=10**9, max_work=1_000)
