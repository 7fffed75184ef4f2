"""The abstract game of a perfect-recall card abstraction: joint tables and CFR+.

The joint tables are checked against a per-deal enumeration written here with
plain loops; the CFR+ and best-response passes against the public-tree
:class:`~strategies.cfr.solvers.solver.Solver` and :func:`best_response` through lossless
abstractions (every hand, with the board, its own bucket), where the abstract
game is the real game.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest

from poker.deal import private_hands
from poker.evaluate import rank_hand
from poker.gamedef import Game, load_game, parse_game
from strategies.cfr.abstraction.card_abstraction import CardAbstraction, NullAbstraction, parse_abstraction_spec
from strategies.cfr.abstraction.card_tables import deal_orders
from strategies.cfr.best_response.exact import best_response, profile_values
from strategies.cfr.solvers.abstract_game import (
    AbstractCFR,
    AbstractGame,
    AbstractGameError,
    JointTables,
    enumerate_joint_tables,
    joint_tables,
    joint_tables_path,
    load_joint_tables,
    sequence_counts,
)
from strategies.cfr.solvers.abstract_solve import LosslessSequences
from strategies.cfr.solvers.pcs import row_layout
from strategies.cfr.solvers.solver import Algorithm, Solver, uniform_strategy
from strategies.cfr.tree.public import Tree, build_tree

# Hold'em in miniature: 12 cards (3 ranks x 4 suits), two hole cards, a card on
# each of two later rounds, so deal orders and nesting matter as in hold'em.
TINY = parse_game(
    """GAMEDEF
limit
numPlayers = 2
numRounds = 3
blind = 10 5
raiseSize = 10 10 20
firstPlayer = 2 1 1
maxRaises = 2 2 2
numSuits = 4
numRanks = 3
numHoleCards = 2
numBoardCards = 0 1 1
END GAMEDEF
"""
)


@pytest.fixture(scope="module")
def tiny_abstraction(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    spec = parse_abstraction_spec("ehs2:3:perfect")
    assert spec is not None
    return CardAbstraction.build(TINY, spec, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)


def _brute_force(game: Game, abstraction: CardAbstraction) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Joint and showdown tables deal by deal: every board in deal order, every
    ordered pair of hands that fit it and each other."""
    n = abstraction.num_buckets(game.num_rounds - 1)
    joint = np.zeros((n, n), dtype=np.int64)
    showdown = np.zeros((n, n), dtype=np.int64)
    hands = [tuple(int(c) for c in h) for h in private_hands(game)]
    deck = sorted(game.deck())
    for first, second in itertools.permutations(deck, 2):
        board = [first, second]
        last = abstraction.bucket_rounds(board)[-1]
        for i, j in itertools.permutations(range(len(hands)), 2):
            if set(hands[i]) & set(hands[j]) or (set(hands[i]) | set(hands[j])) & set(board):
                continue
            joint[last[i], last[j]] += 1
            mine, theirs = rank_hand(list(hands[i]) + board), rank_hand(list(hands[j]) + board)
            showdown[last[i], last[j]] += (mine > theirs) - (mine < theirs)
    return joint, showdown


def test_joint_tables_equal_a_deal_by_deal_count(tiny_abstraction: CardAbstraction) -> None:
    joint, showdown = _brute_force(TINY, tiny_abstraction)
    fast = joint_tables(tiny_abstraction, workers=2)
    assert np.array_equal(fast.joint, joint)
    assert np.array_equal(fast.showdown, showdown)
    # 12 * 11 boards in deal order, 45 hands avoid them, 28 opponent hands avoid both.
    assert fast.deals == 12 * 11 * 45 * 28
    enumerated = enumerate_joint_tables(TINY, tiny_abstraction)
    assert np.array_equal(enumerated.joint, joint) and np.array_equal(enumerated.showdown, showdown)


def test_joint_tables_are_cached_beside_the_abstraction(
    tiny_abstraction: CardAbstraction, tmp_path_factory: pytest.TempPathFactory
) -> None:
    directory = tmp_path_factory.mktemp("joint")
    first = load_joint_tables(tiny_abstraction, cache_dir=directory)
    assert len(list(directory.iterdir())) == 1
    again = load_joint_tables(tiny_abstraction, cache_dir=directory)
    assert np.array_equal(first.joint, again.joint) and np.array_equal(first.showdown, again.showdown)
    (path,) = directory.iterdir()
    path.write_bytes(path.read_bytes()[:100])  # truncated
    rebuilt = load_joint_tables(tiny_abstraction, cache_dir=directory)
    assert np.array_equal(first.joint, rebuilt.joint) and path.stat().st_size > 1000


