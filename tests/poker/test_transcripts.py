"""Replay the reference dealer's transcripts and logs
(tests/fixtures/acpc/spec_section5.md) through poker/.

Every message the reference sent must be reproduced from our deal, state and
visibility rules; every response must parse to the state it answers; every log
line must be reproduced byte for byte, values included.
"""

from __future__ import annotations

import pytest

from acpc_fixtures import SECTIONS, Message, code_blocks, inline_lines, messages, state_lines
from poker.deal import Deal, Dealer
from poker.evaluate import rank_hand
from poker.gamedef import Game, load_game
from poker.protocol import format_state_line, parse_match_state, parse_response, parse_state_line, view_of
from poker.state import State

# The main transcript blocks of each section (5.2's last block is another seed).
TRANSCRIPTS = {"5.1": [0, 1], "5.2": [0, 1], "5.3": [0, 1], "5.4": [0], "5.5": [0]}
# Prose examples of §5.1 come from a seed-0 match, not the section's seed-11 one.
SEED_0_EXAMPLE = inline_lines("5.1", "STATE")[0]


def _deal_of(game: Game, seed: int, hand_id: int) -> Deal:
    dealer = Dealer(game, seed=seed)
    for _ in range(hand_id):
        dealer.next_hand()
    return dealer.next_hand()


def _ranks(state: State, deal: Deal) -> list[int]:
    board = deal.board[: state.game.total_board_cards(state.round)]
    return [rank_hand(hole + board) for hole in deal.hole]


def _replay(game: Game, seed: int, transcript: list[Message]) -> dict[int, tuple[State, Deal]]:
    """Play the transcript, checking every TO line; returns each hand's final state."""
    dealer = Dealer(game, seed=seed)
    n = game.num_players
    hands: dict[int, tuple[State, Deal]] = {}
    hand_id = -1
    state = State(game)
    deal = dealer.next_hand()
    for message in transcript:
        if message.direction == "TO":
            seen, used = parse_match_state(message.text, game)
            assert used == len(message.text)
            assert str(seen) == message.text
            if seen.hand_id != hand_id:
                assert seen.hand_id == hand_id + 1, "hands are dealt in order"
                if hand_id >= 0:
                    deal = dealer.next_hand()
                hand_id, state = seen.hand_id, State(game)
            position = (message.seat - hand_id) % n
            assert str(view_of(state, deal, hand_id=hand_id, viewer=position)) == message.text
        else:
            position = (message.seat - hand_id) % n
            response = parse_response(message.text, game)
            assert response.match_state.same_as(view_of(state, deal, hand_id=hand_id, viewer=position))
            assert state.current_player() == position
            assert response.action is not None and not response.bad_format
            state = state.apply(response.action)
        hands[hand_id] = (state, deal)
    return hands


@pytest.mark.parametrize("section", sorted(TRANSCRIPTS))
def test_transcript_is_reproduced_message_by_message(acpc_dir: object, section: str) -> None:
    stem, seed = SECTIONS[section]
    game = load_game(stem)
    blocks = code_blocks(section)
    transcript = [m for index in TRANSCRIPTS[section] for m in messages(blocks[index])]
    assert sum(m.direction == "TO" for m in transcript) >= 2 * game.num_players
    hands = _replay(game, seed, transcript)
    for state, _ in hands.values():
        assert state.finished
    # Every log line of the same seed is our formatting of the replayed hand.
    names = [f"P{seat + 1}" for seat in range(game.num_players)]
    for line in state_lines(section):
        hand_id = int(line.split(":")[1])
        if hand_id not in hands or line == SEED_0_EXAMPLE:
            continue
        state, deal = hands[hand_id]
        by_position = [names[(p + hand_id) % game.num_players] for p in range(game.num_players)]
        values = state.values(_ranks(state, deal))
        assert sum(values) == 0
        assert format_state_line(state, deal, hand_id=hand_id, values=values, names=by_position) == line


def _all_state_lines() -> list[tuple[str, str]]:
    return [(section, line) for section in SECTIONS for line in state_lines(section)]


@pytest.mark.parametrize(("section", "line"), _all_state_lines())
def test_every_log_line_is_reproduced_from_its_cards_and_betting(acpc_dir: object, section: str, line: str) -> None:
    game = load_game(SECTIONS[section][0])
    record = parse_state_line(line, game)
    values = record.state.values(_ranks(record.state, record.deal))
    assert tuple(float(v) for v in values) == pytest.approx(record.values, abs=1e-6)
    assert format_state_line(record.state, record.deal, hand_id=record.hand_id, values=values, names=record.names) == line


# STATE lines whose seed is known: the cards must be the ones our dealer deals.
KNOWN_SEED_LINES = [
    (section, line)
    for section, line in _all_state_lines()
    if not line.startswith("STATE:419:")  # 5.3's split pot comes from an unseeded run
]


@pytest.mark.parametrize(("section", "line"), KNOWN_SEED_LINES)
def test_log_cards_are_the_seeded_deal(acpc_dir: object, section: str, line: str) -> None:
    stem, seed = SECTIONS[section]
    game = load_game(stem)
    record = parse_state_line(line, game)
    if line == SEED_0_EXAMPLE:
        seed = 0
    deal = _deal_of(game, seed, record.hand_id)
    assert record.deal.hole == deal.hole
    assert record.deal.board == deal.board[: len(record.deal.board)]


@pytest.mark.parametrize(
    ("stem", "seed", "text"),
    [
        ("holdem.limit.2p.reverse_blinds", 0, inline_lines("5.1", "MATCHSTATE")[0]),
        ("holdem.nolimit.2p.reverse_blinds", 7, messages(code_blocks("5.2")[3])[0].text),
        ("holdem.nolimit.2p.reverse_blinds", 7, messages(code_blocks("5.2")[3])[1].text),
        ("kuhn.limit.3p", 7, inline_lines("5.5", "MATCHSTATE")[0]),
    ],
)
def test_single_views_from_other_runs(stem: str, seed: int, text: str) -> None:
    game = load_game(stem)
    seen, _ = parse_match_state(text, game)
    deal = _deal_of(game, seed, seen.hand_id)
    assert str(view_of(seen.state, deal, hand_id=seen.hand_id, viewer=seen.viewer)) == text
