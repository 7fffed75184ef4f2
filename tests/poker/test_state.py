"""The betting state machine against the betting rules (docs/protocol.md), case by case."""

from __future__ import annotations

from fractions import Fraction

import pytest

from poker.gamedef import load_game, parse_game
from poker.protocol import parse_betting
from poker.state import CALL, FOLD, Action, ActionType, IllegalActionError, State

HUNL = load_game("hunl")
HULHE = load_game("hulhe")


def test_initial_state_posts_blinds_and_sets_the_first_minimum() -> None:
    state = State(HUNL)
    assert state.spent == (100, 50)
    assert state.max_spent == 100
    assert state.min_raise_to == 200  # twice the big blind
    assert state.current_player() == 1  # firstPlayer = 2 (1-based): the button/SB
    assert state.raise_bounds() == (200, 20000)
    assert state.amount_to_call() == 50
    assert state.can_fold()


def test_min_raise_arithmetic_of_the_nolimit_transcript() -> None:
    # Reference transcript 5.2: r250 (min 200) -> next min 400; r750 -> next min 1250; new round
    # min = 750 + 100.
    state = parse_betting("r250", HUNL)
    assert state.raise_bounds() == (400, 20000)
    state = state.apply(Action.raise_to(750))
    assert state.raise_bounds() == (1250, 20000)
    state = state.apply(CALL)
    assert state.round == 1
    assert state.current_player() == 0
    assert state.raise_bounds() == (850, 20000)
    assert not state.can_fold()  # nothing to call: folding is illegal


def test_postflop_minimum_bet_after_a_limp_is_one_big_blind() -> None:
    state = parse_betting("cc/c", HUNL)
    assert state.raise_bounds() == (200, 20000)


def test_an_all_in_short_of_a_full_raise_does_not_lower_the_requirement() -> None:
    game = parse_game(
        "nolimit\nnumPlayers = 3\nnumRounds = 1\nstack = 1000 350 1000\nblind = 50 100 0\n"
        "firstPlayer = 3\nnumSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\n"
    )
    state = State(game).apply(Action.raise_to(300))  # button raises by 200; next min 500
    assert state.raise_bounds() == (500, 1000)
    state = state.apply(CALL)  # SB calls 300
    # BB has only 350: min raise-to 500 exceeds its stack, so only all-in is legal.
    assert state.raise_bounds() == (350, 350)
    state = state.apply(Action.raise_to(350))  # a raise of 50: min stays max(500, 2*350-300) = 500
    assert state.min_raise_to == 500
    assert state.raise_bounds() == (500, 1000)


def test_a_short_stack_that_cannot_match_the_bet_cannot_raise() -> None:
    game = parse_game(
        "nolimit\nnumPlayers = 2\nnumRounds = 1\nstack = 1000 300\nblind = 100 50\n"
        "firstPlayer = 2\nnumSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\n"
    )
    state = State(game).apply(CALL).apply(Action.raise_to(500))
    assert state.current_player() == 1
    assert state.raise_bounds() is None  # max_spent 500 >= its stack 300
    state = state.apply(CALL)  # calls all-in for less
    assert state.spent == (500, 300)
    assert state.finished and state.is_showdown()
    # Side pot: 300 each contested, 200 returned to position 0 whoever wins.
    assert state.values([1, 2]) == (Fraction(-300), Fraction(300))
    assert state.values([2, 1]) == (Fraction(300), Fraction(-300))


def test_limit_raise_cap_counts_raises_not_blinds() -> None:
    # maxRaises 3 pre-flop: after three raises only fold/call remain (reference transcript 5.6,
    # limit cap).
    state = parse_betting("rrr", HULHE)
    assert state.raise_bounds() is None
    assert [str(a) for a in state.legal_actions()] == ["f", "c"]
    assert state.repair(Action(ActionType.RAISE)) == (CALL, "WARNING: invalid action, changed to call")
    assert state.apply(CALL).betting_string() == "rrrc/"


def test_limit_raise_sizes_and_turn_order_of_hulhe() -> None:
    state = parse_betting("rrc/cr", HULHE)
    assert state.spent == (30, 40)  # 30 pre-flop each; the button bet 10 more on the flop
    assert state.max_spent == 40
    assert state.current_player() == 0
    assert state.raise_bounds() == (50, 50)
    state = parse_betting("rrc/crc/", HULHE)
    assert state.raise_bounds() == (60, 60)  # turn bets are 20


def test_fold_is_illegal_when_a_check_is_free() -> None:
    state = parse_betting("c", HUNL)
    with pytest.raises(IllegalActionError, match="fold is not legal when a check is free"):
        state.apply(FOLD)
    assert state.repair(FOLD) == (CALL, "WARNING: invalid action, changed to call")