def test_joint_tables_are_keyed_by_the_bucket_tables(
    tiny_abstraction: CardAbstraction, tmp_path_factory: pytest.TempPathFactory
) -> None:
    directory = tmp_path_factory.mktemp("keyed")
    tiny_abstraction.save(directory / "saved.abstraction")
    same = CardAbstraction.load(directory / "saved.abstraction")
    assert same.digest == tiny_abstraction.digest
    assert joint_tables_path(same, directory) == joint_tables_path(tiny_abstraction, directory)
    # The same name with other tables: two flop rows swapped (still valid look-ups).
    table = tiny_abstraction.tables.table.copy()
    first = int(tiny_abstraction.tables.key_start[1])
    table[[first, first + 1]] = table[[first + 1, first]]
    assert not np.array_equal(table, tiny_abstraction.tables.table)
    other = dataclasses.replace(tiny_abstraction, tables=dataclasses.replace(tiny_abstraction.tables, table=table))
    assert other.name == tiny_abstraction.name and other.digest != tiny_abstraction.digest
    assert joint_tables_path(other, directory) != joint_tables_path(tiny_abstraction, directory)
    load_joint_tables(tiny_abstraction, cache_dir=directory)
    changed = load_joint_tables(other, cache_dir=directory)
    assert len(list(directory.glob("joint-*"))) == 2
    fresh = joint_tables(other, workers=1)
    assert np.array_equal(changed.joint, fresh.joint) and np.array_equal(changed.showdown, fresh.showdown)


def test_deal_orders_of_holdem_are_ten_flops_times_two_turns() -> None:
    holdem = load_game("holdem.limit.2p.reverse_blinds")
    orders = deal_orders(holdem)
    assert orders.shape == (20, 5)
    assert len({tuple(o) for o in orders.tolist()}) == 20
    assert orders[0].tolist() == [0, 1, 2, 3, 4]
    assert deal_orders(holdem, 2).tolist() == [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]]
    assert deal_orders(holdem, 0).shape == (1, 0)


def test_cfr_plus_drives_abstract_exploitability_to_zero(tiny_abstraction: CardAbstraction) -> None:
    game = AbstractGame(TINY, [3, 9, 27], joint_tables(tiny_abstraction, workers=1))
    solver = AbstractCFR(game)
    start = game.exploitability(solver.average())
    solver.run(50)
    middle = solver.exploitability()
    solver.run(450)
    final = solver.exploitability()
    # Measured (chips per hand, big blind 10): 17.47 for the uniform strategy,
    # 0.404 after 50 iterations, 0.0126 after 500 (0.0041 after 1000).
    assert start > 17.0 and middle < 0.5 and final < 0.015
    values = game.profile_values(solver.average())
    assert values[0] == pytest.approx(-values[1], abs=1e-12)
    # The tables are in the bucket-table layout that PCSStrategy plays.
    assert np.array_equal(game.row_start, row_layout(game.tree, tiny_abstraction))


class LosslessLeduc:
    """Every Leduc hand its own bucket, and with the board card its own sequence:
    round 0 sequence = hand, round 1 = hand * 6 + board card (perfect recall)."""

    def __init__(self, game: Game) -> None:
        self.hands = private_hands(game)[:, 0].tolist()

    @property
    def name(self) -> str:
        return "lossless"

    def num_buckets(self, round: int) -> int:
        return 6 if round == 0 else 36

    def sequence(self, round: int, hand: int, board: Sequence[int]) -> int:
        if round == 0:
            return hand
        return -1 if self.hands[hand] == board[0] else hand * 6 + self.hands.index(board[0])

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        return np.array([self.sequence(round, h, board) for h in range(6)], dtype=np.int32)

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        return np.array([self.buckets(r, board) for r in range(2)], dtype=np.int32)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        return self.sequence(round, self.hands.index(hole[0]), board)


