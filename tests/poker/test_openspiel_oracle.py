"""Cross-check against OpenSpiel's universal_poker, which embeds the reference game code.

Random playouts of the same game definition in both: at every decision the legal
actions must agree, and at the end the returns must equal our values. Skipped
when ``pyspiel`` is not importable (it is an optional test dependency).
"""

from __future__ import annotations

import random
import re

import pytest

import needs
from poker.evaluate import rank_hand
from poker.gamedef import Game, load_game
from poker.protocol import parse_state_line
from poker.state import CALL, FOLD, Action, ActionType, State

pyspiel = needs.importorskip("pyspiel", "OpenSpiel")

GAMES = ["kuhn", "kuhn3p", "leduc", "leduc.limit.3p", "leduc.nolimit", "hulhe", "hunl", "holdem.limit.3p", "holdem.nolimit.3p"]
PLAYOUTS = 300


def _ours(action_id: int, game_is_limit: bool) -> Action:
    # universal_poker fullgame ids: 0 fold, 1 call, 2 raise (limit) or the raise-to size (no-limit).
    if action_id == 0:
        return FOLD
    if action_id == 1:
        return CALL
    return Action(ActionType.RAISE) if game_is_limit else Action.raise_to(action_id)


def _parameters(game: Game) -> dict[str, object]:
    """Our game as universal_poker parameters, with the full action set: in limit games
    that is the "fcpa" abstraction (ids 0 fold, 1 call, 2 bet); "fullgame" numbers
    no-limit raises by their raise-to size."""

    def ints(values: tuple[int, ...]) -> str:
        return " ".join(map(str, values))

    parameters: dict[str, object] = {
        "betting": game.betting.value,
        "bettingAbstraction": "fcpa" if game.is_limit else "fullgame",
        "numPlayers": game.num_players,
        "numRounds": game.num_rounds,
        "blind": ints(game.blind),
        "firstPlayer": ints(tuple(f + 1 for f in game.first_player)),
        "maxRaises": ints(game.max_raises),
        "numSuits": game.num_suits,
        "numRanks": game.num_ranks,
        "numHoleCards": game.num_hole_cards,
        "numBoardCards": ints(game.num_board_cards),
        "stack": ints(game.stack),
    }
    if game.is_limit:
        parameters["raiseSize"] = ints(game.raise_size)
    return parameters


def _acpc_state(spiel_state: object) -> str:
    match = re.search(r"ACPC State: (STATE:\S*)", str(spiel_state))
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize("game_name", GAMES)
def test_random_playouts_agree_with_openspiel(game_name: str) -> None:
    game = load_game(game_name)
    spiel_game = pyspiel.load_game("universal_poker", _parameters(game))
    rng = random.Random(game_name)
    for _ in range(PLAYOUTS):
        spiel = spiel_game.new_initial_state()
        ours = State(game)
        while not spiel.is_terminal():
            legal_ids = spiel.legal_actions()
            if spiel.is_chance_node():
                spiel.apply_action(rng.choice(legal_ids))
                continue
            assert spiel.current_player() == ours.current_player()
            # Read off the ids (see _ours; a no-limit hold'em state offers thousands of raises).
            assert (0 in legal_ids) == ours.can_fold()
            raises = [a for a in legal_ids if a >= 2]  # the raise-to sizes (no-limit), or [2] (limit)
            bounds = ours.raise_bounds()
            if not raises:
                assert bounds is None
            elif game.is_limit:
                assert bounds is not None
            else:
                # Every raise-to in our range, and nothing else, is offered.
                assert bounds == (min(raises), max(raises))
                assert len(raises) == bounds[1] - bounds[0] + 1
            choice = rng.choice(legal_ids)
            spiel.apply_action(choice)
            ours = ours.apply(_ours(choice, game.is_limit))
        assert ours.finished
        line = _acpc_state(spiel)
        record = parse_state_line(f"{line}:0{'|0' * (game.num_players - 1)}:{'|'.join('x' * game.num_players)}", game)
        assert record.state.betting_string() == ours.betting_string()
        board = record.deal.board
        values = ours.values([rank_hand(hole + board) for hole in record.deal.hole])
        assert [float(v) for v in values] == pytest.approx(spiel.returns(), abs=1e-9)
