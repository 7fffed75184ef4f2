"""Scripted agents for the dealer tests, and a helper that runs one match with them.

A :class:`Script` says what one seat sends: raw bytes right after its VERSION
line (replayed transcripts, garbage), and/or actions to answer its own turns
with, per hand (``follow``). A turn's action is picked by how many actions the
hand has had so far, so a script can be written straight from a log's betting
string. Special tokens: ``SILENT`` (never answer), ``CLOSE`` (disconnect),
``DRIP`` (send ``drip`` every ``drip_every_s`` instead of answering, until the
dealer hangs up).
"""

from __future__ import annotations

import io
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import trio

from agent.client import LineReader
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game
from poker.protocol import parse_match_state

SILENT = "SILENT"
CLOSE = "CLOSE"
DRIP = "DRIP"
VERSION = b"VERSION:2.0.0\r\n"
_TIMESTAMP = re.compile(r"^(TO|FROM|STARTED|FINISHED)( \d+)? at \d+\.\d{6}", re.M)


@dataclass
class Script:
    upfront: bytes = b""
    follow: Mapping[int, Sequence[str]] = field(default_factory=dict)
    version: bytes = VERSION
    delay_s: float = 0.0  # before each answer (and before the noise)
    noise: bytes = b""  # sent before each answer
    default: str | None = None  # the answer in hands without a plan
    drip: bytes = b"#\r\n"  # what DRIP sends
    drip_every_s: float = 1.0


@dataclass
class Capture:
    result: MatchResult
    stdout: str
    stderr: str
    received: list[list[str]]  # per seat: every line the dealer sent, without CRLF


def actions_of(betting: str) -> list[str]:
    """Action tokens of a betting string: ``r250r750c/c`` -> ``['r250', 'r750', 'c', 'c']``."""
    return re.findall(r"[fcr]\d*", betting)


def untimed(stderr: str) -> str:
    """stderr with the ``at <sec>.<usec>`` stamps removed."""
    return _TIMESTAMP.sub(lambda m: m.group(1) + (m.group(2) or ""), stderr)


async def scripted_agent(port: int, game: Game, script: Script, received: list[str]) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(script.version + script.upfront)
        reader = LineReader(stream)
        while True:
            try:
                line = await reader.receive_line()
            except trio.BrokenResourceError:
                return
            if line is None:
                return
            text = line.decode("ascii")
            received.append(text)
            view, _ = parse_match_state(text, game)
            plan = script.follow.get(view.hand_id)
            if not view.is_my_turn():
                continue
            if plan is not None:
                token = plan[sum(len(r) for r in view.state.actions)]
            elif script.default is not None:
                token = script.default
            else:
                continue
            if token == SILENT:
                continue
            if token == CLOSE:
                return
            if token == DRIP:
                try:
                    while True:
                        with trio.move_on_after(script.drip_every_s):
                            if await reader.receive_line() is None:
                                return  # the dealer hung up: leave now, so a test can time it
                        await stream.send_all(script.drip)
                except trio.BrokenResourceError:
                    return
            try:
                if script.noise:
                    await trio.sleep(script.delay_s)
                    await stream.send_all(script.noise)
                await trio.sleep(script.delay_s)
                await stream.send_all(f"{text}:{token}\r\n".encode("ascii"))
            except trio.BrokenResourceError:
                return  # the dealer gave up on us


async def run_match(
    config: MatchConfig,
    scripts: Sequence[Script],
    *,
    timeout_s: float = 60.0,
    before: Callable[[tuple[int, ...]], Awaitable[object]] | None = None,
    stderr: io.StringIO | None = None,
) -> Capture:
    """Serve ``config`` with one scripted agent per seat; returns what happened.
    ``before(ports)`` runs once the dealer listens, before the agents connect;
    it can wait for the dealer to have said something with :func:`until_said`
    on ``stderr`` (the dealer's stderr, which the capture then holds). The
    timeout only guards against a hang: CI runs on two loaded cores."""
    out, err = io.StringIO(), io.StringIO() if stderr is None else stderr
    received: list[list[str]] = [[] for _ in scripts]
    results: list[MatchResult] = []

    async def dealer(task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED) -> None:
        results.append(await serve_match(config, stdout=out, stderr=err, task_status=task_status))

    with trio.fail_after(timeout_s):
        async with trio.open_nursery() as nursery:
            ports = await nursery.start(dealer)
            if before is not None:
                await before(ports)
            for port, script, lines in zip(ports, scripts, received):
                nursery.start_soon(scripted_agent, port, config.game, script, lines)
    return Capture(results[0], out.getvalue(), err.getvalue(), received)


async def until_said(stderr: io.StringIO, pattern: re.Pattern[str], count: int = 1) -> None:
    """Wait until the dealer has written ``count`` lines matching ``pattern`` on
    ``stderr``: a condition, where a sleep would guess how long the dealer
    takes, and lose on a loaded machine (trio may then run the sleeper and
    the dealer's pending work in either order)."""
    while len(pattern.findall(stderr.getvalue())) < count:
        await trio.sleep(0.01)
