"""The hosted arena's guards as a client meets them, whatever module holds
them: only the ``Bearer`` scheme carries a token, a web session ends after
``session_lifetime_s``, the per-user limit counts only matches not over, and a
full queue answers 503."""

from __future__ import annotations

import time
from pathlib import Path

from tests.arena.serve.service_process import Service, add_user, agent

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 5}
UNAUTHORIZED = {"error": "missing or wrong token: send Authorization: Bearer TOKEN (arena users add NAME prints one)"}
#: A session this short ends within the test; 3 s leaves a loaded machine time for the two requests before.
LIFETIME_S = 3.0


def test_only_bearer_tokens_and_unexpired_sessions_get_in(tmp_path: Path) -> None:
    service = Service(tmp_path, session_lifetime_s=LIFETIME_S).start()
    try:
        token = add_user(service.data, "alice")
        me = {"name": "alice", "admin": False}
        assert service.request("GET", "/api/me", headers={"Authorization": f"Bearer {token}"})[2] == me
        assert service.request("GET", "/api/me", headers={"Authorization": f"bearer {token}"})[2] == me  # schemes ignore case
        for header in (f"Basic {token}", f"Token {token}", token, f"Bearer{token}"):
            status, headers, document = service.request("GET", "/api/me", headers={"Authorization": header})
            assert (status, document) == (401, UNAUTHORIZED), header
            assert headers["www-authenticate"] == "Bearer"

        status, headers, _ = service.request("POST", "/api/login", body={"token": token})
        logged_in = time.monotonic()
        assert status == 200 and f"max-age={int(LIFETIME_S)}" in headers["set-cookie"].lower()
        session = headers["set-cookie"].split(";")[0]
        assert service.request("GET", "/api/me", cookie=session)[2] == me
        time.sleep(max(0.0, logged_in + LIFETIME_S + 0.5 - time.monotonic()))
        status, _, document = service.request("GET", "/api/me", cookie=session)
        assert (status, document) == (401, UNAUTHORIZED)
        assert service.request("GET", "/api/me", token)[0] == 200  # the token itself does not expire
    finally:
        service.stop()


def test_the_limit_per_user_counts_matches_not_over_and_a_full_queue_answers_503(tmp_path: Path) -> None:
    # One match plays at a time and one waits; each user may have one not over.
    service = Service(tmp_path, max_matches=1, max_queued=1, max_matches_per_user=1).start()
    try:
        alice, bob, carol = (add_user(service.data, name) for name in ("alice", "bob", "carol"))
        status, _, first = service.request("POST", "/api/matches", alice, KUHN)
        assert status == 201
        status, _, document = service.request("POST", "/api/matches", alice, KUHN)
        assert (status, document) == (429, {"error": "you have 1 matches not over (the limit); request more when one ends"})
        status, _, queued = service.request("POST", "/api/matches", bob, KUHN)
        assert status == 201 and service.request("GET", f"/api/matches/{queued['id']}", bob)[2]["queued"] is True
        status, headers, document = service.request("POST", "/api/matches", carol, KUHN)  # the queue holds bob's
        assert (status, document) == (503, {"error": "the service is full: try again later"})
        assert headers["retry-after"] == "60"

        assert agent("127.0.0.1", service.next_port(alice, first["id"])).returncode == 0
        assert service.wait_status(alice, first["id"], ("finished", "aborted"))["status"] == "finished"
        service.next_port(bob, queued["id"])  # bob's match left the queue and started
        # Alice's match is over: it no longer counts, and the queue has room again.
        status, _, again = service.request("POST", "/api/matches", alice, KUHN)
        assert status == 201 and service.request("GET", f"/api/matches/{again['id']}", alice)[2]["queued"] is True
        assert service.request("POST", "/api/matches", carol, KUHN)[0] == 503
    finally:
        service.stop()
