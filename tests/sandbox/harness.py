"""Running a test agent in the sandbox: its folder (a ``startme.sh`` running a
Python script with the system's ``python3``), a stand-in for its dealer that
collects what the agent reports over its one connection, and what was left
of it afterwards (every process of its uid).

A hostile agent tries something, then reports how it went to its dealer,
one line per try (``ok ...`` or the error's name and errno): so a test sees
both that the agent ran and that the try failed, and it fails where the
confinement is missing (the try then says ``ok``).
"""

from __future__ import annotations

import os
import stat
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

import needs
from arena.sandbox import Confined, Limits, Sandbox, unavailable

#: The module mark of every sandbox test: skipped, saying why, where the sandbox cannot run (failed in CI).
NEEDS_SANDBOX = needs.unless(unavailable() is None, "the sandbox", f"{unavailable()}")

#: What every test agent starts with: its dealer's address, and ``attempt``/``report``.
PRELUDE = '''\
import os, socket, sys
HOST, PORT = sys.argv[1], int(sys.argv[2])

def attempt(try_it):
    """'ok' and what it gave, or the error's name and errno."""
    try:
        return f"ok {try_it()!r}"
    except (OSError, MemoryError) as error:
        return f"{type(error).__name__} {getattr(error, 'errno', '')}".strip()

def report(*lines):
    with socket.create_connection((HOST, PORT)) as dealer:
        dealer.sendall("".join(line + "\\n" for line in lines).encode())
'''

#: The most of an agent's output a test keeps.
KEEP = 4096


def make_agent(root: Path, name: str, script: str) -> Path:
    """An agent's folder ``root/name``: ``startme.sh`` runs ``agent.py`` (the
    prelude, then ``script``) with the system's python3."""
    folder = root / name
    folder.mkdir(mode=0o755)
    (folder / "agent.py").write_text(PRELUDE + textwrap.dedent(script))
    startme = folder / "startme.sh"
    startme.write_text('#!/bin/sh\nexec python3 -I agent.py "$@"\n')
    startme.chmod(0o755)
    (folder / "agent.py").chmod(0o644)
    return folder


@dataclass(frozen=True)
class Outcome:
    """What became of a sandboxed agent: its exit status (``None``: it was
    ended when the test stopped waiting), what it reported, the first
    :data:`KEEP` bytes of its output, the bytes it wrote there in all, and the
    processes of its uid still there once the sandbox was closed."""

    status: int | None
    report: list[str]
    stdout: bytes
    stderr: bytes
    output_bytes: int
    uid: int
    left: list[int]


def processes_of(uid: int) -> list[int]:
    """The PIDs of this machine's processes running as ``uid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except FileNotFoundError:
                pass
    return found


async def run_agent(
    folder: Path,
    limits: Limits = Limits(),
    *,
    read_only: Sequence[Path] = (),
    lines: int | None = None,
    wait_s: float = 20.0,
) -> Outcome:
    """Run the agent in ``folder`` confined (``read_only``: as :class:`Sandbox`
    takes it), its dealer a listener that collects what it sends, until it
    ends, or has sent ``lines`` lines, or ``wait_s`` pass; then close the
    sandbox, and wait for the dealer stand-in to have read all it was sent."""
    received = bytearray()
    output = {"stdout": bytearray(), "stderr": bytearray()}
    total = 0
    read: list[trio.Event] = []
    enough = trio.Event()
    status: int | None = None

    async def dealer(stream: trio.SocketStream) -> None:
        done = trio.Event()
        read.append(done)
        try:
            async for chunk in stream:
                received.extend(chunk)
                if lines is not None and received.count(b"\n") >= lines:
                    enough.set()
        finally:
            done.set()

    async def drain(stream: trio.abc.ReceiveStream, name: str) -> None:
        nonlocal total
        async for chunk in stream:
            total += len(chunk)
            output[name].extend(chunk[: KEEP - len(output[name])])

    async def watch(confined: Confined) -> None:
        nonlocal status
        status = await confined.wait()
        enough.set()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, dealer, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        async with Sandbox(folder, limits, read_only=read_only).open("127.0.0.1", port) as confined:
            uid = confined.uid
            with trio.move_on_after(wait_s):
                async with trio.open_nursery() as streams:
                    streams.start_soon(drain, confined.stdout, "stdout")
                    streams.start_soon(drain, confined.stderr, "stderr")
                    streams.start_soon(watch, confined)
                    await enough.wait()
                    if status is None:  # still running: end it here
                        streams.cancel_scope.cancel()
        with trio.fail_after(10):
            for done in read:
                await done.wait()
        nursery.cancel_scope.cancel()
    said = received.decode(errors="replace").splitlines()
    return Outcome(status, said, bytes(output["stdout"]), bytes(output["stderr"]), total, uid, processes_of(uid))


def world_readable(path: Path, text: str) -> Path:
    """A file every user may read (so only the sandbox's own rules keep an agent from it)."""
    path.write_text(text)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    return path