def _tree_strategy(
    tree: Tree, game: AbstractGame, abstraction: LosslessLeduc, table: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """An abstract-game table as a public-tree strategy of the real game."""
    strategy = uniform_strategy(tree)
    for d, node in enumerate(tree.decision_nodes):
        own = game.tree.node_of_key[tree.states[node].betting_string()]
        board = tree.boards[tree.board_index[node]]
        n = int(tree.num_children[node])
        for h in range(tree.num_hands):
            seq = abstraction.sequence(int(tree.round[node]), h, board)
            if seq >= 0:
                strategy[d, :n, h] = table[:n, game.doff[own] + seq]
    return strategy


@pytest.fixture(scope="module")
def leduc() -> tuple[Game, LosslessLeduc, AbstractGame]:
    game = load_game("leduc")
    lossless = LosslessLeduc(game)
    return game, lossless, AbstractGame(game, [6, 36], enumerate_joint_tables(game, lossless))


def test_lossless_leduc_best_response_of_uniform_equals_the_public_tree(
    leduc: tuple[Game, LosslessLeduc, AbstractGame],
) -> None:
    game, _, abstract = leduc
    tree = build_tree(game)
    expected = best_response(tree, uniform_strategy(tree)).values
    got = abstract.best_response(abstract.uniform())
    assert got == pytest.approx(expected, abs=1e-12)
    assert sum(got) == pytest.approx(4.747222222222222, abs=1e-9)  # OpenSpiel's NashConv of uniform


def test_lossless_leduc_solved_values_equal_the_public_tree(leduc: tuple[Game, LosslessLeduc, AbstractGame]) -> None:
    game, lossless, abstract = leduc
    solver = AbstractCFR(abstract)
    solver.run(400)
    average = solver.average()
    tree = build_tree(game)
    strategy = _tree_strategy(tree, abstract, lossless, average)
    assert abstract.profile_values(average) == pytest.approx(profile_values(tree, strategy), abs=1e-9)
    assert abstract.best_response(average) == pytest.approx(best_response(tree, strategy).values, abs=1e-9)
    assert abstract.profile_values(average)[0] == pytest.approx(-0.085606424078, abs=1e-4)
    # 0.00121 chips here; the public-tree Solver's CFR+ reaches 0.00126 after 400
    # iterations (same conventions; rounding makes the two drift apart slowly).
    assert solver.exploitability() < 1.5e-3


def test_lossless_leduc_cfr_plus_follows_the_public_tree_solver(
    leduc: tuple[Game, LosslessLeduc, AbstractGame],
) -> None:
    _, _, abstract = leduc
    solver = AbstractCFR(abstract)
    reference = Solver(build_tree(abstract.game), Algorithm.CFR_PLUS)
    for _ in range(5):
        solver.run(2)
        reference.run(2)
        assert solver.exploitability() == pytest.approx(reference.exploitability(), abs=1e-12)


def test_loaded_arrays_continue_the_run_bit_for_bit(leduc: tuple[Game, LosslessLeduc, AbstractGame]) -> None:
    _, _, abstract = leduc
    whole = AbstractCFR(abstract, delay=3)
    whole.run(12)
    first = AbstractCFR(abstract, delay=3)
    first.run(5)
    resumed = AbstractCFR(abstract, delay=3)
    resumed.load_arrays(iteration=5, regret=first.regret.copy(), cumulative=first.cumulative.copy())
    assert np.array_equal(resumed.sigma, first.sigma)
    resumed.run(7)
    assert resumed.iteration == 12
    assert np.array_equal(resumed.regret, whole.regret) and np.array_equal(resumed.cumulative, whole.cumulative)
    with pytest.raises(AbstractGameError, match="checkpoint arrays have shapes"):
        resumed.load_arrays(iteration=1, regret=np.zeros((3, 1)), cumulative=np.zeros((3, 1)))


def test_kuhn_through_the_null_abstraction_is_the_real_game() -> None:
    game = load_game("kuhn")
    abstract = AbstractGame(game, [3], enumerate_joint_tables(game, NullAbstraction(game)))
    assert abstract.exploitability(abstract.uniform()) == pytest.approx(float(Fraction(11, 24)), abs=1e-12)
    solver = AbstractCFR(abstract)
    solver.run(1000)
    assert abstract.profile_values(solver.average())[0] == pytest.approx(-1 / 18, abs=1e-3)


def test_bad_shapes_and_imperfect_recall_are_refused(tiny_abstraction: CardAbstraction) -> None:
    tables = JointTables(joint=np.ones((4, 4), dtype=np.int64), showdown=np.zeros((4, 4), dtype=np.int64))
    with pytest.raises(AbstractGameError, match="joint tables must be 27 x 27"):
        AbstractGame(TINY, [3, 9, 27], tables)
    game = AbstractGame(TINY, [2, 4, 4], tables)
    with pytest.raises(AbstractGameError, match="has shape"):
        game.best_response(np.zeros((1, 1)))
    spec = parse_abstraction_spec("hs:2:imperfect")
    assert spec is not None
    imperfect = CardAbstraction.build(TINY, spec, workers=1)
    with pytest.raises(AbstractGameError, match="imperfect recall"):
        joint_tables(imperfect)


def test_too_many_sequences_for_the_dense_tables_are_refused() -> None:
    # No abstraction of TINY: 12 * 11 boards by the last round times 66 hands.
    with pytest.raises(AbstractGameError, match="8712 last-round bucket sequences"):
        sequence_counts(LosslessSequences(TINY), TINY)
