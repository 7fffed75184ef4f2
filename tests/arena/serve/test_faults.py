"""Faults around hosted matches: a user agent that dies mid-match (another
match goes on unharmed), one that never connects, a connection from an
address that is not allowed, 200 idle sockets on a match port, ``kill -9``
of the service mid-match followed by a restart, and a data directory that
cannot be used."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import trio

from agent.client import play
from poker.gamedef import load_game
from strategies.base import make_strategy
from tests.arena.serve.service_process import Service, add_user, agent, seat_env, seat_key

KUHN = {"game": "kuhn", "opponent": "always-call"}


class _Killed(Exception):
    pass


def _states(service: Service, match_id: str, seating: int = 0) -> list[str]:
    log = service.data / "matches" / match_id / f"seating{seating}.log"
    return [line for line in log.read_text().splitlines() if line.startswith("STATE:")] if log.exists() else []


async def test_an_agent_killed_mid_match_aborts_only_its_match(service: Service) -> None:
    token = add_user(service.data, "alice")
    doomed = service.request("POST", "/api/matches", token, {**KUHN, "hands": 50, "seed": 3})[2]
    healthy = service.request("POST", "/api/matches", token, {**KUHN, "hands": 30, "seed": 4})[2]
    assert service.next_port(token, doomed["id"]) == doomed["ports"][0]
    assert service.next_port(token, healthy["id"]) == healthy["ports"][0]
    game = load_game("kuhn")
    strategy = make_strategy("always-call", game, seed=1)
    actions = 0

    def decide_then_die(view: Any) -> Any:
        nonlocal actions
        actions += 1
        if actions > 12:
            raise _Killed
        return strategy.act(view)

    async def doomed_agent() -> None:
        try:
            await play("127.0.0.1", doomed["ports"][0], game, strategy, decide=_as_async(decide_then_die),
                       key=seat_key(doomed["ports"][0]))
        except _Killed:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(doomed_agent)
        healthy_agent = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(healthy["ports"][0]), "--strategy", "random"]
        nursery.start_soon(partial(trio.run_process, healthy_agent, env=seat_env(healthy["ports"][0])))
    shown = await trio.to_thread.run_sync(service.wait_status, token, doomed["id"], ("finished", "aborted"))
    assert shown["status"] == "aborted" and "seat 1" in shown["error"]
    finished = _states(service, doomed["id"])
    assert 1 <= len(finished) < 50 and shown["result"]["hands"] == len(finished)
    log = service.request("GET", f"/api/matches/{doomed['id']}/log", token)[2].decode()
    assert [line for line in log.splitlines() if line.startswith("STATE:")] == finished
    other = await trio.to_thread.run_sync(service.wait_status, token, healthy["id"], ("finished", "aborted"))
    assert other["status"] == "finished" and other["result"]["hands"] == 30


def _as_async(function: Any) -> Any:
    async def decide(view: Any) -> Any:
        return function(view)

    return decide


def test_a_stranger_is_refused_and_an_absent_agent_times_out(tmp_path: Path) -> None:
    service = Service(tmp_path, allow="127.0.0.2", start_timeout_s=1.5).start()
    try:
        token = add_user(service.data, "alice")
        answer = service.request("POST", "/api/matches", token, {**KUHN, "hands": 5})[2]
        assert service.next_port(token, answer["id"]) == answer["ports"][0]
        with socket.create_connection(("127.0.0.1", answer["ports"][0]), timeout=5) as stranger:
            stranger.sendall(b"VERSION:2.0.0\r\n")
            try:
                assert stranger.recv(100) == b""  # dropped: 127.0.0.1 is not the asker, and has no seat key
            except ConnectionResetError:
                pass
        shown = service.wait_status(token, answer["id"], ("finished", "aborted"), timeout=30)
        assert shown["status"] == "aborted" and shown["error"] == "timed out waiting for seat 1 to connect"
        # This machine's address is let in besides the asker's only for the seat route's relay,
        # which sends the key: a local program without it is dropped all the same.
        err = (service.data / "matches" / answer["id"] / "seating0.err").read_text()
        assert [line.split(": ")[-1] for line in err.splitlines() if line.startswith("WARNING: dropped")] == [
            "no seat key (this seat needs its #KEY line before the version line)"
        ]
        assert shown["result"]["hands"] == 0
        assert service.request("GET", "/api/me", token)[0] == 200
    finally:
        service.stop()


def test_idle_sockets_and_garbage_do_not_keep_the_agent_out(service: Service) -> None:
    token = add_user(service.data, "alice")
    answer = service.request("POST", "/api/matches", token, {**KUHN, "hands": 20, "duplicate": True})[2]
    port = service.next_port(token, answer["id"])
    assert port == answer["ports"][0]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(200)]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as garbage:
            garbage.sendall(b"\x00\xffnot a version\r\n")
            played = agent("127.0.0.1", port)
        assert played.returncode == 0, played.stderr
        assert service.next_port(token, answer["id"]) == answer["ports"][1]
        assert agent("127.0.0.1", answer["ports"][1]).returncode == 0
    finally:
        for connection in idle:
            connection.close()
    shown = service.wait_status(token, answer["id"], ("finished", "aborted"))
    assert shown["status"] == "finished" and shown["result"]["hands"] == 40


def test_kill_9_keeps_finished_matches_and_hands(tmp_path: Path) -> None:
    service = Service(tmp_path).start()
    token = add_user(service.data, "alice")
    done = service.request("POST", "/api/matches", token, {**KUHN, "hands": 5, "seed": 1})[2]
    assert agent("127.0.0.1", service.next_port(token, done["id"])).returncode == 0
    assert service.wait_status(token, done["id"], ("finished",))["status"] == "finished"
    long = service.request("POST", "/api/matches", token, {**KUHN, "hands": 10000, "seed": 2})[2]
    port = service.next_port(token, long["id"])
    command = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "random"]
    player = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=seat_env(port))
    try:
        deadline = time.monotonic() + 60
        while len(_states(service, long["id"])) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        service.kill()
        player.wait(timeout=30)  # its connection ends with the service
    finally:
        player.kill()
        player.communicate()
    finished = _states(service, long["id"])
    assert 30 <= len(finished) < 10000

    again = Service(tmp_path).start()
    try:
        shown = again.wait_status(token, long["id"], ("aborted",))
        assert shown["status"] == "aborted" and shown["error"].startswith("the service stopped while the match was playing")
        assert shown["result"]["hands"] == len(finished) and shown["result"]["seatings"][0]["complete"] is False
        log = again.request("GET", f"/api/matches/{long['id']}/log", token)[2].decode()
        assert [line for line in log.splitlines() if line.startswith("STATE:")] == finished
        kept = again.request("GET", f"/api/matches/{done['id']}", token)[2]
        assert kept["status"] == "finished" and kept["result"]["hands"] == 5
    finally:
        status, err = again.stop()
    assert (status, err) == (130, "arena serve: stopped\n")  # SIGTERM: a clean stop


def test_a_data_directory_that_cannot_be_used_is_one_line(tmp_path: Path) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("")
    command = [sys.executable, "-m", "arena", "serve", "--data", str(taken), "--port", "0"]
    served = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (served.returncode, served.stderr) == (1, f"arena serve: error: {taken}: File exists\n")
