"""A seat is its owner's (issue 44): a second local user who scans the match
ports (every port of the range, each sent a version line, garbage and a
wrong key) neither takes nor aborts another user's seat, whatever ``allow``
says (``asker``: everyone on this host has the asker's address; ``any``: the
compose stack, where Docker's proxy gives everyone the gateway's); and no
other program binds a reserved port, before its seating or as the dealer
takes it over."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from poker.protocol import key_line
from tests.arena.serve.service_process import Service, add_user, agent

KUHN = {"game": "kuhn", "opponent": "always-call"}
VERSION = b"VERSION:2.0.0\r\n"
#: What the scanner sends to every port, one connection each.
PROBES = (VERSION, b"\x16\x03\x01 not a version\r\n", key_line("0" * 32) + VERSION)


def _ports(service: Service) -> range:
    low, high = (int(part) for part in str(service.settings["match_ports"]).split("-"))
    return range(low, high + 1)


def _scan(ports: range) -> dict[int, int]:
    """Connect to every port and send each probe (a connection each, closed
    once the probe is sent); how many connections each port accepted, where
    one did. (The range lies among the system's ephemeral ports, so a
    listener of another program, say another test's service, may answer too:
    the caller reads the match's ports.)"""
    accepted: dict[int, int] = {}
    for port in ports:
        for probe in PROBES:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as probing:
                    probing.sendall(probe)
                    accepted[port] = accepted.get(port, 0) + 1
            except OSError:  # refused: nothing listens there
                break
    return accepted


@pytest.mark.parametrize("allow", ["asker", "any"])
def test_a_port_scan_by_another_local_user_neither_takes_nor_aborts_the_seat(tmp_path: Path, allow: str) -> None:
    service = Service(tmp_path, allow=allow).start()
    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice, {**KUHN, "hands": 10, "duplicate": True})[2]
        for seating, port in enumerate(match["ports"]):
            assert service.next_port(alice, match["id"]) == port  # the seating waits for alice's agent
            # the waiting port listens, and so does each port of a seating still to come (it answers where to
            # connect and closes); each probe got in; a seating's port is closed once its seat is taken
            accepted = _scan(_ports(service))
            assert {port: accepted.get(port, 0) for port in match["ports"]} == {
                other: len(PROBES) if index >= seating else 0 for index, other in enumerate(match["ports"])
            }
            played = agent("127.0.0.1", port)
            assert played.returncode == 0, played.stderr
        shown = service.wait_status(alice, match["id"], ("finished", "aborted"))
    finally:
        service.stop()
    assert shown["status"] == "finished" and shown["error"] is None and shown["result"]["hands"] == 20
    for seating in (0, 1):  # the dealer saw every probe of its own seating's scan, and dropped it
        err = (service.data / "matches" / match["id"] / f"seating{seating}.err").read_text()
        dropped = [line.split(": ")[-1] for line in err.splitlines() if line.startswith("WARNING: dropped")]
        assert dropped == [
            "no seat key (this seat needs its #KEY line before the version line)",
            "no seat key (this seat needs its #KEY line before the version line)",
            "a wrong seat key (this seat needs its #KEY line before the version line)",
        ]


def test_no_one_binds_a_reserved_port_until_its_dealer_listens_on_it(tmp_path: Path) -> None:
    # A squatter asks for address reuse and tries, without pause, to bind
    # seating 2's port (a program posing as the dealer, to read an agent's
    # policy), from the match's creation until seating 2's dealer listens on
    # it: while the port is reserved, and as the dealer takes it over. (Once
    # the seat is taken the dealer closes its listener, as the reference's
    # does: nobody connects there any more.)
    service = Service(tmp_path).start()
    stop = threading.Event()
    squatted: list[int] = []

    def squat(port: int) -> None:
        while not stop.is_set():
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
                squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    squatter.bind(("127.0.0.1", port))
                    squatter.listen(1)
                except OSError:
                    continue
                squatted.append(port)
                return

    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice, {**KUHN, "hands": 10, "duplicate": True})[2]
        squatter = threading.Thread(target=squat, args=(match["ports"][1],), daemon=True)
        squatter.start()
        for port in match["ports"]:
            assert service.next_port(alice, match["id"]) == port
            if port == match["ports"][1]:
                stop.set()
                squatter.join()
            played = agent("127.0.0.1", port)
            assert played.returncode == 0, played.stderr
        shown = service.wait_status(alice, match["id"], ("finished", "aborted"))
    finally:
        stop.set()
        service.stop()
    assert squatted == []
    assert shown["status"] == "finished" and shown["result"]["hands"] == 20
