"""``arena connect SERVER_URL MATCH_ID --token TOKEN [--listen HOST:PORT]``:
play a hosted match with an agent nobody can change (the reference
``example_player``, a compiled bot), which knows nothing of seat keys.

A local relay: it listens on ``--listen`` (default 127.0.0.1 and a free
port), prints ``listening on HOST:PORT`` as its first line, and relays each
connection the agent makes there to the match's next seating: it asks the
service (``GET /api/matches/ID`` with the token) for the seating's port and
seat key, connects, sends the key line (docs/protocol.md, Seat keys) and then
passes the bytes both ways untouched, the agent's own version line first.
Start the agent once per seating, pointed at the relay (a duplicate match has
two). When the match is over the relay prints one line (the hands and each
player's chips, or why it was aborted) and exits: 0 when it finished, 1 when
it was aborted, 2 for usage (a bad URL, a refused token, no such match), 130
interrupted.

Why a relay on the agent's machine, and not a route on the service's HTTP
port: the key goes only where the user's own agent runs, and the dealer's
port stays what every agent speaks (plain ACPC over TCP). The match port is
not encrypted: over an untrusted network the key and the cards travel in
clear, as the ACPC protocol's own do (docs/hosting.md, threat model).

The token is ``--token`` or, better (a command line is readable in ``ps``),
the environment variable ``ARENA_TOKEN``.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import trio

from arena.commands._kit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageParser, fail, parse
from poker.protocol import key_line

__all__ = ["main", "TOKEN_VARIABLE"]

PROG: Final = "arena connect"
#: The environment variable that gives the token when ``--token`` does not.
TOKEN_VARIABLE: Final = "ARENA_TOKEN"
#: How often the service is asked whether a seating waits or the match is over.
_POLL_S: Final = 0.25
_CHUNK: Final = 65536


class ServiceError(Exception):
    """The service refused (``status``) or could not be reached; ``str()`` is the line to print."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class _Api:
    """The match's route on the service, asked with the user's token."""

    url: str  # .../api/matches/ID
    token: str

    def get(self) -> dict[str, Any]:
        """The match's document (``GET /api/matches/ID``).

        Raises:
            ServiceError: a refusal (the token, no such match) or no answer.
        """
        request = urllib.request.Request(self.url, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                document: dict[str, Any] = json.loads(response.read())
                return document
        except urllib.error.HTTPError as error:
            try:
                said = json.loads(error.read()).get("error", "")
            except ValueError:
                said = ""
            status = EXIT_USAGE if error.code in (401, 403, 404) else EXIT_FAILED
            raise ServiceError(f"{self.url}: {error.code} {said or error.reason}", status) from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise ServiceError(f"{self.url}: cannot reach the service: {reason}", EXIT_FAILED) from None


def _over(document: dict[str, Any]) -> bool:
    return document.get("status") in ("finished", "aborted")


def summary(document: dict[str, Any]) -> str:
    """The line printed when the match is over: its end, hands and each player's chips."""
    result = document.get("result") or {}
    players = ", ".join(f"{player['name']} {player['chips']:+g}" for player in result.get("players", []))
    line = f"match {document['id']} {document['status']}: {result.get('hands', 0)} hands"
    line += f"; chips: {players}" if players else ""
    return line + (f"; {document['error']}" if document.get("error") else "")


async def _ask(api: _Api) -> dict[str, Any]:
    return await trio.to_thread.run_sync(api.get)


async def _next_seat(api: _Api) -> tuple[str, int, str] | dict[str, Any]:
    """The host, port and key of the seating waiting for the agent, or the
    match's document once it is over."""
    while True:
        document = await _ask(api)
        if _over(document):
            return document
        if document.get("next_port") is not None and document.get("seat_key"):
            return str(document["host"]), int(document["next_port"]), str(document["seat_key"])
        await trio.sleep(_POLL_S)


async def _pipe(source: trio.abc.ReceiveStream, sink: trio.abc.SendStream) -> None:
    """Copy ``source`` to ``sink`` until it ends, then end ``sink``'s sending side."""
    try:
        while data := await source.receive_some(_CHUNK):
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    try:
        if isinstance(sink, trio.SocketStream):
            await sink.send_eof()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass


async def relay(agent: trio.SocketStream, host: str, port: int, key: str) -> None:
    """One seating: the agent's connection to the dealer's ``host:port``, the
    key line sent first; until either side ends."""
    dealer = await trio.open_tcp_stream(host, port)
    async with dealer, agent:
        await dealer.send_all(key_line(key))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_pipe, agent, dealer)
            await _pipe(dealer, agent)  # the dealer's end is the seating's
            nursery.cancel_scope.cancel()


