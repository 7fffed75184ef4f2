"""``arena serve`` as a process for the tests: a data directory under the
test's tmp_path, the API on a port the system picks (read from the line the
command prints), match ports from a range no other test here uses, and
stopped (SIGTERM, then kill) when the test is done. Requests go through
urllib, redirects not followed: the service is another process, as a user's
script would see it. stderr goes to a file, so a chatty service never blocks
on a full pipe."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.serve.store import Store

API = re.compile(r"the API is at (http://127\.0\.0\.1:\d+)/api")
#: The line after it: the web pages' address (the same server's root).
WEB = re.compile(r"\narena serve: the web pages \(lobby, tables, leaderboard\) are at (http://127\.0\.0\.1:\d+)/\n")
#: A tournament that plays in seconds.
TOURNAMENT = b"""game = "kuhn"
hands = 20
series = 1
seed = 3
workers = 1
agents = "in-process"

[bots]
caller = "always-call"
raiser = "always-raise"
"""


class _Refuse(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


_NO_REDIRECTS = urllib.request.build_opener(_Refuse)


def add_user(data: Path, name: str, *, admin: bool = False) -> str:
    """A new user's token (straight into the database, as ``arena users add`` does)."""
    store = Store(data)
    try:
        return store.add_user(name, admin=admin)[1]
    finally:
        store.close()


class Service:
    def __init__(self, tmp_path: Path, **settings: Any) -> None:
        self.tmp_path = tmp_path
        self.data = tmp_path / "data"
        low = random.Random(os.getpid() * 7919 + time.time_ns()).randrange(20000, 60000, 100)
        # No warm-up of the hold'em bots at start (make test compiled their kernels): each test's service
        # would spend seconds of CPU on it; a match against one still waits for its own (test_warming.py).
        self.settings = {"match_ports": f"{low}-{low + 99}", "t_response_ms": 5000, "start_timeout_s": 10.0,
                         "warm_bots": False}
        self.settings.update(settings)
        self.err = tmp_path / "serve.err"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.tokens: dict[str, str] = {}

    def start(self) -> Service:
        config = self.tmp_path / "serve.toml"
        config.write_text("[serve]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in self.settings.items()))
        command = [sys.executable, "-m", "arena", "serve", "--data", str(self.data), "--port", "0", "--config", str(config)]
        with open(self.err, "w") as err:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=self.tmp_path)
        deadline = time.monotonic() + 60
        while (found := API.search(self.err.read_text())) is None or WEB.search(self.err.read_text()) is None:
            if time.monotonic() > deadline or self.process.poll() is not None:
                break
            time.sleep(0.1)
        web = WEB.search(self.err.read_text())
        if found is None or web is None:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"arena serve printed no address; stderr: {self.err.read_text()}")
        assert web[1] == found[1], "the web pages are the API's server"
        self.url = found[1]
        return self

    def stop(self) -> tuple[int, str]:
        """SIGTERM; the exit status and stderr after the lines with the addresses."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        text = self.err.read_text()
        after = WEB.search(text)
        return self.process.returncode, text[after.end():] if after is not None else text

    def kill(self) -> None:
        """``kill -9``."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        *,
        raw: bytes | None = None,
        cookie: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        """Status, headers and the answer (JSON decoded when it is JSON, else bytes)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        if cookie is not None:
            request.add_header("Cookie", cookie)
        if data is not None and not request.has_header("Content-type"):
            request.add_header("Content-Type", "application/json")
        try:
            with _NO_REDIRECTS.open(request, timeout=30) as response:
                status, headers, content = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            status, headers, content = error.code, dict(error.headers), error.read()
        if headers.get("content-type", "").startswith("application/json"):
            return status, headers, json.loads(content)
        return status, headers, content

    def api(self, method: str, path: str, token: str, raw: bytes | None = None) -> tuple[int, Any]:
        """An API request with ``token``: the status and the JSON answer."""
        status, _, answer = self.request(method, path, token, raw=raw)
        return status, answer

    def wait_status(self, token: str, match_id: str, statuses: tuple[str, ...], timeout: float = 60) -> dict[str, Any]:
        """The match once its status is one of ``statuses`` (and, once it is
        over, its result is whole: no longer ``pending`` its estimators)."""
        deadline = time.monotonic() + timeout
        while True:
            status, _, document = self.request("GET", f"/api/matches/{match_id}", token)
            assert status == 200, document
            whole = not (document.get("result") or {}).get("pending")
            if (document["status"] in statuses and whole) or time.monotonic() > deadline:
                return dict(document)
            time.sleep(0.1)

    def next_port(self, token: str, match_id: str, timeout: float = 60) -> int:
        """The port the match's dealer waits on for the agent, once it does;
        its seat key is then :func:`seat_key` of the port (what :func:`agent` sends)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            document = self.request("GET", f"/api/matches/{match_id}", token)[2]
            if document.get("next_port") is not None:
                _SEAT_KEYS[int(document["next_port"])] = document["seat_key"]
                return int(document["next_port"])
            time.sleep(0.05)
        raise AssertionError(f"match {match_id} never waited for an agent")


#: Port -> the seat key ``GET /api/matches/ID`` last gave with it as ``next_port``.
_SEAT_KEYS: dict[int, str] = {}


def seat_key(port: int) -> str:
    """The key of the seat :meth:`Service.next_port` last named ``port`` for."""
    return _SEAT_KEYS[port]


def seat_env(port: int) -> dict[str, str]:
    """The environment for our agent to take the seat on ``port`` (its key in ``ARENA_SEAT_KEY``)."""
    return {**os.environ, "ARENA_SEAT_KEY": seat_key(port)}


def agent(host: str, port: int, game: str = "kuhn", strategy: str = "always-call") -> subprocess.CompletedProcess[str]:
    """Our ``arena agent`` in another process, through the port the API gave, with its seat key."""
    command = [sys.executable, "-m", "arena", "agent", game, host, str(port), "--strategy", strategy]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=seat_env(port))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for a module's web tests, with an admin (alice) and a user
    (bob) whose tokens are in ``tokens``, and the shipped answer and start times."""
    service = Service(tmp_path_factory.mktemp("serve"), t_response_ms=10000, start_timeout_s=60.0)
    service.tokens = {name: add_user(service.data, name, admin=name == "alice") for name in ("alice", "bob")}
    yield service.start()
    service.stop()
