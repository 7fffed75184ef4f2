"""Our exploitability equals OpenSpiel's on the same gamedef (skipped without pyspiel).

OpenSpiel's ``universal_poker`` is loaded from our own game definition text, so
both sides play the same rules; its deck numbers cards ``rank * num_suits +
suit`` from the lowest rank, which is our sorted deck's order, and its actions
are 0 fold, 1 call, 2 raise.
"""

from __future__ import annotations

import numpy as np
import pytest

import needs
from poker.gamedef import format_game, load_game
from poker.state import ActionType, State
from strategies.cfr.best_response.exact import best_response
from strategies.cfr.solvers.solver import Solver
from strategies.cfr.tree.public import Tree, build_tree

pyspiel = needs.importorskip("pyspiel", "OpenSpiel")
policy_module = needs.importorskip("open_spiel.python.policy", "OpenSpiel")
exploitability_module = needs.importorskip("open_spiel.python.algorithms.exploitability", "OpenSpiel")

_ACTION_TYPES = {0: ActionType.FOLD, 1: ActionType.CALL, 2: ActionType.RAISE}


def _open_spiel_policy(game, tree: Tree, strategy: np.ndarray):  # type: ignore[no-untyped-def]
    """Our strategy as an OpenSpiel TabularPolicy on ``game`` (universal_poker)."""
    deck = sorted(tree.game.deck())
    keys = {tree.key(int(node)): int(node) for node in tree.decision_nodes}
    hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(tree.hands)}
    holes = tree.game.num_hole_cards
    tabular = policy_module.TabularPolicy(game)
    for index, os_state in enumerate(tabular.states):
        history = os_state.history()
        dealt = [deck[a] for a in history[: 2 * holes]]
        hands = (tuple(sorted(dealt[:holes])), tuple(sorted(dealt[holes:])))
        state = State(tree.game)
        board: list[int] = []
        for action in history[2 * holes :]:
            if (
                state.finished
                or len(board) < tree.game.total_board_cards(state.round)
                and not state.actions[state.round]
            ):
                board.append(deck[action])
                continue
            legal = {a.type: a for a in state.legal_actions()}
            state = state.apply(legal[_ACTION_TYPES[action]])
        text = ",".join(str(c) for c in board)
        node = keys[state.betting_string() + (f"|{text}" if text else "")]
        d = int(tree.decision_index[node])
        ours = [a.type for a in tree.actions(node)]
        hand = hand_row[hands[os_state.current_player()]]
        for action in os_state.legal_actions():
            tabular.action_probability_array[index, action] = strategy[d, ours.index(_ACTION_TYPES[action]), hand]
    return tabular


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
@pytest.mark.parametrize("kind", ["random", "solved"])
def test_openspiel_exploitability_matches(name: str, kind: str, random_strategy) -> None:  # type: ignore[no-untyped-def]
    game = load_game(name)
    tree = build_tree(game)
    if kind == "random":
        strategy = random_strategy(tree, 5)
    else:
        solver = Solver(tree)
        solver.run(50)
        strategy = solver.average_strategy()
    os_game = pyspiel.universal_poker.load_universal_poker_from_acpc_gamedef(format_game(game))
    theirs = exploitability_module.exploitability(os_game, _open_spiel_policy(os_game, tree, strategy))
    assert best_response(tree, strategy).exploitability == pytest.approx(theirs, abs=1e-9)
