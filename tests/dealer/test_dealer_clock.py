"""The clock against seats that keep talking instead of answering, and the
wall-clock cap on a whole match (issue 24 item 2; :mod:`dealer.budget`).

Real clocks, as in test_dealer_errors.py: each comment gives the arithmetic,
and a bound that a loaded machine could break by waking late keeps at least
a second of margin. ``timeout_s`` only stops a dealer that never ends (the
reference's behaviour for a seat that drips comments) from hanging the suite.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import pytest
import trio

from dealer.budget import DEALER_S_FIXED, DEALER_S_PER_HAND, TimeLimits, match_deadline_s
from dealer.cli import main, parse_args
from dealer.records import HandRecord, read_records
from dealer.server import MatchConfig, serve_match
from poker.gamedef import load_game
from tests.dealer.dealer_clients import DRIP, SILENT, Script, actions_of, run_match

HULHE = load_game("hulhe")
CALLS = actions_of("cc/cc/cc/cc")  # a limit hand checked down
FIRST_HAND = "STATE:0:cc/cc/cc/cc:3c4d|9d6c/6d7hAs/Ks/Td:-10|10:P1|P2"


def _config(tmp_path: Path, num_hands: int = 2, **options: object) -> MatchConfig:
    return MatchConfig("m", HULHE, "hulhe", num_hands, 11, ("P1", "P2"), log_dir=tmp_path, **options)  # type: ignore[arg-type]


def _finished_hands_on_disk(tmp_path: Path) -> tuple[list[str], list[int]]:
    """The STATE lines of the log and the hand ids of the records."""
    states = [line for line in (tmp_path / "m.log").read_text().splitlines() if line.startswith("STATE:")]
    records = [r.hand_id for r in read_records(tmp_path / "m.hands.msgpack") if isinstance(r, HandRecord)]
    return states, records


@pytest.mark.parametrize(
    ("drip", "ending"),
    [
        # Comments are never charged: only the clock since the send stops them,
        # at --t_response, with the reference's words for a seat that did not answer.
        (b"#\r\n", r"ERROR: could not get action from seat 2\n3\.\d seconds spent waiting; timeout 3\.0\n"),
        (b"; gui command\r\n", r"ERROR: could not get action from seat 2\n3\.\d seconds spent waiting; timeout 3\.0\n"),
        # An empty line is a bad state, charged as it comes (the reference's quirk):
        # the one at 3 s may be read just before the deadline, or just after.
        (
            b"\r\n",
            r"(ERROR: could not get action from seat 2\n3\.\d seconds spent waiting; timeout 3\.0"
            r"|ERROR: seat 2 ran out of time)\n",
        ),
    ],
)
async def test_a_seat_dripping_lines_is_timed_out_with_finished_hands_kept(tmp_path: Path, drip: bytes, ending: str) -> None:
    # Hand 0 is played; in hand 1 seat 2 sends `drip` once a second instead of
    # answering. The reference (and main before issue 24) waited for ever on
    # comments; here the match ends at --t_response 3000 after the send.
    config = _config(tmp_path, t_response_ms=3000, quiet=True)
    dripping = Script(follow={0: CALLS, 1: [DRIP] * 8}, drip=drip)
    started = trio.current_time()
    capture = await run_match(config, [Script(follow={0: CALLS, 1: CALLS}), dripping], timeout_s=20)
    elapsed = trio.current_time() - started

    assert re.search(ending + r"\Z", capture.stderr), capture.stderr[-300:]
    assert elapsed < 7.0  # 3 s and the end of the match; waiting out the 8 drips would take over 8 s
    assert capture.result.exit_status == 1 and capture.result.hands_played == 1
    assert _finished_hands_on_disk(tmp_path) == ([FIRST_HAND], [0])


async def test_a_silent_seat_is_stopped_when_its_hand_budget_runs_out(tmp_path: Path) -> None:
    # --t_hand 1000 under the default --t_response 600000: the reference waits
    # the 600 s before its "could not get action"; the seat cannot make it any
    # more after 1 s, and is stopped then with the words for a late answer.
    config = _config(tmp_path, t_hand_ms=1000, quiet=True)
    started = trio.current_time()
    capture = await run_match(config, [Script(follow={0: CALLS, 1: CALLS}), Script(follow={0: CALLS, 1: [SILENT] * 8})], timeout_s=20)

    assert trio.current_time() - started < 3.0
    assert capture.stderr.endswith("ERROR: seat 2 ran out of time\n")
    assert _finished_hands_on_disk(tmp_path) == ([FIRST_HAND], [0])


async def test_a_match_past_its_time_limit_aborts_with_finished_hands_kept(tmp_path: Path) -> None:
    # Seat 2 takes 0.1 s per answer, within every limit; 4 answers a hand make
    # a hand last 0.4 s or more, so 100 hands cannot end in 1.5 s.
    config = _config(tmp_path, 100, match_limit_s=1.5, quiet=True)
    started = trio.current_time()
    capture = await run_match(config, [Script(default="c"), Script(default="c", delay_s=0.1)], timeout_s=20)

    assert trio.current_time() - started < 3.5
    assert capture.stderr.endswith("ERROR: the match ran past its time limit of 1.5 seconds\n")
    result = capture.result
    assert result.exit_status == 1 and 1 <= result.hands_played < 100
    assert result.aborted == "ERROR: the match ran past its time limit of 1.5 seconds"
    states, records = _finished_hands_on_disk(tmp_path)
    assert len(states) == result.hands_played and records == list(range(result.hands_played))


async def test_a_match_within_its_limits_ends_under_its_derived_cap(tmp_path: Path) -> None:
    # Cap: 5 s to connect + 2 seats x 20 hands x 0.5 s + 20 x 0.1 s + 10 s = 37 s;
    # agents that answer at once need a fraction of a second.
    config = _config(tmp_path, 20, start_timeout_ms=5000, t_per_hand_ms=500, quiet=True).with_match_deadline()
    assert config.match_limit_s == 5 + 20 + 20 * DEALER_S_PER_HAND + DEALER_S_FIXED
    capture = await run_match(config, [Script(default="c"), Script(default="r")], timeout_s=20)

    assert capture.result.exit_status == 0 and capture.result.hands_played == 20
    assert capture.stdout.splitlines()[-1].startswith("SCORE:")


async def test_the_time_limit_also_bounds_the_wait_for_the_seats(tmp_path: Path) -> None:
    # Nobody connects and there is no start timeout: the cap ends the wait.
    err = io.StringIO()
    with trio.fail_after(20):
        result = await serve_match(_config(tmp_path, match_limit_s=0.5), stdout=io.StringIO(), stderr=err)

    assert err.getvalue().endswith("ERROR: the match ran past its time limit of 0.5 seconds\n")
    assert result.exit_status == 1 and result.hands_played == 0


def test_match_deadline_adds_the_start_wait_every_seats_budget_and_the_dealers_work() -> None:
    limits = TimeLimits(response_ms=1000, hand_ms=5000, per_hand_ms=2000, start_timeout_ms=3000)
    # 3 s to connect + 2 seats x 100 hands x 2 s (per hand < per-hand-and-seat) + the dealer's share
    assert match_deadline_s(limits, num_hands=100, num_seats=2) == 3 + 400 + 100 * DEALER_S_PER_HAND + DEALER_S_FIXED
    # A hand budget below the average one binds instead: 3 seats x 10 hands x 1.5 s
    tight = TimeLimits(response_ms=1000, hand_ms=1500, per_hand_ms=2000, start_timeout_ms=0)
    assert match_deadline_s(tight, num_hands=10, num_seats=3) == 45 + 10 * DEALER_S_PER_HAND + DEALER_S_FIXED
    # No start timeout: the wait for the seats, and so the match, has no bound.
    assert match_deadline_s(TimeLimits(), num_hands=10, num_seats=2) == math.inf


def test_match_limit_option_takes_seconds_or_auto() -> None:
    base = ["m", "hulhe", "100", "1", "A", "B"]
    config = parse_args(base)
    assert config is not None and config.match_limit_s == math.inf  # none unless asked for
    config = parse_args([*base, "--match-limit", "90.5"])
    assert config is not None and config.match_limit_s == 90.5
    config = parse_args([*base, "--start_timeout", "2000", "--t_per_hand", "500", "--match-limit", "auto"])
    assert config is not None
    # 2 s to connect + 2 seats x 100 hands x 0.5 s + 0.1 s a hand + 10 s
    assert config.match_limit_s == match_deadline_s(config.limits, num_hands=100, num_seats=2) == 2 + 100 + 10 + 10
    assert config.with_match_deadline() == config


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--match-limit", "auto"], "ERROR: --match-limit auto needs a --start_timeout (the wait for the seats has no end without one)\n"),
        (["--match-limit", "-1"], "ERROR: could not get match time limit from -1 (seconds, or auto)\n"),
        (["--match-limit", "nan"], "ERROR: could not get match time limit from nan (seconds, or auto)\n"),
        (["--match-limit", "soon"], "ERROR: could not get match time limit from soon (seconds, or auto)\n"),
    ],
)
def test_bad_match_limits_are_one_line(options: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["m", "hulhe", "10", "1", "A", "B", *options]) == 1
    assert capsys.readouterr().err == message
