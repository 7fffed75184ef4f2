"""The hand as a table tells it (:mod:`agent.human.streets`): street names,
street amounts with blinds as bets and antes as the pot's, the words, and the
bet presets, checked on hands worked out by hand."""

from __future__ import annotations

import pytest

from agent.human.streets import big_blind, describe, raise_presets, round_names, street_base, streets
from poker.gamedef import load_game
from poker.state import Action, ActionType, State

CALL, FOLD = Action(ActionType.CALL), Action(ActionType.FOLD)
HUNL = load_game("holdem.nolimit")  # blinds 100 (position 0) and 50, stacks 20,000; position 1 acts first pre-flop
LEDUC = load_game("leduc")  # antes of 1, bets of 2 then 4


def play(game_name: str, *actions: Action) -> State:
    state = State(load_game(game_name))
    for action in actions:
        state = state.apply(action)
    return state


@pytest.mark.parametrize(
    ("game", "names"),
    [
        ("holdem.limit", ("pre-flop", "flop", "turn", "river")),
        ("holdem.nolimit.6p", ("pre-flop", "flop", "turn", "river")),
        ("leduc.limit.3p", ("pre-flop", "flop")),
        ("kuhn", ("betting",)),
    ],
)
def test_round_names(game: str, names: tuple[str, ...]) -> None:
    assert round_names(load_game(game)) == names


def test_blinds_are_bets_in_front_and_antes_the_pots() -> None:
    assert big_blind(HUNL) == 100 and big_blind(LEDUC) is None
    # HUNL: the small blind raises to 300, the big blind re-raises to 900, the small blind calls; flop: a bet of 600
    hunl = play("holdem.nolimit", Action.raise_to(300), Action.raise_to(900), CALL, CALL, Action.raise_to(1500))
    preflop, flop = streets(hunl)
    assert preflop.start == (100, 50) and preflop.start_pot == 150  # the blinds, in front of their seats
    assert [describe(name, step) for name, step in zip(("sb", "bb", "sb"), preflop.steps)] == [
        "sb raises to 300", "bb raises to 900", "sb calls 600"
    ]
    assert preflop.front == (900, 900)
    assert flop.base == 900 and flop.start == (0, 0) and flop.start_pot == 1800
    assert [describe(name, step) for name, step in zip(("bb", "sb"), flop.steps)] == ["bb checks", "sb bets 600"]
    assert flop.front == (0, 600) and flop.steps[-1].pot == 2400 and street_base(hunl) == 900
    # Leduc: each seat's ante goes to the pot; the first wager is a bet of 2, the answer a raise to 4
    leduc = play("leduc", Action(ActionType.RAISE), Action(ActionType.RAISE), CALL)
    first = streets(leduc)[0]
    assert first.base == 1 and first.start == (0, 0) and first.start_pot == 2
    assert [describe(name, step) for name, step in zip(("you", "bot", "you"), first.steps)] == [
        "you bet 2", "bot raises to 4", "you call 2"  # "you" in the second person
    ]


def test_an_all_in_and_a_fold_keep_their_chips_in_front() -> None:
    state = play("holdem.nolimit", Action.raise_to(20000), FOLD)
    (preflop,) = streets(state)
    assert describe("sb", preflop.steps[0]) == "sb raises to 20000 (all-in)"
    assert describe("bb", preflop.steps[1]) == "bb folds"
    assert preflop.front == (100, 20000)  # the big blind folded, its blind still in front


def test_presets_are_legal_and_in_their_places() -> None:
    # the small blind's first decision: to call 50, the pot 150
    assert raise_presets(State(HUNL)) == [
        ("min", 200), ("½ pot", 200), ("⅔ pot", 233), ("pot", 300), ("2.5×", 250), ("all-in", 20000)
    ]
    # on the flop, nothing bet yet: no 2.5x of a bet that is not there, pot fractions of the 200 in it
    flop = play("holdem.nolimit", CALL, CALL)
    assert raise_presets(flop) == [("min", 200), ("½ pot", 200), ("⅔ pot", 233), ("pot", 300), ("all-in", 20000)]
    # facing a bet of 300 on that flop: 2.5 times it on top of the 100 before the street
    facing = flop.apply(Action.raise_to(400))
    presets = dict(raise_presets(facing))
    assert presets["2.5×"] == 100 + 750 and presets["min"] == 700 and presets["all-in"] == 20000
    assert all(facing.is_legal(Action.raise_to(size)) for size in presets.values())
    assert raise_presets(play("holdem.nolimit", Action.raise_to(20000))) == []  # all-in faced: nothing to raise
