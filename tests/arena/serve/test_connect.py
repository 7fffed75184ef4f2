"""``arena connect`` (issue 44): the reference ``example_player``, which knows
nothing of seat keys, plays a hosted duplicate match through the local relay
and the service's seat route (a WebSocket on the API's port), which takes
each seat with its key; the route is the match owner's alone."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
from functools import partial
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
    if not EXAMPLE_PLAYER.is_file():  # a skip even in CI, which reaches PyPI and Debian only: the reference is on GitHub
        pytest.skip(f"no reference example_player at {EXAMPLE_PLAYER} (make example_player in a clone of"
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


async def _tls_proxy(context: ssl.SSLContext, upstream_port: int, seen: list[bool],
                     task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """A TLS-terminating proxy on 127.0.0.1 in front of the service (as a
    deployment's would be); ``seen`` gets, per connection, whether it was TLS."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])

    async def pipe(source: trio.abc.ReceiveStream, sink: trio.abc.SendStream) -> None:
        try:
            async for chunk in source:
                await sink.send_all(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def handle(client: trio.SocketStream) -> None:
        tls = trio.SSLStream(client, context, server_side=True)
        try:
            await tls.do_handshake()
        except trio.BrokenResourceError:  # not TLS: nothing of it reaches the service
            seen.append(False)
            return
        seen.append(True)
        upstream = await trio.open_tcp_stream("127.0.0.1", upstream_port)
        async with tls, upstream, trio.open_nursery() as nursery:
            nursery.start_soon(pipe, tls, upstream)
            await pipe(upstream, tls)
            nursery.cancel_scope.cancel()

    await trio.serve_listeners(handle, listeners)


async def test_the_seat_rides_the_apis_tls(service: Service, tmp_path: Path) -> None:
    """Behind a TLS proxy, ``arena connect https://...`` carries the seat over
    the API's TLS: every connection the proxy sees is TLS, and our agent,
    given no key, plays the match through the relay."""
    if shutil.which("openssl") is None:
        missing("openssl", "no openssl to make the proxy's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    alice = add_user(service.data, "alice")
    match = service.request("POST", "/api/matches", alice, {"game": "kuhn", "opponent": "always-call", "hands": 10})[2]
    seen: list[bool] = []
    environment = {**os.environ, "ARENA_TOKEN": alice, "SSL_CERT_FILE": str(cert)}
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(_tls_proxy, context, int(service.url.rsplit(":", 1)[1]), seen))
            relay = await trio.lowlevel.open_process(
                [sys.executable, "-m", "arena", "connect", f"https://127.0.0.1:{port}", match["id"]],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
            assert relay.stdout is not None and relay.stderr is not None
            out = b""
            while not out.endswith(b"\n"):
                out += await relay.stdout.receive_some(1)
            listening = re.fullmatch(rb"listening on 127\.0\.0\.1:(\d+)\n", out)
            assert listening, out
            command = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", listening[1].decode()]
            played = await trio.run_process(command, capture_stderr=True, check=False)
            assert played.returncode == 0, played.stderr
            while chunk := await relay.stdout.receive_some():
                out += chunk
            err = await relay.stderr.receive_some()
            assert await relay.wait() == 0, err
            nursery.cancel_scope.cancel()
    assert out.decode().splitlines()[1].startswith(f"match {match['id']} finished: 10 hands; chips: ")
    assert seen and all(seen)  # the API's requests and the seat's WebSocket: TLS, every one


def test_ctrl_c_while_relaying_is_one_line_and_status_130(service: Service) -> None:
    alice = add_user(service.data, "alice")
    match = service.request("POST", "/api/matches", alice, {"game": "kuhn", "opponent": "always-call", "hands": 5})[2]
    relay = _connect(service, match["id"], alice)
    try:
        assert relay.stdout is not None
        listening = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", relay.stdout.readline())
        assert listening
        with socket.create_connection(("127.0.0.1", int(listening[1])), timeout=10) as agent:
            agent.sendall(b"VERSION:2.0.0\r\n")
            assert agent.recv(100).startswith(b"MATCHSTATE:0:0:")  # relayed: the seating's first state
            relay.send_signal(signal.SIGINT)
            out, err = relay.communicate(timeout=60)
    finally:
        relay.kill()
    assert (relay.returncode, out, err) == (130, "", "arena connect: interrupted\n")
