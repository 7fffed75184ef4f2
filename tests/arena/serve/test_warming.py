"""Hosted bots made ready before their first match (issue 44 item 7, issue 46
item 1): on a fresh install (an empty kernel cache) the first match against a
bot that compiles kernels waits, saying why, instead of aborting while the bot
compiles inside the match's start timeout."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from arena.serve.warming import KERNEL_BOTS
from tests.arena.serve.service_process import Service, add_user, agent


def test_the_bots_that_compile_kernels_are_the_shipped_hold_em_ones() -> None:
    assert KERNEL_BOTS == ("hulhe-ir50", "hunl-modicum")


def test_a_bot_compiling_its_kernels_makes_the_first_match_wait_not_abort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty kernel cache: hulhe-ir50 compiles for seconds (hunl-modicum,
    for over a minute: past a match's start timeout, too slow for a test).
    The match waits, saying why, with no seating's clock running, while the
    service keeps answering (the compile runs in a process of its own, not in
    the service's event loop); then it plays."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))  # the service's and its warm-up's
    # The first hands load the kernels from the cache: a generous clock for them on a busy machine.
    service = Service(tmp_path, start_timeout_s=2.0, warm_bots=False, t_response_ms=20000).start()
    try:
        token = add_user(service.data, "alice")
        status, _, match = service.request("POST", "/api/matches", token,
                                           {"game": "hulhe", "opponent": "hulhe-ir50", "hands": 10})
        assert status == 201, match
        shown = service.request("GET", f"/api/matches/{match['id']}", token)[2]
        assert shown["status"] == "waiting" and shown["next_port"] is None
        assert shown["starting"].startswith("the bot hulhe-ir50 is starting: it compiles its kernels once")
        with socket.create_connection(("127.0.0.1", match["ports"][0]), timeout=10) as early:  # its port says so too
            line = early.makefile("rb").readline().decode()
        assert line.startswith(f"#REFUSED: port {match['ports'][0]} is the port of match {match['id']}, not open yet:"
                               " the bot hulhe-ir50 is starting: it compiles its kernels once"), line
        while shown["starting"] is not None:
            asked = time.monotonic()
            shown = service.request("GET", f"/api/matches/{match['id']}", token)[2]
            assert time.monotonic() - asked < 2.0  # the service answers while the bot compiles
            time.sleep(0.2)  # within the API's rate limit
        port = service.next_port(token, match["id"], timeout=300)
        assert service.request("GET", f"/api/matches/{match['id']}", token)[2]["starting"] is None
        played = agent("127.0.0.1", port, game="hulhe")
        assert played.returncode == 0, played.stderr
        done = service.wait_status(token, match["id"], ("finished", "aborted"))
        assert (done["status"], done["error"], done["starting"]) == ("finished", None, None)
        assert done["result"]["hands"] == 10
    finally:
        service.stop()


def test_the_service_warms_its_bots_when_it_starts(tmp_path: Path) -> None:
    """``warm_bots`` (the default): each bot of :data:`KERNEL_BOTS` is built
    once in a process of its own as the service starts (cached kernels here:
    seconds), so a match against it starts at once."""
    service = Service(tmp_path, warm_bots=True).start()
    try:
        deadline = time.monotonic() + 120
        while "hunl-modicum is ready" not in service.err.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        said = service.err.read_text()
        for name in KERNEL_BOTS:
            assert f"arena serve: warming {name} (its kernels are compiled once after an install" in said
            assert f"arena serve: {name} is ready (" in said
    finally:
        service.stop()
