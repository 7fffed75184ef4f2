"""Fair play on the hosted arena (issue 44): a limit that holds when a user's
requests race, a reserved port nobody else can bind, cards nobody sees before
the match is over, and requests that are the user's own."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.arena.serve.service_process import Service, add_user

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 5}


def test_parallel_requests_stay_under_the_limit_per_user(tmp_path: Path) -> None:
    """The check and the insertion are one step: 20 requests at once, a limit of 4, make 4."""
    service = Service(tmp_path, max_matches_per_user=4, start_timeout_s=30.0).start()
    try:
        alice = add_user(service.data, "alice")
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(lambda _: service.request("POST", "/api/matches", alice, KUHN)[0], range(20)))
        assert sorted(statuses) == [201] * 4 + [429] * 16
        assert len(service.request("GET", "/api/matches", alice)[2]["matches"]) == 4
    finally:
        service.stop()


def test_a_reserved_port_cannot_be_squatted(tmp_path: Path) -> None:
    """A duplicate match's second port, reserved while its first seating waits,
    is bound so that another local program (even one asking SO_REUSEADDR)
    cannot take it and pose as the dealer."""
    service = Service(tmp_path, start_timeout_s=30.0).start()
    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice, {**KUHN, "duplicate": True})[2]
        service.next_port(alice, match["id"])
        squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError):
                squatter.bind(("127.0.0.1", match["ports"][1]))
        finally:
            squatter.close()
    finally:
        service.stop()
