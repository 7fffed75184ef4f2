"""Load on the hosted arena: many matches at once through ``arena serve``.

Starts ``arena serve`` (its own process, a fresh data directory, loopback
only), asks the API for ``--matches`` matches of ``--hands`` hands of Kuhn
poker against the hosted ``kuhn-cfr``, waits until each one's dealer listens
(``next_port``), then plays them all at once with our client agents
(:func:`agent.client.play_stream`, a seeded ``random`` strategy, trio tasks in
this process). Each agent's connection is timed: an action's latency is from
the write of our action to the first byte of the dealer's next message (the
dealer, the hosted bot's reply and the round trip through the service).

Then it checks, through the API only, that every match finished with every
hand: ``lost`` counts the hands a finished or aborted match lacks, and every
log must hold ``--hands`` STATE lines and its SCORE line.

Anchor: the same matches (same game, bots, hands and seeds) played one after
the other by ``arena match`` (its front end, in this process, agents
in-process), in the same run. The last line::

    hosted hands/s (N matches at once, lost L, p99 action latency X ms): <ours> vs <arena match, one at a time> ratio <r>

Usage::

    .venv/bin/python benchmarks/host_load.py [--matches 100] [--hands 200]

Measured (issue 21; the 2-core machine shared with other work, defaults):
100 matches x 200 hands at once, 391 hands/s in all, lost 0, every log
complete, p99 action latency 239 ms (a hundred agents, a hundred dealers and
their bots on two busy cores); ``arena match`` one at a time 274 hands/s
(each match pays its own start and end): ratio 1.43.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import select
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before benchmarks/, whose dealer.py is not the package

from agent.client import play_stream  # noqa: E402
from arena.commands.match import main as arena_match  # noqa: E402
from arena.serve.config import ServeConfig  # noqa: E402
from arena.serve.store import Store  # noqa: E402
from poker.gamedef import load_game  # noqa: E402
from poker.protocol import VERSION_LINE, key_line  # noqa: E402
from strategies.base import make_strategy  # noqa: E402

GAME = "kuhn"
OPPONENT = "kuhn-cfr"
CLIENT = "random"


class TimedStream(trio.abc.Stream):
    """A TCP stream that records, for each write, the time to the next bytes read."""

    def __init__(self, stream: trio.SocketStream, latencies: list[float]) -> None:
        self.stream = stream
        self.latencies = latencies
        self.sent_at: float | None = None

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)
        self.sent_at = time.perf_counter()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.stream.receive_some(max_bytes)
        if self.sent_at is not None and data:
            self.latencies.append(time.perf_counter() - self.sent_at)
            self.sent_at = None
        return data

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


class Api:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=60) as response:
            content = response.read()
            return json.loads(content) if response.headers.get("content-type", "").startswith("application/json") else content


def start_service(directory: Path, matches: int) -> tuple[subprocess.Popen[str], str]:
    config = directory / "serve.toml"
    config.write_text(
        "[serve]\n"
        f'match_ports = "31000-{31000 + 2 * matches + 99}"\n'
        f"max_matches = {matches}\nmax_matches_per_user = {matches}\n"
        "requests_per_minute = 100000\nstart_timeout_s = 120.0\nt_response_ms = 60000\n"
    )
    command = [sys.executable, "-m", "arena", "serve", "--data", str(directory / "data"), "--port", "0", "--config", str(config)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    ready, _, _ = select.select([process.stderr], [], [], 120)
    line = process.stderr.readline() if ready else ""
    if "the API is at " not in line:
        process.kill()
        raise SystemExit(f"arena serve did not start: {line}{process.communicate()[1]}")
    return process, line.split("the API is at ")[1].split("/api")[0]


async def play_all(seats: list[tuple[int, str]], seeds: list[int], latencies: list[float]) -> None:
    """Play every match's seat (its port and seat key) at once."""
    game = load_game(GAME)

    async def one(port: int, key: str, seed: int) -> None:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            handshake = key_line(key) + f"{VERSION_LINE}\r\n".encode()
            await play_stream(TimedStream(stream, latencies), game, make_strategy(CLIENT, game, seed=seed), handshake=handshake)

    async with trio.open_nursery() as nursery:
        for (port, key), seed in zip(seats, seeds):
            nursery.start_soon(one, port, key, seed)


def hosted(directory: Path, matches: int, hands: int, seeds: list[int]) -> tuple[float, int, float]:
    """Aggregate hands/s, hands lost, p99 action latency (ms)."""
    service, url = start_service(directory, matches)
    try:
        store = Store(directory / "data")
        token = store.add_user("load")[1]
        store.close()
        api = Api(url, token)
        # From the first request on, as the anchor's time includes each match's set-up.
        started = time.perf_counter()
        ids = [api("POST", "/api/matches", {"game": GAME, "opponent": OPPONENT, "hands": hands, "seed": seed})["id"]
               for seed in seeds]
        seats = []
        for match_id in ids:
            while (shown := api("GET", f"/api/matches/{match_id}"))["next_port"] is None:
                time.sleep(0.05)
            seats.append((shown["next_port"], shown["seat_key"]))
        latencies: list[float] = []
        trio.run(play_all, seats, seeds, latencies)
        lost = 0
        for match_id in ids:
            while (shown := api("GET", f"/api/matches/{match_id}"))["status"] not in ("finished", "aborted"):
                time.sleep(0.05)
            log = api("GET", f"/api/matches/{match_id}/log").decode().splitlines()
            states = sum(line.startswith("STATE:") for line in log)
            complete = shown["status"] == "finished" and shown["result"]["hands"] == hands == states
            lost += hands - min(states, shown["result"]["hands"])
            if not complete or not any(line.startswith("SCORE:") for line in log):
                print(f"match {match_id}: {shown['status']} {shown['error']}, {states} of {hands} hands logged")
        seconds = time.perf_counter() - started
    finally:
        service.terminate()
        service.communicate(timeout=30)
    return matches * hands / seconds, lost, float(np.percentile(latencies, 99)) * 1000


def sequential(directory: Path, hands: int, seeds: list[int]) -> float:
    started = time.perf_counter()
    for index, seed in enumerate(seeds):
        argv = [GAME, "--hands", str(hands), "--seed", str(seed), "--in-process",
                "--run-dir", str(directory / f"match{index}"), CLIENT, OPPONENT]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = arena_match(argv)
        if status != 0:
            raise SystemExit(f"arena match {' '.join(argv)} ended with status {status}")
    return len(seeds) * hands / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--hands", type=int, default=200)
    args = parser.parse_args()
    if args.matches < 1 or not 2 <= args.hands <= ServeConfig.max_hands:
        parser.error(f"--matches must be at least 1 and --hands in 2..{ServeConfig.max_hands} (a hosted match's bounds)")
    seeds = [1000 + i for i in range(args.matches)]
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        ours, lost, p99 = hosted(directory, args.matches, args.hands, seeds)
        print(f"hosted: {args.matches} matches x {args.hands} hands at once: {ours:.0f} hands/s, lost {lost}, p99 action latency {p99:.1f} ms")
        anchor = sequential(directory, args.hands, seeds)
        print(f"arena match, one at a time: {anchor:.0f} hands/s")
    print(
        f"hosted hands/s ({args.matches} matches at once, lost {lost}, p99 action latency {p99:.1f} ms):"
        f" {ours:.0f} vs {anchor:.0f} ratio {ours / anchor:.2f}"
    )


if __name__ == "__main__":
    main()
