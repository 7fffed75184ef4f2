"""``arena connect SERVER_URL MATCH_ID --token TOKEN [--listen HOST:PORT]``:
play a hosted match with an agent nobody can change (the reference
``example_player``, a compiled bot), which knows nothing of seat keys.

A local relay: it listens on ``--listen`` (default 127.0.0.1 and a free
port), prints ``listening on HOST:PORT`` as its first line, and relays each
connection the agent makes there to the match's next seating through the
service's seat route: a WebSocket on the API's own address
(``SERVER_URL/api/matches/ID/seat``, the token as a bearer), over which the
service connects the agent's bytes to the seating's dealer, sending the
seat's key line itself (docs/protocol.md, Seat keys). So the seat rides the
API's transport: TLS where the service is served over ``https://``, and no
match port need be open to the user at all. The agent's bytes pass both
ways untouched, its own version line first. Start the agent once per
seating, pointed at the relay (a duplicate match has two). When the match
is over the relay prints one line (the hands and each player's chips, and
why it was aborted if it was) and exits: 0 when it finished, 1 when it was
aborted or the service could not be reached, 2 for usage (a bad URL, a
refused token, no such match), 130 interrupted.

The token is ``--token`` or, better (a command line is readable in ``ps``),
the environment variable ``ARENA_TOKEN``.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.utilities import LocalProtocolError
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Ping,
    Pong,
    RejectConnection,
    Request,
    TextMessage,
)

from agent.cli import single_error
from arena.commands._kit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageParser, fail, parse

__all__ = ["main", "TOKEN_VARIABLE"]

PROG: Final = "arena connect"
#: The environment variable that gives the token when ``--token`` does not.
TOKEN_VARIABLE: Final = "ARENA_TOKEN"
#: How often the service is asked whether a seating waits or the match is over.
_POLL_S: Final = 0.5
#: The close code of a refusal (RFC 6455 "policy violation"): the seat route's for a token or match it refuses.
POLICY_VIOLATION: Final = 1008
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


def announce(host: str, port: int) -> None:
    """The first line: where the agent connects (flushed, for a script that waits for it)."""
    print(f"listening on {host}:{port}", flush=True)


class _SeatSocket:
    """The seat route's WebSocket (``/api/matches/ID/seat``), framed by wsproto
    over a TCP (or TLS) stream; one seating's connection to the dealer."""

    def __init__(self, stream: trio.abc.Stream, connection: WSConnection) -> None:
        self.stream = stream
        self.connection = connection
        self.sending = trio.Lock()  # the agent's bytes and the answers to pings share the stream

    @classmethod
    async def open(cls, api: _Api) -> _SeatSocket:
        """Open the route with the token.

        Raises:
            ServiceError: the service refused the handshake or could not be reached.
        """
        url = urllib.parse.urlsplit(api.url + "/seat")
        secure = url.scheme == "https"
        try:
            stream: trio.abc.Stream = await trio.open_tcp_stream(url.hostname or "", url.port or (443 if secure else 80))
            if secure:
                stream = trio.SSLStream(stream, ssl.create_default_context(), server_hostname=url.hostname)
                await stream.do_handshake()
        except (OSError, trio.BrokenResourceError) as error:
            raise ServiceError(f"{api.url}/seat: cannot reach the service: {error}", EXIT_FAILED) from None
        connection = WSConnection(ConnectionType.CLIENT)
        headers = [(b"authorization", f"Bearer {api.token}".encode())] if api.token else []
        await stream.send_all(connection.send(Request(host=url.netloc, target=url.path, extra_headers=headers)))
        while True:
            data = await _receive(stream)
            if not data:
                raise ServiceError(f"{api.url}/seat: the service closed the connection", EXIT_FAILED)
            connection.receive_data(data)
            for event in connection.events():
                if isinstance(event, AcceptConnection):
                    return cls(stream, connection)
                if isinstance(event, RejectConnection):
                    raise ServiceError(f"{api.url}/seat: refused ({event.status_code})", EXIT_FAILED)

    async def send(self, event: BytesMessage | CloseConnection | Pong) -> None:
        """Send ``event``, unless the seat is closing already (then there is nothing more to say)."""
        async with self.sending:
            try:
                data = self.connection.send(event)
            except LocalProtocolError:
                return
            await self.stream.send_all(data)

    async def relay(self, agent: trio.SocketStream) -> tuple[int, str]:
        """Pass the agent's bytes to the seat and the seat's to the agent
        until the service closes the seat (the dealer's end is the seating's,
        the agent's end closes it); the close code and reason."""
        async with agent, trio.open_nursery() as nursery:
            nursery.start_soon(self._up, agent)
            closed = await self._down(agent)
            nursery.cancel_scope.cancel()
        with trio.CancelScope(shield=True):
            await self.stream.aclose()
        return closed

    async def _up(self, agent: trio.SocketStream) -> None:
        try:
            while data := await agent.receive_some(_CHUNK):
                await self.send(BytesMessage(data=data))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        if self.connection.state is ConnectionState.OPEN:  # the agent hung up: so does its seat
            try:
                await self.send(CloseConnection(code=1000))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async def _down(self, agent: trio.SocketStream) -> tuple[int, str]:
        while True:
            # First what has arrived already: the bytes that came with the handshake's answer
            # (a refusal's close, say) are waiting before any more are read.
            for event in self.connection.events():
                if isinstance(event, BytesMessage | TextMessage):
                    payload = event.data.encode() if isinstance(event.data, str) else bytes(event.data)
                    try:
                        await agent.send_all(payload)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass  # the agent is gone: its end reaches the seat through _up
                elif isinstance(event, Ping):
                    await self.send(event.response())
                elif isinstance(event, CloseConnection):
                    if self.connection.state is ConnectionState.REMOTE_CLOSING:
                        try:
                            await self.send(event.response())
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            pass  # the service closed the connection behind its close: the close was all it had to say
                    return event.code, event.reason or ""
            data = await _receive(self.stream)
            if not data:
                return 1006, "the service ended the connection"
            self.connection.receive_data(data)


