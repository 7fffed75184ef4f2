"""A strategy file's listing: ``arena show --format json`` of a suit-isomorphic file
lists every information set of the game with the file's probabilities exactly."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import needs
from poker.cards import cards_from_text, cards_to_text
from poker.deal import private_hands
from poker.gamedef import load_game
from strategies.bots import DATA_DIR
from strategies.cfr.listing import file_information_sets
from strategies.cfr.strategy_file import load_strategy
from strategies.cfr.tree.public import build_tree
from strategies.equilibrium import StrategyTable

LEDUC_FILE = DATA_DIR / "leduc-cfr.strategy"


@pytest.fixture(scope="module")
def shown() -> list[dict[str, object]]:
    """The JSON of the shipped Leduc file, as a tool reading ``arena show`` gets it."""
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "show", str(LEDUC_FILE), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows: list[dict[str, object]] = json.loads(out)
    return rows


def _leduc_information_sets() -> int:
    """Decision nodes x the private hands their board leaves possible, on Leduc's
    full public tree (every board, no suit classes)."""
    tree = build_tree(load_game("leduc"))
    return int(tree.board_mask[tree.board_index[tree.decision_nodes]].sum())


def test_json_lists_every_information_set_once(shown: list[dict[str, object]]) -> None:
    saved = load_strategy(LEDUC_FILE)
    assert saved.isomorphism  # the file keeps one board per suit class; the listing does not
    keys = {(row["position"], row["hole"], row["board"], row["betting"]) for row in shown}
    assert len(shown) == len(keys) == _leduc_information_sets() == 936
    assert {row["board"] for row in shown} == {"", "Qh", "Qs", "Kh", "Ks", "Ah", "As"}


def test_json_probabilities_are_the_files_arrays_exactly(shown: list[dict[str, object]]) -> None:
    """Each row equals the stored row of its suit class bit for bit: the board's own
    row where the file keeps the board, else the other suit's (Leduc has two suits,
    so the class of a board is the board and its suit swap)."""
    saved = load_strategy(LEDUC_FILE)
    tree = saved.build_tree()
    rows = {tree.key(int(node)): int(tree.decision_index[node]) for node in tree.decision_nodes}
    hands = {tuple(int(c) for c in hand): h for h, hand in enumerate(private_hands(saved.game))}
    suits = sorted({card % 4 for card in saved.game.deck()})
    swap = {card: card - card % 4 + suits[1 - suits.index(card % 4)] for card in saved.game.deck()}
    for row in shown:
        betting, hole = str(row["betting"]), cards_from_text(str(row["hole"]))
        board = cards_from_text(str(row["board"]))
        for cards in ({c: c for c in swap}, swap):
            key = betting + (f"|{cards[board[0]]}" if board else "")
            if key in rows:
                break
        actions: dict[str, float] = row["actions"]  # type: ignore[assignment]
        column = hands[tuple(sorted(cards[c] for c in hole))]
        stored = saved.strategy[rows[key], : len(actions), column]
        assert list(actions.values()) == stored.tolist(), row


def test_the_table_stays_compact() -> None:
    saved = load_strategy(LEDUC_FILE)
    compact = list(file_information_sets(saved, every_board=False))
    # round one: 6 decisions x 6 hands; round two: 5 lines x 3 boards x 6 decisions x 5 hands
    assert len(compact) == 6 * 6 + 5 * 3 * 6 * 5
    assert len({info.board for info in compact}) == 1 + 3
    stored = saved.strategy[0, :2, :]
    assert [list(info.actions.values()) for info in compact[:6]] == stored.T.tolist()


def test_information_sets_agree_with_openspiel() -> None:
    pyspiel = needs.importorskip("pyspiel", "OpenSpiel")
    game = pyspiel.load_game("leduc_poker")
    seen: set[str] = set()
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(action) for action, _ in state.chance_outcomes())
            continue
        seen.add(state.information_state_string())
        stack.extend(state.child(action) for action in state.legal_actions())
    assert len(seen) == _leduc_information_sets()


def test_expanded_boards_play_as_the_agent_does() -> None:
    """The listing's mapping is the one an agent playing the file uses
    (:class:`strategies.equilibrium.StrategyTable`): the same rows on every board."""
    saved = load_strategy(LEDUC_FILE)
    table = StrategyTable(saved)
    full = build_tree(saved.game, saved.abstraction, isomorphism=False)
    listing = list(file_information_sets(saved, every_board=True))
    by_key = {(info.betting, info.board, info.hole): list(info.actions.values()) for info in listing}
    hands = private_hands(saved.game)
    for node in full.decision_nodes:
        state, board = full.states[node], full.boards[full.board_index[node]]
        played = table.rows(state, board)
        for h, hand in enumerate(hands):
            if set(int(c) for c in hand) & set(board):
                continue
            hole = cards_to_text(sorted((int(c) for c in hand), reverse=True))
            assert by_key[(state.betting_string(), cards_to_text(board), hole)] == played[h].tolist()
