"""The public tree: shape, actions from poker.state, abstraction, subtrees, errors."""

from __future__ import annotations

import numpy as np
import pytest

from poker.gamedef import load_game
from poker.protocol import parse_betting
from poker.state import CALL, FOLD, Action, ActionType
from strategies.cfr.tree.public import BettingAbstraction, NodeKind, TreeError, build_tree, zero_sum_payoff

KUHN = load_game("kuhn")
LEDUC = load_game("leduc")
NL_LEDUC = load_game("leduc.nolimit")
RAISE = Action(ActionType.RAISE)


def test_tree_kuhn_has_the_four_public_decisions() -> None:
    tree = build_tree(KUHN)
    # Betting "", "c", "r", "cr"; terminals "cc", "rf", "rc", "crf", "crc": 9 nodes.
    assert tree.num_nodes == 9
    keys = [tree.key(int(n)) for n in tree.decision_nodes]
    assert keys == ["", "c", "r", "cr"]
    assert tree.actions(0) == (CALL, RAISE)  # fold is illegal when a check is free
    assert tree.actions(int(tree.decision_nodes[2])) == (FOLD, CALL)
    assert list(tree.decision_player) == [0, 1, 1, 0]
    assert tree.num_hands == 3
    assert int(np.count_nonzero(tree.kind == NodeKind.SHOWDOWN)) == 3


def test_tree_children_parents_and_groups_agree() -> None:
    tree = build_tree(LEDUC)
    for node in range(1, tree.num_nodes):
        parent = int(tree.parent[node])
        assert parent < node
        assert tree.children(parent)[tree.action_index[node]] == node
    # Groups: nodes whose subtrees have the same shape, wherever they are. Leduc:
    # the six round-one decisions alone; the 5 chance nodes; round two's six
    # decision groups of 5 histories x 6 boards; every fold by one position (2
    # in round one, 60 in round two); every showdown.
    starts = tree.group_start
    assert np.diff(starts).tolist() == [1] * 6 + [5] + [30] * 6 + [62, 62, 150]
    for g in range(len(starts) - 1):
        start, end = int(starts[g]), int(starts[g + 1])
        for array in (tree.kind, tree.player, tree.num_children):
            assert len(set(array[start:end].tolist())) == 1
        if tree.kind[start] == NodeKind.DECISION:
            # Each action's children are one contiguous run in member order.
            actions = int(tree.num_children[start])
            offsets = tree.action_child[start:end, :actions] - np.arange(end - start)[:, None]
            assert (offsets == offsets[0]).all()
            assert (tree.decision_index[start:end] == tree.decision_index[start] + np.arange(end - start)).all()


def test_tree_leduc_has_936_information_sets() -> None:
    # Burch (2017) thesis §4.3: Leduc has 936 information sets.
    tree = build_tree(LEDUC)
    per_node = tree.board_mask[tree.board_index[tree.decision_nodes]].sum(axis=1)
    assert per_node.sum() == 936
    # 6 round-one decisions + 5 sequences reaching round two x 6 boards x 6 decisions.
    assert tree.num_decisions == 6 + 5 * 6 * 6
    chance = np.flatnonzero(tree.kind == NodeKind.CHANCE)
    assert len(chance) == 5
    # Given both private cards, 4 board cards remain.
    assert set(tree.chance_weight[chance]) == {0.25}


def test_tree_leduc_showdown_ranks_pair_over_high_card() -> None:
    tree = build_tree(LEDUC)
    board = tree.boards.index((42,))  # the queen of hearts (Q is Leduc's lowest rank here)
    ranks = tree.hand_rank[board]
    by_card = {int(tree.hands[h, 0]): int(ranks[h]) for h in range(tree.num_hands)}
    assert by_card[42] == -1  # clashes with the board
    assert by_card[43] > by_card[51] > by_card[47]  # pair of queens > A high > K high
    assert tree.num_valid[board] == 5
    order = tree.rank_order[board, :5]
    assert list(ranks[order]) == sorted(ranks[order])


def test_tree_zero_sum_payoff() -> None:
    tree = build_tree(KUHN)
    payoff = zero_sum_payoff(tree)
    rf = tree.states.index(parse_betting("rf", KUHN))
    assert list(payoff[rf, :, 0]) == [1.0, -1.0]  # position 1 folds its ante to the bet
    crc = tree.states.index(parse_betting("crc", KUHN))
    assert payoff[crc].tolist() == [[2.0, 0.0, -2.0], [2.0, 0.0, -2.0]]
    folds = tree.kind == NodeKind.FOLD
    assert (payoff[folds, 0, 0] == -payoff[folds, 1, 0]).all()
    showdowns = tree.kind == NodeKind.SHOWDOWN
    assert (payoff[showdowns, 0, 0] == -payoff[showdowns, 1, 2]).all()  # one's win is the other's loss


