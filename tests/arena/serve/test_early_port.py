"""A hosted match's port before its seating opens (issue 46): a connection from
the match's peer is told, in one ``#REFUSED:`` line, which port to use, and our
agent prints it as its error (status 3); the port is the same socket the
dealer then listens on, so the seating plays there once it opens. A queued
match's port says it waits in the queue; anyone but the match's peer is told
nothing."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from agent.cli import EXIT_CONNECTION
from tests.arena.serve.service_process import Service, add_user, agent

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 10}


def _early(port: int) -> subprocess.CompletedProcess[str]:
    """Our agent at ``port`` with no key (the port answers before any key matters)."""
    command = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "always-call"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_a_port_not_open_yet_says_which_port_to_use_then_plays_its_seating(tmp_path: Path) -> None:
    service = Service(tmp_path, max_matches=1).start()
    try:
        alice = add_user(service.data, "alice")
        first = service.request("POST", "/api/matches", alice, {**KUHN, "duplicate": True})[2]
        queued = service.request("POST", "/api/matches", alice, KUHN)[2]  # one match plays at once: this one waits
        one, two = first["ports"]
        assert service.next_port(alice, first["id"]) == one
        out_of_turn = _early(two)
        assert (out_of_turn.returncode, out_of_turn.stdout) == (EXIT_CONNECTION, "")
        assert out_of_turn.stderr == (
            f"arena agent: error: 127.0.0.1:{two} turned the connection away: port {two} is seating 2's port of match"
            f" {first['id']}, not open yet: seating 1 plays first, on port {one}: connect there; connect when"
            f" GET /api/matches/{first['id']} names it as next_port\n"
        )
        with socket.create_connection(("127.0.0.1", two), timeout=10, source_address=("127.0.0.2", 0)) as stranger:
            stranger.sendall(b"VERSION:2.0.0\r\n")  # from another address than the asker's: closed unanswered
            try:
                answer = stranger.recv(4096)
            except ConnectionResetError:  # closed with the version line unread
                answer = b""
            assert answer == b""
        (waiting,) = queued["ports"]
        in_queue = _early(waiting)
        assert in_queue.returncode == EXIT_CONNECTION
        assert in_queue.stderr == (
            f"arena agent: error: 127.0.0.1:{waiting} turned the connection away: port {waiting} is the port of match"
            f" {queued['id']}, not open yet: the match waits in the queue for a free place; connect when"
            f" GET /api/matches/{queued['id']} names it as next_port\n"
        )
        for port in (one, two, waiting):  # each seating plays on the port it answered on
            match_id = queued["id"] if port == waiting else first["id"]
            assert service.next_port(alice, match_id) == port
            played = agent("127.0.0.1", port)
            assert played.returncode == 0, played.stderr
        shown = [service.wait_status(alice, match["id"], ("finished", "aborted")) for match in (first, queued)]
    finally:
        service.stop()
    assert [(match["status"], match["result"]["hands"]) for match in shown] == [("finished", 20), ("finished", 10)]
