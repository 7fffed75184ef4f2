"""The web table: a :class:`~agent.human.seat.HumanSeat` served to a browser.

Hypercorn serves a Starlette app on trio (no HTTP of our own): ``/`` is the
table page, ``/static/`` its script and style (package data, no build step),
and ``/ws`` the WebSocket the page talks over. On every change of the seat the
page gets the whole table (:meth:`HumanSeat.snapshot`), so a page that reloads
or reconnects needs nothing but the next message; it sends back only small JSON
messages (:func:`agent.human.seat.parse_message`), refused one by one with an
``error`` message when they are malformed, too big or not legal (only a message
past :data:`HARD_MAX_MESSAGE_BYTES` makes Hypercorn close the connection, code
1009). A random token in the URL keeps other local users off the seat: a page
without it is told so in the close reason (code 1008) and stops reconnecting.

Every connection is bounded, so that ``arena play`` can always tell when the
last page has gone (and stop on Ctrl-C): a page that takes longer than
:data:`SEND_TIMEOUT_S` to take what is sent to it is dropped, and an idle HTTP
connection closes after :data:`KEEP_ALIVE_S`. Dropping takes two bounds, as
Hypercorn writes to a socket inside a shielded cancel scope: the kernel's
(``TCP_USER_TIMEOUT``, which aborts a connection whose peer keeps its receive
window shut) for a page that is open but reads nothing, and a timeout on our
send for a page that went away with its inbox full. The three files are
served from memory as plain responses: Starlette's file responses cancel
themselves on the client's disconnect inside Hypercorn's keep-alive bookkeeping,
which then never closes the idle connection. A page connection that fails ends
only that connection.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, Final

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from agent.human.seat import MAX_MESSAGE_BYTES, Act, HumanSeat, Leave, MessageError, parse_message

__all__ = [
    "STATIC",
    "SEND_TIMEOUT_S",
    "KEEP_ALIVE_S",
    "HARD_MAX_MESSAGE_BYTES",
    "Pages",
    "make_app",
    "new_token",
    "bind_table",
    "serve_page",
    "hypercorn_config",
    "serve_table",
]

STATIC: Final = Path(__file__).with_name("static")
#: The page's files and their content types.
_FILES: Final = {
    "index.html": "text/html; charset=utf-8",
    "table.js": "text/javascript; charset=utf-8",
    "table.css": "text/css; charset=utf-8",
}
#: WebSocket close code for a wrong token (RFC 6455 "policy violation").
POLICY_VIOLATION: Final = 1008
#: What a page without the token reads when its connection is refused.
WRONG_TOKEN: Final = "this address does not carry this table's token: open the address that arena play printed (…/?token=…)"
#: Seconds a page may take to take one table or reply before it is dropped.
SEND_TIMEOUT_S: Final = 10.0
#: Seconds an idle HTTP connection stays open.
KEEP_ALIVE_S: Final = 5.0
#: Messages up to this size reach :func:`parse_message` (and are refused there
#: past :data:`~agent.human.seat.MAX_MESSAGE_BYTES`, with a reason); Hypercorn
#: closes a connection whose message is longer still, rather than buffer it.
HARD_MAX_MESSAGE_BYTES: Final = 64 * MAX_MESSAGE_BYTES
_log = logging.getLogger(__name__)


def new_token() -> str:
    return secrets.token_urlsafe(12)


class Pages:
    """How many pages are connected, and an event that fires when that changes."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = trio.Event()

    def _update(self, delta: int) -> None:
        self.count += delta
        self.changed.set()
        self.changed = trio.Event()


def make_app(seat: HumanSeat, token: str, pages: Pages, *, send_timeout_s: float = SEND_TIMEOUT_S) -> Starlette:
    """The table page, its files, and the WebSocket of ``seat``; a page that
    takes over ``send_timeout_s`` to take a message is dropped."""
    files = {name: Response((STATIC / name).read_bytes(), media_type=kind, headers={"Cache-Control": "no-store"})
             for name, kind in _FILES.items()}
    not_found = PlainTextResponse("Not Found", status_code=404)

    async def index(request: Request) -> Response:
        return files["index.html"]

    async def static(request: Request) -> Response:
        return files.get(request.path_params["name"], not_found)

    async def table(websocket: WebSocket) -> None:
        # Accepted, then closed with the reason: a refusal before accepting is an
        # HTTP 403 that a page cannot read, and would take for a server away.
        await websocket.accept()
        given = websocket.query_params.get("token", "").encode()  # bytes: any text compares
        if not secrets.compare_digest(given, token.encode()):
            await websocket.close(code=POLICY_VIOLATION, reason=WRONG_TOKEN)
            return
        pages._update(+1)
        try:
            await serve_page(seat, websocket, send_timeout_s)
        except Exception as error:  # a page's connection failed: that page's business only
            _log.debug("page connection ended: %r", error)
        finally:
            pages._update(-1)

    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        WebSocketRoute("/ws", table),
    ]
    return Starlette(routes=routes)