def test_tree_nolimit_abstraction_clamps_and_dedupes_sizes() -> None:
    # NL Leduc: blinds 100/100, stacks 1200. At the root the pot after calling is
    # 200, so 0.1 pot = r120 -> clamped to the minimum r200, 0.5 pot = r200 too,
    # 2 pot = r500; all-in is r1200.
    tree = build_tree(NL_LEDUC, BettingAbstraction((0.1, 0.5, 2.0)))
    assert tree.actions(0) == (CALL, Action.raise_to(200), Action.raise_to(500), Action.raise_to(1200))
    no_raises = build_tree(NL_LEDUC, BettingAbstraction((), all_in=False))
    assert no_raises.actions(0) == (CALL,)
    default = build_tree(NL_LEDUC)
    assert default.actions(0) == (CALL, Action.raise_to(300), Action.raise_to(1200))


def test_tree_nolimit_all_in_preflop_runs_out_the_board() -> None:
    tree = build_tree(NL_LEDUC)
    all_in_called = tree.states.index(parse_betting("r1200c", NL_LEDUC))
    assert tree.kind[all_in_called] == NodeKind.CHANCE
    first = tree.children(all_in_called)[0]
    assert tree.num_children[all_in_called] == 6
    assert tree.kind[first] == NodeKind.SHOWDOWN
    assert tree.spent[first].tolist() == [1200, 1200]


def test_tree_subtree_from_a_state_and_board_matches_the_full_tree() -> None:
    full = build_tree(LEDUC)
    root = parse_betting("rc", LEDUC)
    sub = build_tree(LEDUC, root=root, board=(47,))
    assert sub.kind[0] == NodeKind.DECISION
    start = full.states.index(root)
    in_full = {
        full.key(n)
        for n in range(full.num_nodes)
        if full.boards[full.board_index[n]] == (47,) and full.states[n].actions[0] == root.actions[0]
    }
    assert sub.num_nodes == len(in_full)
    assert {sub.key(n) for n in range(sub.num_nodes)} == in_full
    assert full.kind[start] == NodeKind.CHANCE
    before_deal = build_tree(LEDUC, root=root)
    assert before_deal.kind[0] == NodeKind.CHANCE and before_deal.num_children[0] == 6


def test_tree_rejects_what_it_cannot_build() -> None:
    with pytest.raises(TreeError, match="handles 2 players; the game has 3"):
        build_tree(load_game("kuhn3p"))
    with pytest.raises(TreeError, match="a limit game has no betting abstraction"):
        build_tree(LEDUC, BettingAbstraction())
    with pytest.raises(TreeError, match="a root in round 1 needs 1 board cards"):
        build_tree(LEDUC, root=parse_betting("rc", LEDUC), board=(42, 43))
    with pytest.raises(TreeError, match="repeats a card or holds a card outside the deck"):
        build_tree(LEDUC, root=parse_betting("rc", LEDUC), board=(0,))
    with pytest.raises(TreeError, match="pot fractions must be positive"):
        BettingAbstraction((0.0,))


def test_tree_suit_isomorphism_keeps_one_board_per_class() -> None:
    # Leduc's two suits are symmetric: Q, K, A boards of one suit stand for both.
    tree = build_tree(LEDUC, isomorphism=True)
    assert sorted(tree.boards) == [(), (42,), (46,), (50,)]  # Qh, Kh, Ah
    assert tree.hand_perm.tolist() == [[0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 5, 4]]  # identity, swap suits
    chance = int(np.flatnonzero(tree.kind == NodeKind.CHANCE)[0])
    for child in tree.children(chance):
        assert tree.image_perm[tree.image_start[child] : tree.image_start[child + 1]].tolist() == [0, 1]
    assert tree.num_decisions == 6 + 5 * 3 * 6
    with pytest.raises(TreeError, match="suit isomorphism needs a root with no board cards"):
        build_tree(LEDUC, root=parse_betting("rc", LEDUC), board=(47,), isomorphism=True)


def test_tree_refuses_trees_beyond_the_size_limit() -> None:
    with pytest.raises(TreeError, match="over the limit of 1,000 \\(max_entries\\)"):
        build_tree(LEDUC, max_entries=1000)
    with pytest.raises(TreeError, match="solve a subtree, a smaller game or an abstraction instead"):
        build_tree(load_game("hulhe"))
