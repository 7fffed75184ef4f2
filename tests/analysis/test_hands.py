"""Hand tables (analysis.hands) from the reference dealer's and our logs and records
(analysis.logs, analysis.records, analysis.hand_files)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from acpc_fixtures import SECTIONS, code_blocks, state_lines
from analysis.hand_files import read_hands
from analysis.hands import NO_SEED, HandsError, concat
from analysis.logs import iter_log_blocks, read_log
from analysis.records import read_records
from arena.commands.match import main as arena_match
from poker.gamedef import load_game
from poker.protocol import parse_state_line

HULHE = load_game("holdem.limit.2p.reverse_blinds")
SECTIONS_WITH_LINES = [s for s in SECTIONS if state_lines(s)]
LOG_57 = code_blocks("5.7")[1]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("section", SECTIONS_WITH_LINES)
def test_every_section_5_state_line_reads_as_the_rules_read_it(tmp_path: Path, section: str) -> None:
    game = load_game(SECTIONS[section][0])
    lines = state_lines(section)
    for validate in (False, True):
        hands = read_log(write(tmp_path / "s.log", lines), game, validate=validate)
        assert len(hands) == len(lines)
        np.testing.assert_allclose(hands.values.sum(axis=1), 0, atol=1e-5)
        for row, line in enumerate(lines):
            expected = parse_state_line(line, game)
            assert hands.hand_id[row] == expected.hand_id
            assert tuple(hands.values[row]) == expected.values
            assert hands.names_at(row) == expected.names
            assert tuple(map(tuple, hands.hole[row].tolist())) == expected.deal.hole
            assert tuple(c for c in hands.board[row].tolist() if c >= 0) == expected.deal.board
            assert hands.betting[row] == expected.state.betting_string()
            assert hands.state_line(row) == line
            assert hands.where(row) == f"{tmp_path / 's.log'}:{row + 1}"


def test_reference_log_with_header_and_score_takes_the_game_from_the_header(tmp_path: Path) -> None:
    hands = read_log(write(tmp_path / "lim2.log", LOG_57))
    assert hands.game == HULHE
    assert hands.hand_id.tolist() == [0, 1, 2, 3]
    assert hands.names == ("P1", "P2")
    assert hands.name_index.tolist() == [[0, 1], [1, 0], [0, 1], [1, 0]]
    assert hands.line.tolist() == [5, 6, 7, 8]
    assert hands.seed.tolist() == [0, 0, 0, 0]
    assert hands.headers[0].game_path == "holdem.limit.2p.reverse_blinds.game"
    assert hands.score == ((-40.0, 40.0), ("P1", "P2"))
    assert hands.name_values("P1").sum() == -40
    assert hands.board_shown.tolist() == [5, 5, 5, 5]


def test_blocks_give_the_same_columns_as_one_read(tmp_path: Path) -> None:
    path = write(tmp_path / "lim2.log", LOG_57)
    whole = read_log(path)
    blocks = list(iter_log_blocks(path, HULHE, block_lines=3))
    joined = concat(blocks)
    assert [len(b) for b in blocks] == [0, 2, 2]
    for column in ("hand_id", "values", "name_index", "hole", "board", "line"):
        assert np.array_equal(getattr(joined, column), getattr(whole, column)), column
    assert joined.betting == whole.betting


DAMAGE = [
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10", "fields, not 6"),
    ("STATE:x:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "hand id 'x' is not a number"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h:10|-10:P1|P2", "reaches round 4 but the cards show round 3"),
    ("STATE:0:cc/cc/cc/rf:5d5c9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "are not 2 hands and a board"),
    ("STATE:0:cc/cc/cc/rx:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "holds characters other than f, c, r, digits and /"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10|0:P1|P2", "not one per position"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1", "names 'P1' are not one per position"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-9:P1|P2", "values sum to 1, not 0"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:ten|-10:P1|P2", "a value is not a number"),
    ("STATE:0:cc/cc/cc/rf:d5c5|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "a card is not a rank then a suit"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/5d:10|-10:P1|P2", "a card is dealt twice"),
    ("STAT:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "not a header, STATE or SCORE line"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:inf|-inf:P1|P2", "a value is not a finite number"),
    ("STATE:0:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:1e999|-10:P1|P2", "a value is not a finite number"),
    ("STATE:4294967296:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "hand id '4294967296' is not a number from 0 to 4294967295"),
    ("STATE:99999999999:cc/cc/cc/rf:5d5c|9hQd/8dAs8s/4h/6d:10|-10:P1|P2", "hand id '99999999999' is not a number from 0"),
]


@pytest.mark.parametrize(("line", "message"), DAMAGE, ids=[m for _, m in DAMAGE])
def test_a_damaged_line_is_named_by_file_and_line_or_skipped_on_request(
    tmp_path: Path, line: str, message: str
) -> None:
    lines = [*LOG_57[:6], line, *LOG_57[7:]]
    path = write(tmp_path / "bad.log", lines)
    with pytest.raises(HandsError, match="bad.log:7: ") as raised:
        read_log(path, HULHE)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    hands = read_log(path, HULHE, skip_damaged=True)
    assert hands.skipped == (7,)
    assert hands.hand_id.tolist() == [0, 1, 3]
    assert hands.line.tolist() == [5, 6, 8]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("STATE:2:rrc/crc/cc/rc:Ah8s|2h4c/Qd7h6c/4s/Jc:60|-60:P1|P2", "values are not those of the betting and cards"),
        ("STATE:2:rrc/crc/cc/rrrrrc:Ah8s|2h4c/Qd7h6c/4s/Jc:-60|60:P1|P2", "illegal action"),
        ("STATE:2:rrc/crc/cc/r:Ah8s|2h4c/Qd7h6c/4s/Jc:-60|60:P1|P2", "does not finish the hand"),
    ],
)
def test_validate_replays_the_rules(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "v.log", [*LOG_57[:6], line, *LOG_57[7:]])
    assert len(read_log(path, HULHE)) == 4  # the fast path takes the values as written
    with pytest.raises(HandsError, match="v.log:7: ") as raised:
        read_log(path, HULHE, validate=True)
    assert message in str(raised.value)
    assert read_log(path, HULHE, validate=True, skip_damaged=True).skipped == (7,)


def test_unreadable_or_headerless_logs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(HandsError, match="missing.log"):
        read_log(tmp_path / "missing.log", HULHE)
    with pytest.raises(HandsError, match="no '# name/game/hands/seed' header"):
        read_log(write(tmp_path / "bare.log", LOG_57[4:]))
    assert len(read_log(write(tmp_path / "empty.log", []), HULHE)) == 0


def test_our_dealers_log_and_records_read_as_arena_match_scored_them(tmp_path: Path) -> None:
    argv = ["kuhn3p", "--hands", "40", "--seed", "3", "random", "always-call", "always-raise"]
    assert arena_match([*argv, "--in-process", "--run-dir", str(tmp_path)]) == 0
    agents = json.loads((tmp_path / "results.json").read_text())["agents"]
    log = read_hands(tmp_path / "match.log")
    records = read_hands(tmp_path / "match.hands.msgpack")
    assert log.game == records.game == load_game("kuhn3p")
    assert log.hand_id.tolist() == records.hand_id.tolist() == list(range(40))
    for agent in agents:
        chips = log.name_values(agent["name"])
        assert chips.sum() == agent["total_chips"]
        assert chips.mean() == agent["mean"]
        assert np.array_equal(records.name_values(agent["name"]), chips)
    assert np.array_equal(log.hole, records.hole)
    assert np.array_equal(log.board, records.board)
    assert log.betting == records.betting
    assert log.seed.tolist() == records.seed.tolist() == [3] * 40
    assert log.score is not None and log.score[1] == ("random", "always-call", "always-raise")
    assert read_records(tmp_path / "match.hands.msgpack").line.tolist() == list(range(1, 41))
    assert NO_SEED == -1


def test_damaged_records_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.hands.msgpack"
    path.write_bytes(b"\x93\x01\x02\x03")
    with pytest.raises(HandsError, match="a hand comes before any match header"):
        read_records(path)


def test_portfolio_components_are_joined_from_the_side_file_by_hand_id(tmp_path: Path) -> None:
    log = tmp_path / "match.1.log"
    log.write_text(
        "# name/game/hands/seed match.1 kuhn 3 1\n"
        "STATE:0:cc:Ks|Qs:1|-1:portfolio|always-call\n"
        "STATE:1:cc:Ks|As:-1|1:always-call|portfolio\n"
        "STATE:2:cc:Qs|As:-1|1:portfolio|always-call\n"
    )
    side = tmp_path / "match.1.portfolio.components.csv"
    # hand 1 twice (a resumed seating's replayed hand): the last line counts; hand 2 unrecorded.
    side.write_text("0,kuhn-cfr\n1,tilt:preset=orange\n1,tilt:preset=peach\n")
    hands = read_hands(log)
    assert hands.components == {"portfolio": ("kuhn-cfr", "tilt:preset=peach", "")}
    assert hands.take(np.array([2, 0])).components == {"portfolio": ("", "kuhn-cfr")}
    joined = concat([hands, read_log(log)])  # the second read has no components
    assert joined.components == {"portfolio": ("kuhn-cfr", "tilt:preset=peach", "", "", "", "")}
    side.write_text("0,kuhn-cfr\nhand 1\n")
    with pytest.raises(HandsError, match=r"match\.1\.portfolio\.components\.csv:2: not a 'hand_id,component' line"):
        read_hands(log)


async def test_our_dealers_log_and_the_reference_dealers_give_the_same_history(tmp_path: Path) -> None:
    """The four hands of reference transcript 5.7 (tests/fixtures/acpc/spec_section5.md) played
    again by our dealer (the seats send the
    log's actions): the two logs read to the same columns."""
    from dealer.server import MatchConfig
    from tests.dealer.dealer_clients import Script, actions_of, run_match

    plan = {int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in LOG_57 if line.startswith("STATE:")}
    config = MatchConfig("ours", HULHE, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), log_dir=tmp_path)
    await run_match(config, [Script(follow=plan), Script(follow=plan)])
    ours, reference = read_log(tmp_path / "ours.log", HULHE), read_log(write(tmp_path / "ref.log", LOG_57), HULHE)
    for column in ("hand_id", "values", "name_index", "hole", "board", "seed"):
        assert np.array_equal(getattr(ours, column), getattr(reference, column)), column
    assert ours.betting == reference.betting and ours.names == reference.names and ours.score == reference.score
