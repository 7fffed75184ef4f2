"""``arena serve`` as a process for the web tests: a port the system picks, an
admin (alice) and a user (bob), requests through urllib as a script would send
them, stopped with SIGTERM when the module is done."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from arena.serve.store import Store

class _Refuse(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


_NO_REDIRECTS = urllib.request.build_opener(_Refuse)
_API = re.compile(r"the API is at (http://127\.0\.0\.1:\d+)/api")
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


class Served:
    """``arena serve`` on a port the system picks, with an admin (alice) and a user (bob)."""

    def __init__(self, tmp: Path) -> None:
        self.data = data = tmp / "data"
        store = Store(data)
        self.tokens = {name: store.add_user(name, admin=name == "alice")[1] for name in ("alice", "bob")}
        store.close()
        (tmp / "serve.toml").write_text('[serve]\nmatch_ports = "23300-23319"\n')
        command = [sys.executable, "-m", "arena.cli", "serve", "--data", str(data), "--port", "0",
                   "--config", str(tmp / "serve.toml")]
        self.err = tmp / "serve.err"
        with open(self.err, "w") as err:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
        deadline = time.monotonic() + 60
        while (found := _API.search(self.err.read_text())) is None and time.monotonic() < deadline:
            assert self.process.poll() is None, self.err.read_text()
            time.sleep(0.1)
        assert found is not None, f"arena serve printed no address: {self.err.read_text()}"
        self.url = found[1]

    def request(
        self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None
    ) -> tuple[int, Message, bytes]:
        """One request, redirects not followed: the status, the headers and the body."""
        request = urllib.request.Request(self.url + path, data=body, method=method, headers=headers or {})
        try:
            with _NO_REDIRECTS.open(request, timeout=30) as reply:
                return reply.status, reply.headers, reply.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers, refused.read()

    def api(self, method: str, path: str, token: str, body: bytes | None = None) -> tuple[int, Any]:
        """An API request with ``token``: the status and the JSON answer."""
        status, _, answer = self.request(method, path, headers={"Authorization": f"Bearer {token}"}, body=body)
        return status, json.loads(answer)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    service = Served(tmp_path_factory.mktemp("serve"))
    yield service
    service.stop()
