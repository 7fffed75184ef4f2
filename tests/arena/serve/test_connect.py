"""``arena connect`` (issue 44): the reference ``example_player``, which knows
nothing of seat keys, plays a hosted duplicate match through the local relay
and the service's seat route (a WebSocket on the API's port), which takes
each seat with its key; the route is the match owner's alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.commands._kit import EXIT_USAGE
from arena.commands.connect import ServiceError, _Api, serve
from tests.arena.serve.service_process import Service, add_user
from tests.needs import missing

ROOT = Path(__file__).resolve().parents[3]
#: Where the reference programs are built (``make example_player`` in a clone of
#: project_acpc_server, as docs/results.md builds its dealer), unless $ACPC_SERVER names another folder.
EXAMPLE_PLAYER = Path(os.environ.get("ACPC_SERVER", "/tmp/acpc_server")) / "example_player"
KUHN_GAME = ROOT / "poker" / "games" / "kuhn.limit.2p.game"


def _connect(service: Service, match_id: str, token: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "arena", "connect", service.url, match_id]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ARENA_TOKEN": token})


@pytest.mark.parametrize("allow", ["asker", "127.0.0.2"])  # 127.0.0.2: an asker elsewhere; the relay is the service's
def test_example_player_plays_a_hosted_match_through_the_relay(tmp_path: Path, allow: str) -> None:
    if not EXAMPLE_PLAYER.is_file():
        missing("example_player", f"no reference example_player at {EXAMPLE_PLAYER} (make example_player in a clone of"
                                  " github.com/dmorrill10/project_acpc_server there, or name its folder in $ACPC_SERVER)")
    service = Service(tmp_path, allow=allow).start()
    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice,
                                {"game": "kuhn", "opponent": "always-call", "hands": 10, "duplicate": True})[2]
        relay = _connect(service, match["id"], alice)
        try:
            assert relay.stdout is not None
            first = relay.stdout.readline()
            listening = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", first)
            assert listening, first
            for _ in match["ports"]:  # one connection per seating, as against the reference dealer
                played = subprocess.run([str(EXAMPLE_PLAYER), str(KUHN_GAME), "127.0.0.1", listening[1]],
                                        capture_output=True, text=True, timeout=120)
                assert played.returncode == 0, played.stderr
            out, err = relay.communicate(timeout=60)
        finally:
            relay.kill()
        shown = service.wait_status(alice, match["id"], ("finished", "aborted"))
    finally:
        service.stop()
    assert (relay.returncode, err) == (0, "")
    players = ", ".join(f"{player['name']} {player['chips']:+g}" for player in shown["result"]["players"])
    assert out == f"match {match['id']} finished: 20 hands; chips: {players}\n"
    assert shown["status"] == "finished" and shown["result"]["hands"] == 20


def test_a_wrong_token_is_one_line_before_anything_listens(service: Service) -> None:
    relay = _connect(service, "0123abcd", "not-a-token")
    out, err = relay.communicate(timeout=60)
    assert (relay.returncode, out) == (EXIT_USAGE, "")
    assert err.startswith("arena connect: error: ") and err.count("\n") == 1 and " 401 " in err, err


@pytest.mark.parametrize("whose", ["another user's", "a wrong token's"])
async def test_the_seat_route_is_the_owners_alone(service: Service, whose: str) -> None:
    alice, bob = add_user(service.data, "alice"), add_user(service.data, "bob")
    match = service.request("POST", "/api/matches", alice, {"game": "kuhn", "opponent": "always-call", "hands": 5})[2]
    api = _Api(f"{service.url}/api/matches/{match['id']}", bob if whose == "another user's" else "not-a-token")
    bound: list[int] = []
    streams: list[trio.SocketStream] = []

    async def agent() -> None:
        while not bound:
            await trio.sleep(0.01)
        streams.append(await trio.open_tcp_stream("127.0.0.1", bound[0]))
        await streams[0].send_all(b"VERSION:2.0.0\r\n")

    refused: list[ServiceError] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent)
            try:
                await serve(api, "127.0.0.1", 0, lambda host, port: bound.append(port))
            except ServiceError as error:
                refused.append(error)
    for stream in streams:
        await stream.aclose()
    expected = f"no match '{match['id']}'" if whose == "another user's" else "the seat route needs Authorization: Bearer TOKEN"
    assert refused and refused[0].status == EXIT_USAGE and expected in str(refused[0]), refused
    shown = service.request("GET", f"/api/matches/{match['id']}", alice)[2]
    assert shown["status"] == "waiting" and shown["next_port"] == match["ports"][0]  # the seat still waits for alice