async def _receive(stream: trio.abc.ReceiveStream) -> bytes:
    """The next bytes, ``b""`` at the end (a reset connection ends it too)."""
    try:
        return bytes(await stream.receive_some(_CHUNK))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return b""


async def serve(api: _Api, host: str, port: int, listening: Callable[[str, int], None] = announce) -> dict[str, Any]:
    """Listen on ``host:port`` (``listening`` is told the address bound) and
    relay the agent's connections, one seating each, through the seat route,
    until the match is over; its final document.

    Raises:
        ServiceError: the service refused the token or the match.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    listener = listeners[0]
    for extra in listeners[1:]:
        await extra.aclose()
    bound = listener.socket.getsockname()
    listening(str(bound[0]), int(bound[1]))
    async with listener:
        while True:
            agent: trio.SocketStream | None = None
            with trio.move_on_after(_POLL_S):
                agent = await listener.accept()
            if agent is not None:
                code, reason = await (await _SeatSocket.open(api)).relay(agent)
                if code == POLICY_VIOLATION:
                    raise ServiceError(f"{api.url}/seat: {reason}", EXIT_USAGE)
                if code not in (1000, 1005):
                    print(f"{PROG}: the seating's connection ended: {reason or code}", file=sys.stderr)
            document = await _ask(api)
            if _over(document):
                return document


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
    except BaseException as raised:  # trio may wrap it in a group of one (Ctrl-C during a relay)
        leaf = single_error(raised)
        if isinstance(leaf, ServiceError):
            return fail(PROG, leaf, leaf.status)
        if isinstance(leaf, KeyboardInterrupt):
            print(f"{PROG}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(leaf, OSError):
            return fail(PROG, f"cannot listen on {args.listen}: {leaf.strerror or leaf}", EXIT_FAILED)
        raise
    print(summary(document), flush=True)
    return EXIT_OK if document["status"] == "finished" else EXIT_FAILED
