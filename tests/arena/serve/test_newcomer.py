"""The hosted arena as a newcomer meets it: one status word for a match in
the list and in its detail, and a failed match that says what failed without
a path of the server."""

from __future__ import annotations

import socket
import time

from arena.serve.hosting import failure_text
from poker.protocol import key_line
from tests.arena.serve.service_process import Service, add_user, seat_key


def test_the_list_and_the_detail_say_the_same_status(service: Service) -> None:
    """An agent that took its seat and is thinking: the match is ``running``
    in ``GET /api/matches`` as in ``GET /api/matches/ID`` (the list once said
    ``waiting``); once it is over, the detail says ``queued`` false still."""
    token = add_user(service.data, "alice")
    status, answer = service.api("POST", "/api/matches", token, b'{"game": "kuhn", "opponent": "always-call", "hands": 5}')
    assert status == 201, answer
    port = service.next_port(token, answer["id"])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as agent:
        agent.sendall(key_line(seat_key(port)) + b"VERSION:2.0.0\r\n")  # seated, and never answers
        shown = service.wait_status(token, answer["id"], ("running",), timeout=10)
        listed = next(m for m in service.api("GET", "/api/matches", token)[1]["matches"] if m["id"] == answer["id"])
        assert (shown["status"], listed["status"]) == ("running", "running")
    over = service.wait_status(token, answer["id"], ("aborted",), timeout=30)
    listed = next(m for m in service.api("GET", "/api/matches", token)[1]["matches"] if m["id"] == answer["id"])
    assert (over["status"], listed["status"], over["queued"]) == ("aborted", "aborted", False)


def test_a_failed_match_says_what_failed_without_the_servers_paths() -> None:
    full = OSError(28, "No space left on device", "/srv/arena/data/matches/0123/seating0.log")
    assert failure_text(full) == "the match failed: No space left on device"
    assert failure_text(ValueError("no strategy file /srv/arena/strategies/x.npz (run arena warmup)")) == (
        "the match failed: no strategy file … (run arena warmup)"
    )
    assert failure_text(RuntimeError("the bot's version 1.0/2.0 differs")) == "the match failed: the bot's version 1.0/2.0 differs"
    started = time.monotonic()
    assert failure_text(ValueError("/" * 100_000 + "a")) == "the match failed: …"  # one pass, however long
    assert time.monotonic() - started < 1
