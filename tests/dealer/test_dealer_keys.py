"""A seat is its owner's (issue 44): a seat with a key goes only to a
connection whose first line is that key, whoever shares its address; a port
the caller reserved is listened on as it is, never closed and bound again."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

import pytest
import trio

from acpc_fixtures import code_blocks
from poker.protocol import key_line
from dealer.server import MatchConfig
from poker.gamedef import load_game
from tests.dealer.dealer_clients import VERSION, Script, actions_of, run_match, until_said

HULHE = load_game("hulhe")
LOG_5_7 = code_blocks("5.7")[1]  # reference transcript 5.7: four hands of seed 0
PLAN_5_7 = {int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in LOG_5_7 if line.startswith("STATE:")}
DROPPED = re.compile(r"WARNING: dropped connection to seat (\d) from 127\.0\.0\.1:\d+: (.*)\n")
KEYS = ("a1" * 16, "b2" * 16)
NEEDS_KEY = " (this seat needs its #KEY line before the version line)"


def _config(log_dir: Path, **options: object) -> MatchConfig:
    return MatchConfig("lim2", HULHE, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), log_dir=log_dir,
                       quiet=True, start_timeout_ms=20000, **options)  # type: ignore[arg-type]


async def test_a_scanner_on_the_same_address_neither_takes_nor_aborts_a_keyed_seat(tmp_path: Path) -> None:
    # The scanner comes from 127.0.0.1 as the agents do: only the key tells them apart.
    err = io.StringIO()
    tries = (
        VERSION,  # a plain agent: no key
        b"\x16\x03\x01garbage\r\n" + VERSION,
        key_line("c3" * 16) + VERSION,  # a wrong key
        key_line(KEYS[0])[:-3] + b"\r\n" + VERSION,  # the key less its last character
    )

    async def scan(ports: tuple[int, ...]) -> None:
        for index, port in enumerate(ports):
            for number, sent in enumerate((*tries, key_line(KEYS[1 - index]) + VERSION)):  # the other seat's key too
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                await stream.send_all(sent)
                await until_said(err, DROPPED, index * (len(tries) + 1) + number + 1)
                await stream.aclose()

    scripts = [Script(follow=PLAN_5_7, version=key_line(key) + VERSION) for key in KEYS]
    capture = await run_match(_config(tmp_path, keys=KEYS), scripts, before=scan, stderr=err)

    assert capture.result.exit_status == 0
    assert (tmp_path / "lim2.log").read_text().splitlines() == LOG_5_7
    reasons = [reason for _, reason in DROPPED.findall(capture.stderr)]
    assert reasons[:5] == [
        "no seat key" + NEEDS_KEY, "no seat key" + NEEDS_KEY, "a wrong seat key" + NEEDS_KEY,
        "a wrong seat key" + NEEDS_KEY, "a wrong seat key" + NEEDS_KEY,
    ]
    assert [seat for seat, _ in DROPPED.findall(capture.stderr)] == ["1"] * 5 + ["2"] * 5
    assert all(key[:8] not in capture.stderr + (tmp_path / "lim2.events.jsonl").read_text() for key in KEYS)


async def test_a_key_line_to_a_seat_without_a_key_is_skipped(tmp_path: Path) -> None:
    scripts = [Script(follow=PLAN_5_7, version=key_line(KEYS[0]) + VERSION), Script(follow=PLAN_5_7)]
    capture = await run_match(_config(tmp_path), scripts)

    assert capture.result.exit_status == 0
    assert (tmp_path / "lim2.log").read_text().splitlines() == LOG_5_7
    assert "WARNING" not in capture.stderr


def _reserve() -> socket.socket:
    """A port bound as the hosted arena reserves one: no SO_REUSEADDR, not listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def _squat(port: int) -> None:
    """Bind ``port`` as a squatter would, asking for address reuse; raises OSError when it cannot."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)


async def test_a_reserved_socket_is_listened_on_as_it_is(tmp_path: Path) -> None:
    reserved = _reserve()
    port = reserved.getsockname()[1]
    seen: list[tuple[int, ...]] = []

    async def squat(ports: tuple[int, ...]) -> None:
        seen.append(ports)
        with pytest.raises(OSError):  # the dealer listens on the very socket: the port was never free
            _squat(port)

    scripts = [Script(follow=PLAN_5_7), Script(follow=PLAN_5_7)]
    capture = await run_match(_config(tmp_path, sockets=(reserved, None)), scripts, before=squat)

    assert capture.result.exit_status == 0
    assert seen[0][0] == port and seen[0][1] not in (0, port)
    assert reserved.fileno() == -1  # the dealer closed it once the seat was taken, as its own listeners
