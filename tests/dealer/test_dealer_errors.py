"""Aborts, time limits, handshake and framing (docs/protocol.md, Messages and The dealer's rules;
reference transcripts 5.6 in tests/fixtures/acpc/spec_section5.md).

Timing tests use small budgets; each comment gives the arithmetic. Real clocks
are used (the dealer talks to real sockets): where a late wake-up on a loaded
machine could flip the outcome the margin is at least 250 ms (CI runs on two
busy cores); where lateness only adds to a time that is already over the
budget, the margin can be small.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import trio

from dealer.server import MatchConfig, serve_match
from poker.gamedef import load_game
from tests.dealer.dealer_clients import CLOSE, SILENT, VERSION, Script, actions_of, run_match

HULHE = load_game("hulhe")
HUNL = load_game("hunl")
CALLS = actions_of("cc/cc/cc/cc")  # a limit hand checked down
HEADER = "# name/game/hands/seed m hulhe {hands} 11\n#--t_response {r}\n#--t_hand {h}\n#--t_per_hand {p}\n"


def _config(tmp_path: Path, num_hands: int = 2, **options: object) -> MatchConfig:
    return MatchConfig("m", HULHE, "hulhe", num_hands, 11, ("P1", "P2"), log_dir=tmp_path, **options)  # type: ignore[arg-type]


def _log(tmp_path: Path) -> list[str]:
    return (tmp_path / "m.log").read_text().splitlines()


async def test_silent_agent_times_out_like_5_6(tmp_path: Path) -> None:
    # Reference transcript 5.6: --t_response 1000 and an agent that does not answer.
    config = _config(tmp_path, t_response_ms=1000, quiet=True)
    capture = await run_match(config, [Script(follow={0: [SILENT] * 8}), Script(follow={0: CALLS})])

    header = HEADER.format(hands=2, r=1000, h=600000, p=7000)
    assert re.fullmatch(
        re.escape(header) + r"ERROR: could not get action from seat 1\n1\.[01] seconds spent waiting; timeout 1\.0\n",
        capture.stderr,
    )
    assert capture.stdout.count("\n") == 1  # the ports line only: no SCORE
    assert capture.result.exit_status == 1
    assert capture.result.aborted is not None and capture.result.aborted.startswith("ERROR: could not get action from seat 1\n")
    assert (tmp_path / "m.log").read_text() == header


async def test_disconnect_keeps_every_finished_hand(tmp_path: Path) -> None:
    # Seat 2 plays hand 0, then hangs up on its first turn of hand 1.
    config = _config(tmp_path, 3, quiet=True)
    capture = await run_match(config, [Script(follow={0: CALLS, 1: CALLS}), Script(follow={0: CALLS, 1: [CLOSE] * 8})])

    assert "ERROR: could not get action from seat 2\n0.0 seconds spent waiting; timeout 600.0\n" in capture.stderr
    assert _log(tmp_path)[4:] == ["STATE:0:cc/cc/cc/cc:3c4d|9d6c/6d7hAs/Ks/Td:-10|10:P1|P2"]
    assert capture.result.hands_played == 1
    assert capture.result.totals == (-10.0, 10.0)
    assert capture.result.exit_status == 1


async def test_hand_budget_exceeded_by_a_late_answer(tmp_path: Path) -> None:
    # --t_hand 300: seat 2 answers after 400 ms > 300 ms; the line is read, then refused.
    config = _config(tmp_path, t_hand_ms=300, quiet=True)
    capture = await run_match(config, [Script(follow={0: CALLS}), Script(follow={0: CALLS}, delay_s=0.4)])

    assert capture.stderr.endswith("ERROR: seat 2 ran out of time\n")
    assert capture.result.exit_status == 1


async def test_match_budget_is_per_hand_times_hands(tmp_path: Path) -> None:
    # --t_per_hand 100 with 2 hands: 200 ms per seat for the match. Seat 2 takes
    # 120 ms per answer: 120 ms after its first answer, 240 ms > 200 after its second.
    config = _config(tmp_path, t_per_hand_ms=100, quiet=True)
    capture = await run_match(config, [Script(follow={0: CALLS}), Script(follow={0: CALLS}, delay_s=0.12)])

    assert capture.stderr.endswith("ERROR: seat 2 ran out of time\n")
    assert "#--t_per_hand 100\n" in capture.stderr


async def test_ignored_lines_are_charged_again(tmp_path: Path) -> None:
    # The quirk: a bad line 500 ms after the state is charged 500 ms, and the
    # fold 500 ms later is charged 1000 ms more: 1500 > --t_hand 1250 (the bad
    # line, at 500 ms, is well inside the budget).
    config = _config(tmp_path, 1, t_hand_ms=1250, quiet=True)
    noisy = Script(follow={0: ["f"]}, delay_s=0.5, noise=b"garbage\r\n")
    capture = await run_match(config, [Script(), noisy])

    assert capture.stderr.endswith("WARNING: bad state format in response\nERROR: seat 2 ran out of time\n")


async def test_comment_lines_are_not_charged(tmp_path: Path) -> None:
    # Same timing with a comment: only the fold is charged, 1000 ms < 1250 ms.
    config = _config(tmp_path, 1, t_hand_ms=1250, quiet=True)
    chatty = Script(follow={0: ["f"]}, delay_s=0.5, noise=b"# thinking\r\n")
    capture = await run_match(config, [Script(), chatty])

    assert capture.result.exit_status == 0
    assert "WARNING" not in capture.stderr and "ERROR" not in capture.stderr


async def test_start_timeout_names_the_missing_seat(tmp_path: Path) -> None:
    # Seat 1 connects at once; 2 s is for it to be seated first on a loaded machine.
    config = _config(tmp_path, start_timeout_ms=2000, quiet=True)
    err = io.StringIO()

    async def dealer(task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED) -> None:
        result = await serve_match(config, stdout=io.StringIO(), stderr=err, task_status=task_status)
        assert result.exit_status == 1

    with trio.fail_after(60):  # only guards against a hang
        async with trio.open_nursery() as nursery:
            ports = await nursery.start(dealer)
            stream = await trio.open_tcp_stream("127.0.0.1", ports[0])
            await stream.send_all(VERSION)
    await stream.aclose()
    assert err.getvalue().endswith("ERROR: timed out waiting for seat 2 to connect\n")


async def test_invalid_version_string_does_not_take_the_seat(tmp_path: Path) -> None:
    # The reference aborted on "HELLO"; now that connection is dropped and the
    # seat waits on, here until the start timeout (2 s: time enough for the drop
    # to be reported on a loaded machine).
    capture = await run_match(_config(tmp_path, start_timeout_ms=2000), [Script(version=b"HELLO\r\n"), Script()])

    assert re.search(r"WARNING: dropped connection to seat 1 from 127\.0\.0\.1:\d+: invalid version string b'HELLO\\r\\n'\n", capture.stderr)
    assert capture.stderr.endswith("ERROR: timed out waiting for seat 1 to connect\n")
    assert capture.result.exit_status == 1


async def test_newer_version_is_reported_but_played(tmp_path: Path) -> None:
    scripts = [Script(version=b"VERSION:2.1.0\n", follow={0: CALLS}), Script(version=b"VERSION:2.0.7\n", follow={0: CALLS})]
    capture = await run_match(_config(tmp_path, 1, quiet=True), scripts)

    assert capture.stderr.count("ERROR: this server is currently using version 2.0.0\n") == 1
    assert capture.result.exit_status == 0


async def test_framing_long_lines_nul_bytes_and_non_utf8(tmp_path: Path) -> None:
    # Seat 2 acts first. Before any turn it sends a 5000-byte line (read as
    # 4095 + 906 bytes: two bad states), a non-UTF-8 line, then its raise with a
    # NUL after the action (C stops reading there) and a bare \n. Echoes are the
    # bytes read (escaped but for printable ASCII and the line's own ending), so
    # a line without its newline runs into the next output.
    upfront = b"x" * 5000 + b"\n" + b"\xff\xfeMATCHSTATE\r\n" + b"MATCHSTATE:1:0::|9d6c:r\0junk\n"
    plan = {0: [SILENT] + ["c"] * 7}
    capture = await run_match(_config(tmp_path, 1), [Script(follow=plan), Script(upfront=upfront, follow=plan)])

    err = capture.stderr
    bad = "WARNING: bad state format in response\n"
    assert re.search(rf"FROM 2 at \S+ x{{4095}}{bad}FROM 2 at \S+ x{{905}}\n{bad}", err)
    assert re.search(rf"FROM 2 at \S+ \\xff\\xfeMATCHSTATE\r\n{bad}", err)
    assert re.search(r"FROM 2 at \S+ MATCHSTATE:1:0::\|9d6c:rTO 1 at \S+ MATCHSTATE:0:0:r:3c4d\|\r\n", err)
    assert err.count("WARNING") == 3
    assert _log(tmp_path)[4].startswith("STATE:0:rc/cc/cc/cc:")


async def test_strict_mode_aborts_on_the_first_invalid_response(tmp_path: Path) -> None:
    config = _config(tmp_path, strict=True, quiet=True)
    capture = await run_match(config, [Script(follow={0: CALLS}), Script(follow={0: ["x"]})])

    assert capture.stderr.endswith(
        "WARNING: invalid action, changed to call\nERROR: strict mode: seat 2 sent an invalid response\n"
    )
    assert capture.result.exit_status == 1


async def test_unopenable_directory_is_an_error_before_listening(tmp_path: Path) -> None:
    config = _config(tmp_path / "missing")
    err = io.StringIO()
    result = await serve_match(config, stdout=io.StringIO(), stderr=err)

    assert err.getvalue() == f"ERROR: could not open lock file {tmp_path / 'missing' / 'm.lock'}: No such file or directory\n"
    assert result.exit_status == 1 and result.hands_played == 0


async def test_port_in_use_cannot_be_listened_on(tmp_path: Path) -> None:
    busy = trio.socket.socket()
    await busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    err = io.StringIO()
    with busy:
        result = await serve_match(_config(tmp_path, ports=(0, port)), stdout=io.StringIO(), stderr=err)

    assert err.getvalue() == f"ERROR: could not create listen socket for player 2 on port {port}: Address already in use\n"
    assert result.exit_status == 1
    assert list(tmp_path.iterdir()) == []  # no file opened (nor truncated), the lock released