async def serve_page(seat: HumanSeat, websocket: WebSocket, send_timeout_s: float = SEND_TIMEOUT_S) -> None:
    """Serve one page on an accepted WebSocket until it goes: the table after
    every change, its messages to the seat (also the hosted arena's tables,
    :mod:`arena.serve.pages`, which check who may sit before calling this)."""
    lock = trio.Lock()

    async def send(document: dict[str, Any]) -> None:
        # Bounded: once Hypercorn's write to a page fails (the page went, or the
        # kernel's timeout dropped it), Hypercorn waits to put the disconnect in
        # the page's full inbox, which only this handler empties; ending here
        # is what lets the page count reach 0.
        with trio.fail_after(send_timeout_s):
            async with lock:
                await websocket.send_text(json.dumps(document, separators=(",", ":")))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_push_tables, seat, send)
        await _read_messages(seat, websocket, send)
        nursery.cancel_scope.cancel()


async def _push_tables(seat: HumanSeat, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    """The whole table now, then again after every change."""
    while True:
        version = seat.version
        await send(seat.snapshot())
        await seat.wait_change(version)


async def _read_messages(seat: HumanSeat, websocket: WebSocket, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        raw = message.get("text")
        if raw is None:
            raw = message.get("bytes") or b""
        try:
            parsed = parse_message(raw)
            if isinstance(parsed, Act):
                seat.act(parsed.decision, parsed.kind, parsed.size)
            elif isinstance(parsed, Leave):
                seat.leave()
            else:
                seat.next_hand()
        except MessageError as error:
            await send({"type": "error", "message": str(error)})


def bind_table(host: str, port: int, *, send_timeout_s: float = SEND_TIMEOUT_S) -> int:
    """Bind the table's address now (port 0: any free one) and return the socket's
    file descriptor for :func:`serve_table`, so that a busy port is a plain
    ``OSError`` before anything else starts. Its connections are aborted when
    what is sent on them stays unread for ``send_timeout_s`` (``TCP_USER_TIMEOUT``,
    inherited from the listener; where the system has none, only the bound on
    our own sends applies).

    Raises:
        OSError: the address cannot be bound.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "TCP_USER_TIMEOUT"):  # Linux
            listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(send_timeout_s * 1000))
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise OSError(f"cannot serve the table at {host}:{port}: {error.strerror or error}") from None
    return listener.detach()  # Hypercorn takes the descriptor over


def hypercorn_config(fd: int) -> Config:
    """Hypercorn serving the socket ``fd``: bounded idle connections, header
    sizes and WebSocket messages, no access log, a one-second graceful stop
    (also the hosted arena's, :mod:`arena.serve.service`)."""
    config = Config()
    config.bind = [f"fd://{fd}"]
    config.websocket_max_message_size = HARD_MAX_MESSAGE_BYTES
    config.keep_alive_timeout = KEEP_ALIVE_S
    config.h11_max_incomplete_size = 16 * 1024
    config.accesslog = None
    config.errorlog = _log
    config.graceful_timeout = 1.0
    return config


async def serve_table(
    seat: HumanSeat,
    fd: int,
    token: str,
    pages: Pages,
    shutdown: trio.Event,
    *,
    send_timeout_s: float = SEND_TIMEOUT_S,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the table on the socket ``fd`` (from :func:`bind_table`) until
    ``shutdown`` is set; ``task_status.started`` gets the page's URL."""

    app: Any = make_app(seat, token, pages, send_timeout_s=send_timeout_s)  # an ASGI app; Hypercorn's type names its own scope types
    serve = partial(hypercorn_serve, app, hypercorn_config(fd), shutdown_trigger=shutdown.wait)
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(serve)
        task_status.started(f"{binds[0]}/?token={token}")
