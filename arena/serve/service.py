"""Running the service: the store, the match host and Hypercorn serving the
API, in one trio run, until a signal or ``shutdown``."""

from __future__ import annotations

import logging
import socket
from functools import partial
from typing import Any, Final

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from arena.serve.app import make_app
from arena.serve.config import ServeConfig
from arena.serve.hosting import Host
from arena.serve.store import Store

__all__ = ["bind_api", "run_service", "KEEP_ALIVE_S"]

#: Seconds an idle HTTP connection stays open.
KEEP_ALIVE_S: Final = 5.0
_log = logging.getLogger(__name__)


def bind_api(host: str, port: int) -> socket.socket:
    """The API's listening socket, bound now so that a busy port is one clear line.

    Raises:
        OSError: the address cannot be bound (the message names it).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise OSError(f"cannot serve at {host}:{port}: {error.strerror or error}") from None
    family, kind, proto, _, address = infos[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise OSError(f"cannot serve at {host}:{port}: {error.strerror or error}") from None
    return listener


def _hypercorn(fd: int, max_body_bytes: int) -> Config:
    config = Config()
    config.bind = [f"fd://{fd}"]
    config.keep_alive_timeout = KEEP_ALIVE_S
    config.h11_max_incomplete_size = 16 * 1024
    config.accesslog = None
    config.errorlog = _log
    config.graceful_timeout = 1.0
    return config


async def run_service(
    config: ServeConfig,
    listener: socket.socket,
    *,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until ``shutdown`` is set (or cancelled); ``task_status.started``
    gets the API's base URL once it answers."""
    store = Store(config.data)
    host = Host(config, store)
    stop = shutdown if shutdown is not None else trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            app: Any = make_app(host)  # an ASGI app; Hypercorn's type names its own scope types
            serve = partial(hypercorn_serve, app, _hypercorn(listener.detach(), config.max_body_bytes),
                            shutdown_trigger=stop.wait)
            binds: list[str] = await nursery.start(serve)
            task_status.started(binds[0])
            await stop.wait()
            nursery.cancel_scope.cancel()
    finally:
        store.close()
