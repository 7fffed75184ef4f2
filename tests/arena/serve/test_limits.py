"""Limits of the hosted arena: matches per user, the fair queue when the
service is full, requests per minute (429 with Retry-After), and ``arena
users`` (the token printed once, revoke, rotate)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.serve.httpkit import RateLimiter
from tests.arena.serve.service_process import Service, add_user, agent

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 5}


def test_the_fair_queue_and_the_limit_per_user(tmp_path: Path) -> None:
    service = Service(tmp_path, max_matches=2, max_matches_per_user=3).start()
    try:
        alice, bob = add_user(service.data, "alice"), add_user(service.data, "bob")
        first, _, third = (service.request("POST", "/api/matches", alice, KUHN)[2] for _ in range(3))
        status, headers, document = service.request("POST", "/api/matches", alice, KUHN)
        assert status == 429 and headers["retry-after"] == "10"
        assert document == {"error": "you have 3 matches not over (the limit); request more when one ends"}
        bobs = service.request("POST", "/api/matches", bob, KUHN)[2]
        assert service.request("GET", f"/api/matches/{third['id']}", alice)[2]["queued"] is True
        assert service.request("GET", f"/api/matches/{bobs['id']}", bob)[2]["queued"] is True
        assert service.request("GET", f"/api/matches/{bobs['id']}", bob)[2]["status"] == "waiting"
        assert agent("127.0.0.1", service.next_port(alice, first["id"])).returncode == 0
        service.wait_status(alice, first["id"], ("finished",))
        # Bob asked after Alice's third match but plays none: his starts first.
        assert service.request("GET", f"/api/matches/{bobs['id']}", bob)[2]["queued"] is False
        assert service.request("GET", f"/api/matches/{third['id']}", alice)[2]["queued"] is True
        assert agent("127.0.0.1", service.next_port(bob, bobs["id"])).returncode == 0
        assert service.wait_status(bob, bobs["id"], ("finished",))["result"]["hands"] == 5
    finally:
        service.stop()


def test_requests_per_minute_and_log_bytes(tmp_path: Path) -> None:
    service = Service(tmp_path, requests_per_minute=5, max_log_bytes_per_user=100).start()
    try:
        alice, bob = add_user(service.data, "alice"), add_user(service.data, "bob")
        assert [service.request("GET", "/api/me", alice)[0] for _ in range(5)] == [200] * 5
        status, headers, document = service.request("GET", "/api/me", alice)
        assert status == 429 and 1 <= int(headers["retry-after"]) <= 60
        assert document == {"error": f"too many requests: retry in {headers['retry-after']} s"}
        assert service.request("GET", "/api/me", bob)[0] == 200  # counted per user
        first = service.request("POST", "/api/matches", bob, KUHN)[2]
        service.next_port(bob, first["id"])  # its dealer has written the log's header
        status, _, document = service.request("POST", "/api/matches", bob, KUHN)
        assert status == 403 and document["error"].startswith("your matches' logs hold ")
        assert document["error"].endswith(" bytes, the limit per user")
    finally:
        service.stop()


def test_the_rate_limiter_window() -> None:
    now = [100.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    assert [limiter.retry_after("a") for _ in range(3)] == [0, 0, 0]
    assert limiter.retry_after("a") == 60 and limiter.retry_after("b") == 0
    now[0] = 159.5
    assert limiter.retry_after("a") == 1
    now[0] = 160.0
    assert [limiter.retry_after("a") for _ in range(4)] == [0, 0, 0, 60]


def _users(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena", "users", *args, "--data", str(data)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_users_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    added = _users(data, "add", "carol", "--admin")
    assert added.returncode == 0 and added.stdout.startswith("user carol (admin) added;")
    token = added.stdout.splitlines()[-1].split()[-1]
    assert len(token) == 43  # 32 bytes, URL-safe
    assert token not in (data / "arena.db").read_bytes().decode("latin-1")  # only its hash is kept
    again = _users(data, "add", "carol")
    assert (again.returncode, again.stderr) == (
        2, "arena users: error: user 'carol' exists (arena users rotate carol gives it a new token)\n"
    )
    assert _users(data, "add", "bad name").returncode == 2
    assert _users(data, "revoke", "nobody").stderr == "arena users: error: no user 'nobody'\n"
    service = Service(tmp_path).start()
    try:
        assert service.request("GET", "/api/me", token)[2] == {"name": "carol", "admin": True}
        session = service.request("POST", "/api/login", body={"token": token})[1]["set-cookie"].split(";")[0]
        assert service.request("GET", "/api/me", cookie=session)[0] == 200
        assert _users(data, "revoke", "carol").returncode == 0
        assert service.request("GET", "/api/me", token)[0] == 401
        assert service.request("GET", "/api/me", cookie=session)[0] == 401  # its sessions end too
        rotated = _users(data, "rotate", "carol").stdout.split()[-1]
        assert service.request("GET", "/api/me", rotated)[0] == 200 and service.request("GET", "/api/me", token)[0] == 401
    finally:
        service.stop()
    listed = _users(data, "list")
    assert listed.returncode == 0 and listed.stdout.startswith("carol\tcreated ") and listed.stdout.endswith(" admin\n")
