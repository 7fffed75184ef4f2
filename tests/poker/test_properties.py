"""Random legal playouts of every shipped game: conservation and query consistency.

10,000 playouts per game: chips are conserved, values sum to
zero, nobody commits more than its stack, and every action a legal-action query
offers is accepted while the ones it leaves out are rejected.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from poker.gamedef import game_names, load_game
from poker.state import CALL, FOLD, Action, ActionType, IllegalActionError, State

PLAYOUTS = 10_000
GAMES = sorted(set(game_names().values()))


def _probe_actions(state: State, rng: random.Random) -> list[Action]:
    """Candidate actions, legal or not, to check the queries against apply()."""
    probes = [FOLD, CALL, Action(ActionType.RAISE)]
    if not state.game.is_limit:
        p = state.current_player()
        probes += [Action.raise_to(rng.randint(0, state.game.stack[p] + 10)), Action.raise_to(state.min_raise_to - 1)]
    return probes


@pytest.mark.parametrize("game_name", GAMES)
def test_random_playouts_conserve_chips_and_queries_agree_with_apply(game_name: str) -> None:
    game = load_game(game_name)
    rng = random.Random(game_name)
    n = game.num_players
    for _ in range(PLAYOUTS):
        state = State(game)
        while not state.finished:
            legal = state.legal_actions()
            bounds = state.raise_bounds()
            if bounds is not None and not game.is_limit:
                legal.append(Action.raise_to(rng.randint(*bounds)))
            for action in legal:
                assert state.is_legal(action)
            for action in _probe_actions(state, rng):
                offered = action in legal or (
                    action.type is ActionType.RAISE
                    and not game.is_limit
                    and bounds is not None
                    and bounds[0] <= action.size <= bounds[1]
                )
                try:
                    state.apply(action)
                    accepted = True
                except IllegalActionError:
                    accepted = False
                assert accepted == offered, (state, action)
            state = state.apply(rng.choice(legal))
            assert all(state.spent[p] <= game.stack[p] for p in range(n))
        ranks = [rng.randint(0, 3) for _ in range(n)]
        values = state.values(ranks)
        assert sum(values) == 0
        assert all(values[p] >= -state.spent[p] for p in range(n))
        assert sum(v for v in values if v > 0) <= sum(state.spent) - min(state.spent)
        if not state.is_showdown():
            winner = state.folded.index(False)
            assert values[winner] == Fraction(sum(state.spent) - state.spent[winner])
