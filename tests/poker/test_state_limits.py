"""Two of the reference's caps on betting (docs/protocol.md, The betting rules):
no raise once a round is within ``num_players`` actions of the 64-action
limit, and a limit raise that goes only as far as the raiser's stack."""

from __future__ import annotations

from fractions import Fraction

import pytest

from poker.gamedef import MAX_NUM_ACTIONS, parse_game
from poker.state import CALL, FOLD, Action, ActionType, IllegalActionError, State

RAISE = Action(ActionType.RAISE)


def _limit_game(*, stacks: str = "", max_raises: int = 255) -> str:
    """A one-round heads-up limit game: blinds 2 (position 0) and 1, bets of 2, position 1 first."""
    stack = f"stack = {stacks}\n" if stacks else ""
    return (
        f"limit\nnumPlayers = 2\nnumRounds = 1\n{stack}blind = 2 1\nraiseSize = 2\nfirstPlayer = 2\n"
        f"maxRaises = {max_raises}\nnumSuits = 4\nnumRanks = 13\nnumHoleCards = 1\nnumBoardCards = 0\n"
    )


def test_a_round_stops_raising_at_the_action_limit() -> None:
    # 255 raises allowed: only the 64-action limit binds. A raise needs room for
    # every player to answer it: legal while actions + players <= 64, so the
    # 63rd raise (62 actions before it) is the last; the round's 64th action is a call.
    state = State(parse_game(_limit_game()))
    for _ in range(MAX_NUM_ACTIONS - 2):
        state = state.apply(RAISE)
    assert state.raise_bounds() == (state.max_spent + 2, state.max_spent + 2)
    state = state.apply(RAISE)
    assert len(state.actions[0]) == MAX_NUM_ACTIONS - 1
    assert state.raise_bounds() is None and state.legal_actions() == [FOLD, CALL]
    with pytest.raises(IllegalActionError, match="^no raise is legal in round 1: the round is too close to the 64-action limit$"):
        state.apply(RAISE)
    assert state.repair(RAISE) == (CALL, "WARNING: invalid action, changed to call")
    final = state.apply(CALL)
    assert final.finished and len(final.actions[0]) == MAX_NUM_ACTIONS
    assert final.spent == (2 + 2 * 63, 2 + 2 * 63)


def test_a_limit_raise_stops_at_a_short_stack() -> None:
    # Stacks 20 and 7: r (position 1 to 4), r (position 0 to 6), then position 1's
    # raise would go to 8 but its stack is 7: the raise goes all-in to 7.
    state = State(parse_game(_limit_game(stacks="20 7"))).apply(RAISE).apply(RAISE)
    assert state.spent == (6, 4) and state.current_player() == 1
    assert state.raise_bounds() == (7, 7)
    state = state.apply(RAISE)
    assert state.spent == (6, 7) and state.max_spent == 7
    # Position 0 faces an all-in: it may call (one more chip) or fold, not raise.
    assert state.raise_bounds() is None and state.amount_to_call() == 1
    final = state.apply(CALL)
    assert final.finished and final.is_showdown() and final.spent == (7, 7)
    assert final.values([1, 2]) == (Fraction(-7), Fraction(7))
