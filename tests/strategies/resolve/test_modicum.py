"""Depth-limited solving with continuation strategies (Modicum): the leaf values
against a brute-force walk of the rest of the hand, Leduc's full-game solution
reproduced from a depth limit at the end of the first round, and the agent's
reproducibility and options."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import load_game
from poker.state import CALL, Action, ActionType, State
from strategies.base import PublicState, StrategyError, make_strategy
from strategies.cfr.abstraction.card_abstraction import NullAbstraction
from strategies.cfr.solvers.abstract_game import AbstractCFR
from strategies.cfr.solvers.abstract_solve import AbstractSolve, LosslessSequences
from strategies.cfr.tree.public import NodeKind, tree_actions
from strategies.resolve import _kernels
from strategies.resolve.continuations import (
    BIAS_FACTOR,
    BIASES,
    Blueprint,
    ContinuationEvaluator,
    ContinuationValues,
    abstract_history,
    blueprint_locate,
)
from strategies.resolve.depth_limited import DepthLimitedResolution, build_street_tree, solve_street
from strategies.resolve.evaluators import HandTable
from strategies.resolve.lookahead import lookahead_abstraction
from strategies.resolve.modicum import ModicumStrategy

LEDUC = load_game("leduc")
#: CFR+ iterations of the Leduc blueprint: abstract-game exploitability 8.0e-5 chips a hand.
BLUEPRINT_ITERATIONS = 2000


@cache
def leduc_blueprint() -> Blueprint:
    """Leduc solved with no card abstraction: the abstract game is the real one."""
    solve = AbstractSolve.build(NullAbstraction(LEDUC))
    solver = AbstractCFR(solve.game)
    solver.run(BLUEPRINT_ITERATIONS)
    return Blueprint(solve.game, LosslessSequences(LEDUC), solver.average())


def _brute_force(blueprint: Blueprint, state: State, chooser: int, bias: int, hands: tuple[int, int], board: int) -> float:
    """Position 0's chips from ``state`` on with the hands (card per position) and
    the board card, the chooser playing continuation ``bias``: a walk over States."""
    if state.finished:
        ranks = [int(rank_hands(np.array([[hands[p], board]]))[0]) for p in range(2)]
        return float(state.values(ranks)[0])
    player = state.current_player()
    node = blueprint.game.tree.node_of_key[state.betting_string()]
    row = blueprint.rows(node, (board,) if state.round else ())[_hand_index(hands[player])]
    actions = tree_actions(state, None)
    if player == chooser and bias:
        row = row * np.array([BIAS_FACTOR if _kind(a) == bias else 1.0 for a in actions])
        row = row / row.sum()
    return sum(float(p) * _brute_force(blueprint, state.apply(a), chooser, bias, hands, board) for p, a in zip(row, actions) if p > 0)


def _kind(action) -> int:  # type: ignore[no-untyped-def]
    return {"FOLD": 1, "CALL": 2, "RAISE": 3}[action.type.name]


def _hand_index(card: int) -> int:
    return [int(h[0]) for h in private_hands(LEDUC)].index(card)


def test_continuation_values_are_the_rest_of_the_hand_played_out() -> None:
    """``V_k[h0, h1]`` at a round-two node is position 0's expected chips over the
    board cards when the chooser plays continuation k: to rounding, for every
    continuation, chooser and pair of hands (no card abstraction: exact)."""
    blueprint = leduc_blueprint()
    values = ContinuationValues(blueprint)
    cards = [int(h[0]) for h in private_hands(LEDUC)]
    for betting in ("cc", "rc"):
        state = State(LEDUC)
        for action in betting:
            state = state.apply(CALL if action == "c" else tree_actions(state, None)[-1])
        node = blueprint.game.tree.node_of_key[state.betting_string()]
        for chooser in range(2):
            table = values.at(node, chooser)
            assert table.shape == (len(BIASES), 6, 6)
            for bias in range(len(BIASES)):
                for i, j in itertools.permutations(range(6), 2):
                    boards = [c for c in sorted(LEDUC.deck()) if c not in (cards[i], cards[j])]
                    exact = np.mean([_brute_force(blueprint, state, chooser, bias, (cards[i], cards[j]), b) for b in boards])
                    assert table[bias, i, j] == pytest.approx(exact, abs=1e-9)


def test_leaf_values_are_the_reach_weighted_continuation_values() -> None:
    """The evaluator's counterfactual values are ``sum_o reach(o) V[h, o]`` over
    opponent hands sharing no card (position 1: ``-V`` transposed), here at two
    picks of one leaf (the chooser's reach differs, the other's is the leaf's)."""
    blueprint = leduc_blueprint()
    values = ContinuationValues(blueprint)
    table = HandTable(LEDUC)
    evaluator = ContinuationEvaluator(values, 1, blueprint_locate(blueprint), table)
    leaves = [State(LEDUC).apply(CALL).apply(CALL)] * 2
    reach = np.random.default_rng(3).random((2, 2, 6))
    reach[0, 1] = reach[0, 0]
    out, _, _ = evaluator.street_values((), leaves, np.array([0, 3], dtype=np.int8), reach)
    node = blueprint.game.tree.node_of_key[leaves[0].betting_string()]
    cards = [int(h[0]) for h in private_hands(LEDUC)]
    clash = np.array([[cards[i] == cards[j] for j in range(6)] for i in range(6)])
    for leaf, bias in enumerate((0, 3)):
        v = np.where(clash, 0.0, values.at(node, 1)[bias])
        assert out[0, leaf] == pytest.approx(v @ reach[1, leaf], abs=1e-12)
        assert out[1, leaf] == pytest.approx(-(v.T @ reach[0, leaf]), abs=1e-12)


def test_the_spread_within_a_sequence_is_each_hands_showdown_about_the_sequences_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    """``within_bucket``: each hand's check-down value of the leaf's pot against
    the other's reach (brute force over Leduc's board cards), less the
    own-reach-weighted mean over the hands of its sequence, added W times to the
    values. Leduc's own sequences hold one card each (no spread at all), so
    here jacks and queens share one, kings another, as a bucketing would."""
    blueprint = leduc_blueprint()
    values = ContinuationValues(blueprint)
    table = HandTable(LEDUC)
    plain = ContinuationEvaluator(values, 1, blueprint_locate(blueprint), table)
    within = ContinuationEvaluator(values, 1, blueprint_locate(blueprint), table, within=0.5)
    cards = [int(h[0]) for h in private_hands(LEDUC)]
    rank = [cards.index(c) // 2 for c in cards]  # Leduc's deck: J, J, Q, Q, K, K
    grouping = np.array([min(r, 1) for r in rank])
    for evaluator in (plain, within):
        monkeypatch.setattr(evaluator, "_sequence", lambda round_, board: grouping)
    leaves = [State(LEDUC).apply(CALL).apply(CALL), State(LEDUC).apply(Action(ActionType.RAISE)).apply(CALL)]
    reach = np.random.default_rng(5).random((2, 2, 6))
    reach[0, 1, 0] = 0.0
    picks = np.array([0, 2], dtype=np.int8)
    out, _, _ = within.street_values((), leaves, picks, reach)
    base, _, _ = plain.street_values((), leaves, picks, reach)
    for leaf, state in enumerate(leaves):
        stake = min(state.spent)
        for p in range(2):
            showdown = np.zeros(6)
            for h, mine in enumerate(cards):
                for o, theirs in enumerate(cards):
                    if o != h:
                        boards = [b for b in cards if b not in (mine, theirs)]
                        ours = rank_hands(np.array([[mine, b] for b in boards]))
                        other = rank_hands(np.array([[theirs, b] for b in boards]))
                        showdown[h] += reach[1 - p, leaf, o] * stake * float(np.mean(np.sign(ours - other)))
            own = reach[p, leaf]
            spread = np.zeros(6)
            for group in range(2):
                members = np.flatnonzero(grouping == group)
                spread[members] = showdown[members] - own[members] @ showdown[members] / own[members].sum()
                # the sequence's own-reach-weighted total stays the blueprint's
                assert own[members] @ (out[p, leaf, members] - base[p, leaf, members]) == pytest.approx(0.0, abs=1e-12)
            assert within.spread(0, (), leaves, reach, p)[leaf] == pytest.approx(spread, abs=1e-12)
            assert out[p, leaf] - base[p, leaf] == pytest.approx(0.5 * spread, abs=1e-12)
            assert np.abs(spread).max() > 0.1  # not a vacuous check: the grouping spreads


def test_two_card_sequence_values_are_the_sum_over_compatible_hands() -> None:
    """Hold'em's hands hold two cards, which the per-card inclusion-exclusion of
    the sequence kernel must add back once: ``sum_o M[s(h), s(o)] reach(o)``
    over the opponent hands sharing no card with h, against the pairwise sum
    (hands with sequence -1, on the board, hold nothing and get 0)."""
    table = HandTable(load_game("hunl"))
    rng = np.random.default_rng(7)
    width = 5
    sequence = rng.integers(-1, width, table.num_hands)
    matrices = rng.normal(size=(4, width, width))
    group = np.array([1, 0, 1, 1])
    reach = rng.random((2, table.num_hands))
    out = np.empty((4, table.num_hands))
    _kernels.sequence_values(matrices, group, reach, sequence, table.slots, out)
    cards = table.cards.astype(np.int64)
    compatible = ~(cards[:, None, :, None] == cards[None, :, None, :]).any(axis=(2, 3))
    held = sequence >= 0
    for leaf in range(4):
        pairs = matrices[leaf][np.ix_(np.where(held, sequence, 0), np.where(held, sequence, 0))]
        expected = (pairs * (compatible & held[:, None] & held[None, :])) @ reach[group[leaf]]
        np.testing.assert_allclose(out[leaf], expected, rtol=0, atol=1e-9)


def _first_round(continuations: int, iterations: int) -> tuple[Blueprint, DepthLimitedResolution, float]:
    """Leduc's first round solved from the root with the opponent (position 1)
    picking among ``continuations`` blueprint continuations at its end, and the
    number of hand pairs (the units of a root value)."""
    blueprint = leduc_blueprint()
    values = ContinuationValues(blueprint, continuations)
    table = HandTable(LEDUC)
    tree = build_street_tree(LEDUC, State(LEDUC), (), None, table, continuations=continuations, chooser=1)
    evaluator = ContinuationEvaluator(values, 1, blueprint_locate(blueprint), table)
    result = solve_street(tree, evaluator, 0, np.ones(6), opponent_range=np.ones(6), iterations=iterations)
    return blueprint, result, 6 * 5.0


def _with_first_round(blueprint: Blueprint, result: DepthLimitedResolution, position: int) -> np.ndarray:
    """The blueprint with ``position``'s first-round strategy replaced by the re-solve's."""
    game = blueprint.game
    tree = result.tree
    combined = blueprint.strategy.copy()
    for node in range(tree.num_nodes):
        if tree.kind[node] != NodeKind.DECISION or tree.states[node].round > 0 or tree.player[node] != position:
            continue
        row = int(tree.decision_index[node])
        target = game.tree.node_of_key[tree.states[node].betting_string()]
        n, start = int(game.num_children[target]), int(game.doff[target])
        combined[:n, start : start + 6] = result.strategy[row, :n, :]
    return combined


def test_one_exact_continuation_gives_the_game_value_not_the_strategy() -> None:
    """With the equilibrium's own continuation as the only one, the depth-limited
    game's value is Leduc's: each game's value lies in ``[-BR_1, BR_0]`` of its
    solution (best-response values, per hand pair; the width is twice the
    exploitability: 1.6e-4 for the blueprint's 2000 CFR+ iterations, 1.3e-4 for
    the re-solve's), and the two intervals meet. The solution is not an
    equilibrium strategy though: the opponent cannot change course after the
    limit, so the re-solved first round is exploitable (Brown, Sandholm &
    Amos's reason for several continuations)."""
    blueprint, result, pairs = _first_round(1, 2000)
    game = blueprint.game
    assert result.best_response is not None
    full = game.best_response(blueprint.strategy)
    depth_limited = (result.best_response[0, 0].sum() / pairs, result.best_response[1, 0].sum() / pairs)
    assert 0 <= sum(full) < 2e-4 and 0 <= sum(depth_limited) < 2e-4
    assert max(-full[1], -depth_limited[1]) <= min(full[0], depth_limited[0])
    game_value = -game.profile_values(blueprint.strategy)[0]
    ours = _with_first_round(blueprint, result, 0)
    assert game.best_response(ours)[1] > game_value + 0.5  # the opponent wins half a chip more a hand


def test_four_continuations_reproduce_the_full_game_solution() -> None:
    """With the blueprint and its fold-, call- and raise-biased versions to pick
    from, the re-solved first round of position 0, played with the blueprint
    after it, is an equilibrium strategy of Leduc to within 3e-4 chips a hand:
    the opponent's best response wins at most that much more than the game
    value (blueprint: 8e-5 from its 2000 CFR+ iterations; the re-solve's own
    gap after 2000 iterations is of the same order)."""
    blueprint, result, _ = _first_round(len(BIASES), 2000)
    game = blueprint.game
    game_value = -game.profile_values(blueprint.strategy)[0]
    ours = _with_first_round(blueprint, result, 0)
    assert game.best_response(ours)[1] - game_value < 3e-4


def test_the_agent_is_reproducible_from_its_seed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two agents with one seed give the same policy at a decision and draw the
    same actions; the policy is a distribution for every hand."""
    blueprint = leduc_blueprint()
    state = State(LEDUC).apply(CALL).apply(CALL)
    board = (int(sorted(LEDUC.deck())[0]),)
    first, second = (ModicumStrategy(LEDUC, blueprint, iterations=50, seed=9) for _ in range(2))
    actions = first.actions(state)
    policy = first.policy(PublicState(state, board, actions))
    assert np.array_equal(policy, second.policy(PublicState(state, board, actions)))
    assert np.allclose(policy[first.table.board_mask(board) > 0].sum(axis=1), 1.0)
    preflop = first.policy(PublicState(State(LEDUC), (), first.actions(State(LEDUC))))
    assert np.allclose(preflop.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("modicum", "no blueprint ships"),
        ("modicum:iterations=x,blueprint=nowhere", "whole numbers"),
        ("modicum:continuations=0", "whole numbers"),
        ("modicum:sizes=x", "'x' is not a pot fraction"),
        ("modicum:blueprint=/nonexistent.strategy", "strategy 'modicum'"),
        ("modicum:preflop=guess,blueprint=/nonexistent.strategy", "preflop='guess' is not one of resolve, blueprint"),
        ("resolve:evaluator=continuations", "strategy 'resolve': no blueprint ships"),
    ],
)
def test_bad_options_are_one_line(spec: str, message: str) -> None:
    with pytest.raises(StrategyError, match=message):
        make_strategy(spec, LEDUC, seed=0)


def test_an_off_tree_raise_is_re_solved_from_the_real_state() -> None:
    """No-limit Leduc, a blueprint with pot raises only: after the opponent's
    raise to a size the blueprint lacks, the agent's answer is over the real
    state's actions (fold, call, the re-solve's sizes, all-in), a distribution
    for every hand, and the opponent's range is the blueprint's split between
    the two nearest abstract raises (both have weight)."""
    from strategies.cfr.tree.public import BettingAbstraction

    game = load_game("leduc.nolimit")
    solve = AbstractSolve.build(NullAbstraction(game), betting=BettingAbstraction((1.0,)))
    solver = AbstractCFR(solve.game)
    solver.run(300)
    blueprint = Blueprint(solve.game, LosslessSequences(game), solver.average())
    agent = ModicumStrategy(game, blueprint, iterations=50, seed=3)
    state = State(game).apply(CALL).apply(CALL)
    board = (int(sorted(game.deck())[0]),)
    bounds = state.raise_bounds()
    assert bounds is not None
    raised = state.apply(Action.raise_to((300 + bounds[1]) // 2))  # between the pot raise (to 300) and all-in
    steps, abstract = abstract_history(raised, blueprint.betting)
    assert abstract is not None and len(steps[-1].weights) == 2
    actions = agent.actions(raised)
    assert actions == tuple(tree_actions(raised, lookahead_abstraction(game, raised, agent.sizes)))
    assert Action.raise_to(bounds[1]) in actions or raised.raise_bounds() is None
    policy = agent.policy(PublicState(raised, board, actions))
    assert np.allclose(policy[agent.table.board_mask(board) > 0].sum(axis=1), 1.0)


def test_a_compact_blueprint_plays_its_quantized_probabilities(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The blueprint read from a compact file is the strategy file's quantized:
    ``q / levels`` exactly, within 1/255 of the float blueprint, on the same tree."""
    from arena.commands import solve as solve_cli
    from strategies.cfr.compact import load_compact, write_compact
    from strategies.resolve.continuations import load_blueprint

    full, compact = tmp_path / "bp.strategy", tmp_path / "bp.compact"
    assert solve_cli.main(["leduc", "--algorithm", "abstract", "--abstraction", "none", "--iterations", "200", "-o", str(full), "--quiet"]) == 0
    write_compact(full, compact)
    floats, quantized = load_blueprint(full), load_blueprint(compact)
    saved = load_compact(compact)
    assert quantized.game.tree.num_nodes == floats.game.tree.num_nodes
    assert np.abs(quantized.strategy - floats.strategy).max() < 1 / saved.levels
    assert not np.array_equal(quantized.strategy, floats.strategy)  # it is the quantized one that plays
    scaled = quantized.strategy * saved.levels
    assert np.allclose(scaled, np.round(scaled), rtol=0, atol=1e-9)


def test_the_shipped_blueprint_loads_with_an_empty_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """HUNL's blueprint is a compact file with its card abstraction inside and its
    joint bucket tables beside: loading it builds nothing into the cache."""
    from strategies.bots import LIBRARY, bot_path
    from strategies.resolve.continuations import load_blueprint
    from strategies.resolve.continuations import SHIPPED_BLUEPRINTS

    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    path = SHIPPED_BLUEPRINTS["holdem.nolimit.2p.reverse_blinds"]
    assert path == bot_path(LIBRARY["hunl-modicum"])  # the named bot plays the same file
    assert path.suffix == ".compact" and path.stat().st_size < 8 << 20
    blueprint = load_blueprint(path)
    assert blueprint.game.game == load_game("hunl") and blueprint.sequences.buckets(0, []).max() == 2
    assert list(tmp_path.iterdir()) == []


def test_pre_flop_is_re_solved_or_played_from_the_blueprint() -> None:
    """``preflop=blueprint`` plays the blueprint's rows at the first decision
    (Modicum's choice); the default re-solves the pre-flop street with equity
    leaves: the lookahead's actions, a distribution for every hand, the same
    for the same seed, and our later range is that re-solve's policy."""
    blueprint = leduc_blueprint()
    root = State(LEDUC)
    played = ModicumStrategy(LEDUC, blueprint, iterations=50, seed=2, preflop="blueprint")
    actions, rows = played.decision(root, ())
    assert np.array_equal(rows, blueprint.rows(0, ()))
    first, second = (ModicumStrategy(LEDUC, blueprint, iterations=50, seed=2) for _ in range(2))
    actions = first.actions(root)
    assert actions == tuple(tree_actions(root, lookahead_abstraction(LEDUC, root, first.sizes)))
    policy = first.policy(PublicState(root, (), actions))
    assert np.allclose(policy.sum(axis=1), 1.0) and not np.allclose(policy, rows)
    assert np.array_equal(policy, second.policy(PublicState(root, (), actions)))
    after = root.apply(CALL)
    ours = first.ranges(after.apply(CALL), ())[0]
    assert np.allclose(ours, policy[:, actions.index(CALL)])


# -- continual re-solving with continuation leaves (resolve:evaluator=continuations) -------------


def test_deal_values_average_to_the_leaf_values() -> None:
    """The chooser's values once the board card is dealt (what continual
    re-solving carries across the deal), averaged over the deals, are its leaf
    values mixed by its picks: in Leduc each pair of hands leaves 4 board cards,
    so the leaf's value of a hand is the sum over the 5 other cards of its deal
    values, over 4 (exact up to rounding, random reaches and picks)."""
    blueprint = leduc_blueprint()
    table = HandTable(LEDUC)
    evaluator = ContinuationEvaluator(ContinuationValues(blueprint), 1, blueprint_locate(blueprint), table)
    leaf = State(LEDUC).apply(CALL).apply(CALL)
    rng = np.random.default_rng(1)
    reach = rng.random((2, 6))
    picks = rng.random((len(BIASES), 6))
    picks /= picks.sum(axis=0)
    per_pick = np.broadcast_to(reach[:, None, :], (2, len(BIASES), 6)).copy()
    per_pick[1] = reach[1] * picks  # the chooser's reach split by its picks
    leaf_values, _, _ = evaluator.street_values((), [leaf] * len(BIASES), np.arange(len(BIASES), dtype=np.int8), per_pick)
    dealt = sum(evaluator.deal_values(leaf, (card,), reach[0] * table.board_mask((card,)), picks) for card in LEDUC.deck())
    np.testing.assert_allclose(dealt / 4, (picks * leaf_values[1]).sum(axis=0), rtol=0, atol=1e-12)


def test_values_carried_by_the_blueprint_are_zero_sum() -> None:
    """Before the first street with picks, the values carried across the deal are
    both positions' when both play the blueprint on: each position's values
    against the other's reach, so ``r0 . v0 + r1 . v1 = 0`` on every deal (exact up
    to rounding), position 0's equal to a pick of the blueprint alone; without a
    leaf state the wrapped evaluator answers."""
    from strategies.resolve.continuations import CarriedByBlueprint, ContinuationLeaves
    from strategies.resolve.evaluators import EquityEvaluator

    blueprint = leduc_blueprint()
    table = HandTable(LEDUC)
    leaves = ContinuationLeaves(ContinuationValues(blueprint), table, 1)
    equity = EquityEvaluator(LEDUC)
    carried = CarriedByBlueprint(equity, leaves)
    leaf = State(LEDUC).apply(CALL).apply(CALL)
    rng = np.random.default_rng(2)
    for card in LEDUC.deck():
        mask = table.board_mask((card,))
        reach = rng.random((2, 6)) * mask
        values = carried.board_values((card,), 2.0, reach, leaf)
        assert abs((reach * values).sum()) < 1e-12 * np.abs(reach * values).sum()
        only = np.zeros((len(BIASES), 6))
        only[0] = 1.0
        np.testing.assert_array_equal(values[0], leaves.evaluator(0).deal_values(leaf, (card,), reach[1], only))
        np.testing.assert_array_equal(carried.board_values((card,), 2.0, reach), equity.board_values((card,), 2.0, reach))


def test_blueprint_leaves_before_the_picks_are_the_blueprint_played_out_in_leduc() -> None:
    """``preflop=blueprint`` outside hold'em (no per-hand flop table): the first
    street's leaves are worth what both playing the blueprint on earns, by its
    first-round sequences (Leduc's blueprint has no card abstraction: the exact
    values, against a walk of the rest of the hand over every board card),
    not the equity evaluator it wraps."""
    from strategies.resolve.continuations import CarriedByBlueprint, ContinuationLeaves
    from strategies.resolve.evaluators import EquityEvaluator

    blueprint = leduc_blueprint()
    table = HandTable(LEDUC)
    carried = CarriedByBlueprint(EquityEvaluator(LEDUC), ContinuationLeaves(ContinuationValues(blueprint), table, 1, True), True)
    cards = [int(h[0]) for h in private_hands(LEDUC)]
    for betting in ("cc", "rc"):
        leaf = State(LEDUC)
        for action in betting:
            leaf = leaf.apply(CALL if action == "c" else tree_actions(leaf, None)[-1])
        reach = np.random.default_rng(4).random((2, 1, 6))
        values, _, _ = carried.street_values((), [leaf], np.array([-1], dtype=np.int8), reach)
        exact = np.zeros((6, 6))
        for i, j in itertools.permutations(range(6), 2):
            boards = [c for c in sorted(LEDUC.deck()) if c not in (cards[i], cards[j])]
            exact[i, j] = np.mean([_brute_force(blueprint, leaf, 0, 0, (cards[i], cards[j]), b) for b in boards])
        np.testing.assert_allclose(values[0, 0], exact @ reach[1, 0], rtol=0, atol=1e-9)
        np.testing.assert_allclose(values[1, 0], -(exact.T @ reach[0, 0]), rtol=0, atol=1e-9)


def _continual(leaves: int | None, iterations: int = 1000) -> float:
    """Limit Leduc's exploitability (chips a hand) of continual re-solving whose
    first-round leaves are the exact blueprint's ``leaves`` continuations (None:
    the equity heuristic), every decision re-solved."""
    from strategies.resolve.agent import ResolvingStrategy
    from strategies.resolve.continuations import ContinuationLeaves
    from strategies.resolve.evaluators import EquityEvaluator
    from strategies.resolve.measure import exploitability_on_tree

    picks = None if leaves is None else ContinuationLeaves(ContinuationValues(leduc_blueprint(), leaves), HandTable(LEDUC), 0)
    agent = ResolvingStrategy(LEDUC, iterations=iterations, evaluator=EquityEvaluator(LEDUC), continuations=picks)
    return exploitability_on_tree(LEDUC, agent).chips


def test_safe_re_solving_with_continuation_leaves_plays_an_equilibrium() -> None:
    """Continual re-solving (the gadget's constraints carried across the deal as
    each opponent hand's values under its picks) with the four continuations of
    Leduc's solution at the first round's end is within 0.002 chips a hand of an
    equilibrium (0.0006 measured at 1000 iterations: the exact lookahead's
    own figure is of that order), where the equity heuristic's leaves are 0.31
    from one and a single continuation 0.18: the opponent's choice at the limit
    is what makes the values right. A root solve shared by both positions (the
    first mover's opponent picking) gave 0.04: the second mover's first
    constraints then understated the first mover's values."""
    assert _continual(4) < 0.002
    assert _continual(1) > 0.1
    assert _continual(None) > 0.2


def test_continuation_leaves_play_leduc_from_a_blueprint_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``resolve:evaluator=continuations,blueprint=PATH`` takes an abstract-game
    file of the game (``arena solve``) and refuses one of another game in one line."""
    from arena.commands import solve as solve_cli
    from strategies.resolve.agent import ResolvingStrategy

    path = tmp_path / "leduc.strategy"
    assert solve_cli.main(["leduc", "--algorithm", "abstract", "--abstraction", "none", "--iterations", "50", "-o", str(path), "--quiet"]) == 0
    agent = make_strategy(f"resolve:evaluator=continuations,blueprint={path},preflop=continuations,iterations=20", LEDUC, seed=0)
    assert isinstance(agent, ResolvingStrategy) and agent.continuations is not None
    assert agent.continuations.first_round == 0 and agent.continuations.values.count == len(BIASES)
    agent = make_strategy(f"resolve:evaluator=continuations,blueprint={path},preflop=blueprint,iterations=20", LEDUC, seed=0)
    assert isinstance(agent, ResolvingStrategy) and agent.continuations is not None
    assert agent.continuations.first_round == 1 and agent.continuations.blueprint_before
    with pytest.raises(StrategyError, match="the blueprint was solved for another game"):
        make_strategy(f"resolve:evaluator=continuations,blueprint={path}", load_game("leduc.nolimit"), seed=0)
