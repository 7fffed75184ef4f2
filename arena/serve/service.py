"""Running the service: the store, the match host and Hypercorn serving the
API, in one trio run, until a signal or ``shutdown``."""

from __future__ import annotations

import socket
from functools import partial
from typing import Any

import trio
from hypercorn.trio import serve as hypercorn_serve

from agent.human.web import hypercorn_config
from arena.serve.app import make_app
from arena.serve.config import ServeConfig
from arena.serve.hosting import Host
from arena.serve.store import Store

__all__ = ["bind_api", "run_service"]


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
            serve = partial(hypercorn_serve, app, hypercorn_config(listener.detach()),
                            shutdown_trigger=stop.wait)
            binds: list[str] = await nursery.start(serve)
            task_status.started(binds[0])
            await stop.wait()
            nursery.cancel_scope.cancel()
    finally:
        store.close()
