"""Fixed seats, resuming from the transaction log, hand records, events, and
concurrent matches (docs/protocol.md, Positions and seats and The dealer's rules;
reference transcript 5.7 in tests/fixtures/acpc/spec_section5.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import trio

from acpc_fixtures import code_blocks
from dealer.log import read_log
from dealer.records import HandRecord, MatchHeader, load_hands, read_records
from dealer.server import MatchConfig
from poker.gamedef import load_game
from tests.dealer.dealer_clients import CLOSE, Script, actions_of, run_match

HULHE = load_game("hulhe")
# Reference transcript 5.7: four hands of seed 0 and their betting.
LOG_5_7 = code_blocks("5.7")[1]
PLAN_5_7 = {int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in LOG_5_7 if line.startswith("STATE:")}


def _config(tmp_path: Path, **options: object) -> MatchConfig:
    return MatchConfig("lim2", HULHE, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), log_dir=tmp_path, **options)  # type: ignore[arg-type]


async def test_fixed_seats_keep_position_and_seat_together(tmp_path: Path) -> None:
    config = MatchConfig("m", HULHE, "hulhe", 2, 11, ("P1", "P2"), log_dir=tmp_path, fixed_seats=True)
    plan = {0: ["f"], 1: ["f"]}
    capture = await run_match(config, [Script(follow=plan), Script(follow=plan)])

    # Seat 1 is position 0 in both hands; position 1 (seat 2) folds each time.
    assert capture.received[0] == ["MATCHSTATE:0:0::3c4d|", "MATCHSTATE:0:0:f:3c4d|", "MATCHSTATE:0:1::5c9c|", "MATCHSTATE:0:1:f:5c9c|"]
    assert (tmp_path / "m.log").read_text().splitlines()[4:] == [
        "STATE:0:f:3c4d|9d6c:5|-5:P1|P2",
        "STATE:1:f:5c9c|Qc9h:5|-5:P1|P2",
        "SCORE:10|-10:P1|P2",
    ]


async def test_resume_from_transaction_log_continues_the_match(tmp_path: Path) -> None:
    # Run 1 stops in hand 1 when seat 2 hangs up on its 5th action (after cc/rr).
    interrupted = {0: PLAN_5_7[0], 1: PLAN_5_7[1][:4] + [CLOSE]}
    first = await run_match(_config(tmp_path, write_tlog=True, quiet=True), [Script(follow=PLAN_5_7), Script(follow=interrupted)])
    assert first.result.exit_status == 1
    tlog = (tmp_path / "lim2.tlog").read_text().splitlines()
    assert [line.split()[:2] for line in tlog] == [[a, "0"] for a in PLAN_5_7[0]] + [[a, "1"] for a in PLAN_5_7[1][:4]]

    # Run 2 replays those 12 actions (hand 0's value counts) and plays on from cc/rr.
    second = await run_match(_config(tmp_path, write_tlog=True, append=True), [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)])

    assert second.result.exit_status == 0
    assert second.result.hands_played == 4
    assert second.stdout.endswith("\nSCORE:-40|40:P1|P2\n")
    # Nothing is re-sent for hand 0; hand 1 resumes at the replayed state.
    assert second.received[0][0] == "MATCHSTATE:1:1:cc/rr:|5dJd/2sTh2h"
    header = LOG_5_7[:4]
    assert (tmp_path / "lim2.log").read_text().splitlines() == header + LOG_5_7[4:5] + header + LOG_5_7[5:]
    assert len((tmp_path / "lim2.tlog").read_text().splitlines()) == sum(len(p) for p in PLAN_5_7.values())


@pytest.mark.parametrize(
    ("tlog", "error"),
    [
        ("c 5 1.000000 1.000001\n", "ERROR: handId mismatch in transaction log: c 5 1.000000 1.000001\n"),
        ("x 0 1.000000 1.000001\n", "ERROR: invalid action in transaction log: x 0 1.000000 1.000001\n"),
        ("f 0 1.000000 1.000001\nf 0 1.000000 1.000001\n", "ERROR: handId mismatch in transaction log: f 0 1.000000 1.000001\n"),
        ("c 0 soon\n", "ERROR: could not parse transaction stamp c 0 soon\n"),
        # Hand 0 opens with position 1, seat 2; 900 s is over --t_response 1000.
        ("c 0 1.000000 901.000000\n", "ERROR: seat 2 ran out of time in transaction file\n"),
    ],
)
async def test_bad_transaction_log_aborts_the_resume(tmp_path: Path, tlog: str, error: str) -> None:
    (tmp_path / "lim2.tlog").write_text(tlog)
    config = _config(tmp_path, write_tlog=True, append=True, quiet=True, t_response_ms=1000)
    capture = await run_match(config, [Script(), Script()])

    assert capture.stderr.endswith(error)
    assert capture.result.exit_status == 1


async def test_records_events_and_log_reader_agree(tmp_path: Path) -> None:
    capture = await run_match(_config(tmp_path, quiet=True), [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)])

    header, *rest = list(read_records(tmp_path / "lim2.hands.msgpack"))
    hands = [record for record in rest if isinstance(record, HandRecord)]
    assert header == MatchHeader("lim2", HULHE, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), False)
    assert hands[1] == HandRecord(
        hand_id=1,
        seats=(1, 0),  # position 0 sits in seat 1 in hand 1
        hole=((19, 47), (13, 37)),  # 6sKs | 5dJd
        board=(3, 34, 2, 42, 26),  # 2sTh2h Qh 8h
        board_shown=5,
        betting="cc/rrc/rc/crc",
        values=(70.0, -70.0),
    )
    table = load_hands(tmp_path / "lim2.hands.msgpack")
    assert table.hand_id.tolist() == [0, 1, 2, 3]
    assert table.seat_values.sum(axis=0).tolist() == list(capture.result.totals) == [-40.0, 40.0]
    assert table.hole.shape == (4, 2, 2) and table.board.shape == (4, 5)
    np.testing.assert_array_equal(table.board_shown, [5, 5, 5, 5])

    log = read_log(tmp_path / "lim2.log", HULHE)
    assert log.headers == (tuple(LOG_5_7[:4]),)
    assert [line.state.betting_string() for line in log.hands] == list(table.betting)
    assert [line.values for line in log.hands] == [h.values for h in hands]
    assert log.score == ((-40.0, 40.0), ("P1", "P2"))

    events = [json.loads(line) for line in (tmp_path / "lim2.events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["listening", "connected", "connected", "started", "finished"]
    assert events[-1]["totals"] == [-40.0, 40.0] and {e["match"] for e in events} == {"lim2"}


async def test_no_records_and_no_log_write_no_files(tmp_path: Path) -> None:
    config = _config(tmp_path, records=False, write_log=False, quiet=True)
    capture = await run_match(config, [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)])

    assert capture.result.totals == (-40.0, 40.0)
    assert list(tmp_path.iterdir()) == []


async def test_many_matches_run_concurrently_in_one_process(tmp_path: Path) -> None:
    async def one(index: int) -> None:
        config = MatchConfig(
            f"m{index}", HULHE, "hulhe", 4, 0, (f"A{index}", f"B{index}"), log_dir=tmp_path, quiet=True
        )
        capture = await run_match(config, [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)])
        assert capture.stdout.endswith(f"\nSCORE:-40|40:A{index}|B{index}\n")

    async with trio.open_nursery() as nursery:
        for index in range(20):
            nursery.start_soon(one, index)
    for index in range(20):
        lines = (tmp_path / f"m{index}.log").read_text().splitlines()
        assert [line.rsplit(":", 1)[0] for line in lines[4:8]] == [line.rsplit(":", 1)[0] for line in LOG_5_7[4:8]]
