"""Starting a match safely (issue 8): connections that do not send a version
line never take a seat, and a match name or port in use is refused before any
file is touched."""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import AsyncExitStack
from pathlib import Path

import trio

from acpc_fixtures import code_blocks
from dealer.seats import MAX_PENDING_PER_SEAT
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import load_game
from tests.dealer.dealer_clients import Script, actions_of, run_match, until_said

HULHE = load_game("hulhe")
LOG_5_7 = code_blocks("5.7")[1]  # reference transcript 5.7: four hands of seed 0
PLAN_5_7 = {int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in LOG_5_7 if line.startswith("STATE:")}
PLAYERS = [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)]
DROPPED = re.compile(r"WARNING: dropped connection to seat (\d) from 127\.0\.0\.1:\d+: (.*)\n")


def _config(log_dir: Path, **options: object) -> MatchConfig:
    return MatchConfig("lim2", HULHE, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), log_dir=log_dir, **options)  # type: ignore[arg-type]


async def test_idle_and_garbage_connections_do_not_take_the_seats(tmp_path: Path) -> None:
    # 200 idle connections, then one that sends garbage and one that hangs up,
    # all before the real agents: the match is played as if they were not there.
    async with AsyncExitStack() as intruders:

        async def intrude(ports: tuple[int, ...]) -> None:
            for number in range(200):
                intruders.push_async_callback((await trio.open_tcp_stream("127.0.0.1", ports[number % 2])).aclose)
            garbage = await trio.open_tcp_stream("127.0.0.1", ports[0])
            intruders.push_async_callback(garbage.aclose)
            await garbage.send_all(b"GET / HTTP/1.0\r\n\r\n")
            await (await trio.open_tcp_stream("127.0.0.1", ports[1])).aclose()

        capture = await run_match(_config(tmp_path, quiet=True, start_timeout_ms=20000), PLAYERS, before=intrude)

    assert capture.result.exit_status == 0
    assert (tmp_path / "lim2.log").read_text().splitlines() == LOG_5_7
    # Each seat keeps at most MAX_PENDING_PER_SEAT waiting; the oldest go first.
    drops = DROPPED.findall(capture.stderr)
    assert len(drops) == 10 and capture.stderr.count("WARNING: further dropped connections are not reported\n") == 1
    assert {reason for _, reason in drops} == {f"more than {MAX_PENDING_PER_SEAT} connections waiting to send a version"}
    assert "ERROR" not in capture.stderr


async def test_garbage_is_dropped_with_its_reason(tmp_path: Path) -> None:
    err = io.StringIO()

    async def intrude(ports: tuple[int, ...]) -> None:
        garbage = await trio.open_tcp_stream("127.0.0.1", ports[0])
        await garbage.send_all(b"GET / HTTP/1.0\r\n\r\n")
        await (await trio.open_tcp_stream("127.0.0.1", ports[1])).aclose()
        await until_said(err, DROPPED, 2)  # both dropped before the agents come
        await garbage.aclose()

    capture = await run_match(_config(tmp_path, quiet=True), PLAYERS, before=intrude, stderr=err)

    assert capture.result.exit_status == 0
    assert sorted(DROPPED.findall(capture.stderr)) == [
        ("1", "invalid version string b'GET / HTTP/1.0\\r\\n'"),
        ("2", "closed without a version line"),
    ]


async def test_connections_waiting_when_the_seat_is_taken_are_closed(tmp_path: Path) -> None:
    idle: list[trio.SocketStream] = []

    async def intrude(ports: tuple[int, ...]) -> None:
        idle.append(await trio.open_tcp_stream("127.0.0.1", ports[0]))
        await trio.sleep(0.1)  # accepted and waiting for its version when the agent comes

    capture = await run_match(_config(tmp_path, quiet=True), PLAYERS, before=intrude)

    assert DROPPED.findall(capture.stderr) == [("1", "the seat is taken")]
    with trio.fail_after(5):
        assert await idle[0].receive_some() == b""  # closed by the dealer
    await idle[0].aclose()
    assert capture.result.exit_status == 0


async def test_silent_connection_is_dropped_after_the_response_time(tmp_path: Path) -> None:
    err = io.StringIO()
    async with AsyncExitStack() as intruders:

        async def intrude(ports: tuple[int, ...]) -> None:
            intruders.push_async_callback((await trio.open_tcp_stream("127.0.0.1", ports[0])).aclose)
            await until_said(err, DROPPED)  # dropped before the agents come

        capture = await run_match(_config(tmp_path, quiet=True, t_response_ms=200), PLAYERS, before=intrude, stderr=err)

    assert DROPPED.findall(capture.stderr) == [("1", "no version line within 0.2 s")]
    assert capture.result.exit_status == 0


async def test_a_flood_ends_at_the_start_timeout(tmp_path: Path) -> None:
    async with AsyncExitStack() as intruders:

        async def intrude(ports: tuple[int, ...]) -> None:
            for number in range(200):
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", ports[number % 2])
                except OSError:  # refused: the dealer gave up while the flood went on (a loaded machine)
                    return
                intruders.push_async_callback(stream.aclose)

        start = trio.current_time()
        capture = await run_match(_config(tmp_path, quiet=True, start_timeout_ms=500), [], before=intrude)

    assert trio.current_time() - start >= 0.5  # not before the timeout
    assert capture.stderr.endswith("ERROR: timed out waiting for seat 1 to connect\n")
    assert capture.result.exit_status == 1


async def test_second_dealer_with_the_same_name_is_refused(tmp_path: Path) -> None:
    clean, shared = tmp_path / "clean", tmp_path / "shared"
    clean.mkdir()
    shared.mkdir()
    await run_match(_config(clean), PLAYERS)
    refused: list[tuple[MatchResult, str, str]] = []

    async def second_dealer(ports: tuple[int, ...]) -> None:
        out, err = io.StringIO(), io.StringIO()
        result = await serve_match(_config(shared, ports=ports), stdout=out, stderr=err)
        refused.append((result, out.getvalue(), err.getvalue()))

    capture = await run_match(_config(shared), PLAYERS, before=second_dealer)

    [(result, out, err)] = refused
    assert result.exit_status == 1 and out == ""
    assert err == f"ERROR: match lim2 is being played by another dealer (process {os.getpid()} holds {shared / 'lim2.lock'})\n"
    assert capture.result.exit_status == 0
    for suffix in (".log", ".hands.msgpack"):
        assert (shared / f"lim2{suffix}").read_bytes() == (clean / f"lim2{suffix}").read_bytes()
    events = [json.loads(line)["event"] for line in (shared / "lim2.events.jsonl").read_text().splitlines()]
    assert events == ["listening", "connected", "connected", "started", "finished"]
    assert sorted(path.name for path in shared.iterdir()) == ["lim2.events.jsonl", "lim2.hands.msgpack", "lim2.log"]


async def test_lock_left_by_a_killed_dealer_stops_nobody(tmp_path: Path) -> None:
    (tmp_path / "lim2.lock").write_text("12345\n")  # no process holds it
    capture = await run_match(_config(tmp_path, quiet=True), PLAYERS)

    assert capture.result.exit_status == 0
    assert not (tmp_path / "lim2.lock").exists()
