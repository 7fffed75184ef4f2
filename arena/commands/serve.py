"""``arena serve [--data DIR] [--host H] [--port P] [--match-ports LO-HI] [--config serve.toml]``: the hosted arena.

Serves the JSON API (docs/hosting.md) on H:P and hosts matches against the
hosted bots (the named bots whose files are present, and the simple bots) on
ports of LO-HI, where any ACPC agent connects. Users and matches are kept in
DIR (default ./arena-data: a SQLite database in WAL mode and each match's
dealer files); ``arena users add NAME --data DIR`` makes the first user. A
restart marks the matches that were playing aborted, keeping their finished
hands. ``serve.toml`` sets the rest (limits, time limits, who may connect to a
match port): its keys are listed in docs/hosting.md; options given here win.

It runs until SIGINT or SIGTERM. Exit statuses: 130 stopped by a signal; 1
the address cannot be served or the data directory used; 2 usage (a bad option or serve.toml).
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import sys
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.commands._kit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, PORT, UsageParser, fail, parse
from arena.serve.config import ConfigError, load_config, parse_port_range
from arena.serve.service import bind_api, run_service

__all__ = ["main"]

PROG = "arena serve"


def _ports(text: str) -> tuple[int, int]:
    try:
        return parse_port_range(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _first(group: BaseExceptionGroup[OSError | sqlite3.Error]) -> OSError | sqlite3.Error:
    """The first error of ``group``, however deep its nurseries nested it."""
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("--data", type=Path, metavar="DIR", help="users, matches and logs (default ./arena-data)")
    parser.add_argument("--host", metavar="H", help="address to serve the API and match ports on (default 127.0.0.1)")
    parser.add_argument("--port", type=PORT, metavar="P", help="API port (default 8000)")
    parser.add_argument("--match-ports", type=_ports, metavar="LO-HI", help="match ports (default 9000-9999)")
    parser.add_argument("--config", type=Path, metavar="FILE", help="serve.toml: limits and the rest")
    return parser


def main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    overrides: dict[str, Any] = {
        key: value for key, value in
        (("data", args.data), ("host", args.host), ("port", args.port), ("match_ports", args.match_ports))
        if value is not None
    }
    try:
        config = load_config(args.config, overrides)
    except ConfigError as error:
        return fail(PROG, error, EXIT_USAGE)
    try:
        listener = bind_api(config.host, config.port)
    except OSError as error:
        return fail(PROG, error, EXIT_FAILED)

    async def serve() -> None:
        stop = trio.Event()
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                url = await nursery.start(partial(run_service, config, listener, shutdown=stop))
                print(f"{PROG}: the API is at {url}/api, match ports {config.match_ports[0]}-{config.match_ports[1]},"
                      f" data in {config.data}", file=sys.stderr, flush=True)
                print(f"{PROG}: the web pages (lobby, tables, leaderboard) are at {url}/", file=sys.stderr, flush=True)
                async for _ in signals:
                    stop.set()
                    break

    problem: OSError | sqlite3.Error | None = None
    try:
        trio.run(serve)
    except* (OSError, sqlite3.Error) as group:  # the data directory or its database, raised inside trio's nurseries
        problem = _first(group)
    if problem is not None:
        return fail(PROG, f"{config.data}: {getattr(problem, 'strerror', None) or problem}", EXIT_FAILED)
    print(f"{PROG}: stopped", file=sys.stderr)
    return EXIT_INTERRUPTED