def announce(host: str, port: int) -> None:
    """The first line: where the agent connects (flushed, for a script that waits for it)."""
    print(f"listening on {host}:{port}", flush=True)


async def serve(api: _Api, host: str, port: int, listening: Callable[[str, int], None] = announce) -> dict[str, Any]:
    """Listen on ``host:port`` (``listening`` is told the address bound) and
    relay the agent's connections, one seating each, until the match is over;
    its final document."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    listener = listeners[0]
    for extra in listeners[1:]:
        await extra.aclose()
    bound = listener.socket.getsockname()
    listening(str(bound[0]), int(bound[1]))
    async with listener:
        while True:
            agent: trio.SocketStream | None = None
            with trio.move_on_after(_POLL_S * 4):
                agent = await listener.accept()
            if agent is None:  # no agent came yet: is the match over without it?
                document = await _ask(api)
                if _over(document):
                    return document
                continue
            seat = await _next_seat(api)
            if isinstance(seat, dict):
                await agent.aclose()
                return seat
            try:
                await relay(agent, *seat)
            except OSError as error:  # the seating's port went away (its start timeout): the agent may try again
                print(f"{PROG}: the seating's port {seat[0]}:{seat[1]}: {error.strerror or error}", file=sys.stderr)
                await agent.aclose()


def _listen_address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen: HOST:PORT with a port in 0..65535, not {text!r}")
    return host.strip("[]"), int(port)


def _parser() -> UsageParser:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("server", metavar="SERVER_URL", help="the service, e.g. https://arena.example.org")
    parser.add_argument("match_id", metavar="MATCH_ID", help="the match's id (POST /api/matches answers it)")
    parser.add_argument("--token", default=None, help=f"your token (default: ${TOKEN_VARIABLE})")
    parser.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT",
                        help="where the agent connects (default 127.0.0.1 and a free port)")
    return parser


def main(argv: list[str]) -> int:
    """Relay the match's seatings; the exit status of the module notes."""
    args = parse(_parser(), argv)
    if isinstance(args, int):  # --help, or a usage error already printed
        return args
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        return fail(PROG, f"give your token: --token TOKEN or ${TOKEN_VARIABLE}", EXIT_USAGE)
    server = urllib.parse.urlsplit(args.server)
    if server.scheme not in ("http", "https") or not server.netloc:
        return fail(PROG, f"SERVER_URL: an http:// or https:// address, not {args.server!r}", EXIT_USAGE)
    if not args.match_id.isalnum():
        return fail(PROG, f"MATCH_ID: letters and digits, not {args.match_id!r}", EXIT_USAGE)
    try:
        host, port = _listen_address(args.listen)
    except ValueError as error:
        return fail(PROG, error, EXIT_USAGE)
    api = _Api(f"{args.server.rstrip('/')}/api/matches/{args.match_id}", token)
    try:
        api.get()  # a wrong token or match is said before anything listens
        document = trio.run(serve, api, host, port)
    except ServiceError as error:
        return fail(PROG, error, error.status)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as error:
        return fail(PROG, f"cannot listen on {args.listen}: {error.strerror or error}", EXIT_FAILED)
    print(summary(document), flush=True)
    return EXIT_OK if document["status"] == "finished" else EXIT_FAILED