def test_nolimit_sizes_outside_the_range_are_rejected_and_repaired() -> None:
    state = parse_betting("cc/", HUNL)
    with pytest.raises(IllegalActionError, match=r"raise to 10 chips is outside the legal range 200..20000 in round 2"):
        state.apply(Action.raise_to(10))
    assert state.repair(Action.raise_to(10)) == (Action.raise_to(200), "WARNING: raise of 10 increased to 200")
    state = parse_betting("cc/r200c/c", HUNL)
    assert state.repair(Action.raise_to(999999)) == (
        Action.raise_to(20000),
        "WARNING: raise of 999999 decreased to 20000",
    )
    assert state.repair(None) == (CALL, "WARNING: invalid action, changed to call")
    assert state.repair(Action(ActionType.CALL, 77)) == (CALL, None)  # stray sizes are dropped


def test_all_in_preflop_runs_out_the_board() -> None:
    state = parse_betting("r20000c", HUNL)
    assert state.finished
    assert state.round == 3
    assert state.betting_string() == "r20000c///"


def test_three_player_skips_folded_and_all_in_players() -> None:
    nl3 = load_game("holdem.nolimit.3p")
    state = parse_betting("r300r1000fc/", nl3)
    assert state.current_player() == 0  # SB first after the flop
    state = state.apply(Action.raise_to(20000))
    assert state.current_player() == 2  # BB (position 1) folded: skipped
    state = state.apply(CALL)
    assert state.finished and state.betting_string() == "r300r1000fc/r20000c//"
    # Reference transcript 5.4: 20100|-100|-20000 when position 0 wins.
    assert state.values([5, 0, 1]) == (20100, -100, -20000)


def test_three_way_split_pot_values_are_exact_fractions() -> None:
    game = load_game("holdem.limit.3p")
    state = parse_betting("ccc/ccc/ccc/ccc", game)
    assert state.spent == (10, 10, 10)
    assert state.values([7, 7, 7]) == (0, 0, 0)
    assert state.values([7, 9, 9]) == (-10, 5, 5)
    state = parse_betting("cfrrc/rc/rc/cc", game)
    # Reference transcript 5.3, split pot: the SB folds its 5; the other two split the rest.
    assert state.values([0, 3, 3]) == (-5, Fraction(5, 2), Fraction(5, 2))


def test_side_pots_with_three_different_stacks() -> None:
    game = parse_game(
        "nolimit\nnumPlayers = 3\nnumRounds = 1\nstack = 100 200 300\nblind = 0 0 0\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\n"
    )
    state = State(game).apply(Action.raise_to(100)).apply(Action.raise_to(200))
    assert state.raise_bounds() is None  # both others are all-in: nobody could respond
    state = state.apply(CALL)
    assert state.finished and state.spent == (100, 200, 200)
    # Position 0 best: wins the 300 main pot; position 1 beats 2: wins the 200 side pot.
    assert state.values([3, 2, 1]) == (200, 0, -200)
    # Ties in the main pot split it; the side pot goes to the better of the rest.
    assert state.values([3, 3, 1]) == (50, 150, -200)


def test_everyone_but_one_folds_without_a_showdown() -> None:
    state = parse_betting("ff", load_game("holdem.limit.3p"))
    assert state.finished and not state.is_showdown()
    assert state.values() == (-5, 5, 0)


def test_values_of_an_unfinished_hand_or_a_showdown_without_ranks_are_errors() -> None:
    with pytest.raises(IllegalActionError, match="only for a finished hand"):
        State(HULHE).values()
    with pytest.raises(ValueError, match="needs one hand rank per position"):
        parse_betting("cc/cc/cc/cc", HULHE).values()


def test_no_action_is_legal_once_the_hand_is_finished() -> None:
    state = parse_betting("f", HULHE)
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError, match="the hand is finished"):
        state.apply(CALL)


def test_nolimit_legal_actions_filter_requested_sizes() -> None:
    state = State(HUNL)
    assert [str(a) for a in state.legal_actions()] == ["f", "c", "r200", "r20000"]
    assert [str(a) for a in state.legal_actions(raise_sizes=(100, 300, 30000))] == ["f", "c", "r300"]


def test_states_are_immutable_values() -> None:
    start = State(HULHE)
    after = start.apply(CALL)
    assert start.betting_string() == "" and after.betting_string() == "c"
    assert parse_betting("c", HULHE) == after
    assert hash(parse_betting("c", HULHE)) == hash(after)
