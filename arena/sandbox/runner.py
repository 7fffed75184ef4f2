"""The trio side of the sandbox: :class:`Sandbox` starts a submitted agent
confined (:mod:`arena.sandbox.launch` does the confining, as root), relays
its one port to its dealer, and when the match is over ends every process it
started, before :meth:`Sandbox.open` returns. docs/sandbox.md has the threat
model: what this guards and what it does not.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import trio

from arena.sandbox import landlock, seccomp

__all__ = ["Limits", "Sandbox", "Confined", "SandboxError", "unavailable", "MAX_CONNECTIONS", "STARTME"]

#: The ACPC convention: the agent's folder holds this, run as ``startme.sh HOST PORT``.
STARTME: Final = "startme.sh"
#: Connections the relay takes from one agent over a match (an ACPC agent makes one).
MAX_CONNECTIONS: Final = 4
#: How long the relay may take, once the agent has ended, to pass on what it sent last.
DRAIN_S: Final = 2.0
#: How long the relay holds back the end of an agent's connection from the dealer
#: while the agent lives on (see :func:`_pump`).
HOLD_EOF_S: Final = 1.0
_MIB: Final = 1 << 20


class SandboxError(Exception):
    """The agent cannot be run confined (the machine, its folder, or the launch): it is not run at all."""


@dataclass(frozen=True)
class Limits:
    """What one sandboxed agent may use. ``cpu_s``, ``memory`` (bytes of
    address space) and ``file_size`` are per process, ``procs`` counts every
    process and thread the agent has at once, ``scratch`` is the size of its
    private writable folder (``$HOME`` and ``$TMPDIR``), ``open_files`` per
    process.

    Raises:
        ValueError: a limit below 1.
    """

    cpu_s: int = 600
    memory: int = 2048 * _MIB
    procs: int = 64
    file_size: int = 64 * _MIB
    scratch: int = 64 * _MIB
    open_files: int = 256

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) < 1:
                raise ValueError(f"the sandbox's {field.name} must be at least 1, not {getattr(self, field.name)}")


def unavailable() -> str | None:
    """Why submitted agents cannot be confined on this machine (``None``:
    they can), from what the kernel says and a trial of the launch's first
    steps (:func:`arena.sandbox.launch.probe`, once per process). Each launch
    still checks every step and refuses on any failure."""
    if sys.platform != "linux":
        return f"the sandbox needs Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return "the sandbox needs root (a uid of its own for every agent, and namespaces): run arena as root"
    abi = landlock.abi_version()
    if abi < landlock.MIN_ABI:
        return f"the sandbox needs Landlock ABI {landlock.MIN_ABI} (Linux 6.12 or later, landlock among the LSMs); this kernel has {abi}"
    if not seccomp.supported():
        return "the sandbox has no seccomp filter for this machine's architecture"
    return _probe()


@functools.cache
def _probe() -> str | None:
    argv = [sys.executable, "-I", "-m", "arena.sandbox.launch", "--probe"]
    probed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if probed.returncode == 0:
        return None
    said = (probed.stdout.strip() or probed.stderr.strip() or f"status {probed.returncode}").splitlines()[-1]
    return f"{said} (the sandbox needs mount, PID and network namespaces: a container must allow them)"


def _readable_by_all(path: Path) -> str | None:
    """Why the agent's own uid could not reach ``path`` (every folder above it
    searchable by all, the path itself readable by all), ``None`` if it can."""
    for folder in reversed(path.parents):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return f"{folder} is not searchable by every user"
    mode = path.stat().st_mode
    if not mode & stat.S_IROTH or (stat.S_ISDIR(mode) and not mode & stat.S_IXOTH):
        return f"{path} is not readable by every user"
    return None


@dataclass
class Confined:
    """A running sandboxed agent (from :meth:`Sandbox.open`): its output
    streams, its uid (no other process has it) and its exit status once
    :meth:`wait` returns (128 + N: killed by signal N; 125: the launch failed)."""

    stdout: trio.abc.ReceiveStream
    stderr: trio.abc.ReceiveStream
    uid: int
    _process: trio.Process
    connections: int = 0
    #: per connection: set once all the agent sent on it has reached the dealer (or never can)
    delivered: list[trio.Event] = dataclasses.field(default_factory=list)
    #: set once the agent has ended, and everything it started with it
    ended: trio.Event = dataclasses.field(default_factory=trio.Event)

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def wait(self) -> int:
        """Wait until the agent's first process has ended, and with it every other."""
        return await self._process.wait()

    async def drained(self) -> None:
        """Wait until the relay has passed on to the dealer all the agent sent."""
        for delivered in self.delivered:
            await delivered.wait()


class Sandbox:
    """A submitted agent's folder (with a ``startme.sh``) and its limits.
    ``read_only`` names more folders the agent may read (an interpreter's
    packages); ``after`` goes after ``HOST PORT`` on its command line.

    Raises:
        SandboxError: the folder or its ``startme.sh`` cannot be reached by the agent's uid.
    """

    def __init__(
        self, agent_dir: Path, limits: Limits = Limits(), *, read_only: Sequence[Path] = (), after: Sequence[str] = ()
    ) -> None:
        self.agent_dir = agent_dir.resolve()
        self.limits = limits
        self.read_only = tuple(path.resolve() for path in read_only)
        self.after = tuple(after)
        startme = self.agent_dir / STARTME
        if not startme.is_file():
            raise SandboxError(f"{self.agent_dir} has no {STARTME}")
        for path in (self.agent_dir, startme):
            if why := _readable_by_all(path):
                raise SandboxError(f"the agent runs as a uid of its own, and {why}")

    @asynccontextmanager
    async def open(self, host: str, port: int, *, greeting: bytes = b"") -> AsyncIterator[Confined]:
        """Start the agent confined, its one port relayed to the dealer at
        ``host:port`` (``greeting`` sent to the dealer first on each connection,
        before anything of the agent's: its seat's key line); when the block
        ends, end it (if it has not) and with it every process it started,
        before returning.

        Raises:
            SandboxError: the confinement could not be set up (nothing of the agent ran).
        """
        if why := await trio.to_thread.run_sync(unavailable):  # the first time, a probe in a process of its own
            raise SandboxError(why)
        with tempfile.TemporaryDirectory(prefix="arena-sandbox-") as scratch:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            config = {
                "agent_dir": str(self.agent_dir),
                "startme": str(self.agent_dir / STARTME),
                "after": list(self.after),
                "port": port,
                "scratch": scratch,
                "read_only": [str(path) for path in self.read_only],
                "limits": dataclasses.asdict(self.limits),
                "control": theirs.fileno(),
            }
            argv = [sys.executable, "-I", "-m", "arena.sandbox.launch", json.dumps(config)]
            try:
                process = await trio.lowlevel.open_process(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    pass_fds=(theirs.fileno(),), start_new_session=True,
                )
            finally:
                theirs.close()
            assert process.stdout is not None and process.stderr is not None  # both are pipes
            init: int | None = None
            try:
                with ours:
                    init, uid, listener = await _handshake(trio.socket.from_stdlib_socket(ours))
                confined = Confined(process.stdout, process.stderr, uid, process)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_watch, confined)
                    nursery.start_soon(_relay, listener, host, port, greeting, confined)
                    try:
                        yield confined
                    finally:
                        if confined.returncode is not None:  # it ended on its own: deliver what it said last
                            with trio.move_on_after(DRAIN_S) as draining:
                                draining.shield = True
                                await confined.drained()
                        nursery.cancel_scope.cancel()
            finally:
                with trio.CancelScope(shield=True):
                    await _end(process, init)


async def _handshake(control: trio.socket.SocketType) -> tuple[int, int, trio.socket.SocketType]:
    """Read the launcher's lines until EOF (the agent's ``execve`` closed the
    last copy of the control socket): the agent's uid, the listening socket
    and a pidfd of the namespace's init, or an error."""
    data, fds = b"", []
    while True:
        chunk, ancillary, _, _ = await control.recvmsg(4096, socket.CMSG_SPACE(4 * 4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, len(payload) - 3, 4)]
        if not chunk:
            break
        data += chunk
    messages = [json.loads(line) for line in data.splitlines() if line.strip()]
    errors = [message["error"] for message in messages if "error" in message]
    ready = [message for message in messages if "uid" in message]
    if errors or not ready or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        raise SandboxError(errors[0] if errors else "the sandbox's launcher ended without starting the agent")
    listener, init = fds
    return init, ready[0]["uid"], trio.socket.from_stdlib_socket(socket.socket(fileno=listener))


async def _relay(listener: trio.socket.SocketType, host: str, port: int, greeting: bytes, confined: Confined) -> None:
    """Accept the agent's connections on its one port (up to :data:`MAX_CONNECTIONS`)
    and pipe each to the dealer, both ways."""
    with listener:
        async with trio.open_nursery() as nursery:
            while confined.connections < MAX_CONNECTIONS:
                inside, _ = await listener.accept()
                confined.connections += 1
                nursery.start_soon(_pipe_to_dealer, trio.SocketStream(inside), host, port, greeting, confined)


async def _pipe_to_dealer(inside: trio.SocketStream, host: str, port: int, greeting: bytes, confined: Confined) -> None:
    delivered = trio.Event()
    confined.delivered.append(delivered)
    try:
        async with inside:
            try:
                outside = await trio.open_tcp_stream(host, port)
                if greeting:
                    await outside.send_all(greeting)
            except (OSError, trio.BrokenResourceError):
                return  # the agent sees its connection close, as if the dealer were gone
            async with outside, trio.open_nursery() as nursery:
                nursery.start_soon(_pump, inside, outside, delivered, confined.ended)
                nursery.start_soon(_pump, outside, inside, trio.Event())
    finally:
        delivered.set()


async def _watch(confined: Confined) -> None:
    await confined.wait()
    confined.ended.set()


async def _pump(source: trio.SocketStream, sink: trio.SocketStream, done: trio.Event, hold: trio.Event | None = None) -> None:
    """Copy ``source`` to ``sink`` until its end, which ``sink`` then gets too;
    set ``done``. With ``hold`` (the agent's side to the dealer's), the end
    waits for it to be set, for :data:`HOLD_EOF_S` at most: an agent that
    crashes closes its connection as it dies, a moment before its sandbox is
    gone, and the dealer, seeing the end first, would abort and be done before
    the seat runner saw the agent end while it played (then blamed on its exit
    status and last words, as a command is)."""
    try:
        async for chunk in source:
            await sink.send_all(chunk)
        if hold is not None:
            with trio.move_on_after(HOLD_EOF_S):
                await hold.wait()
        await sink.send_eof()
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        done.set()


async def _end(process: trio.Process, init: int | None) -> None:
    """Kill the namespace's init through its pidfd (the kernel then kills the
    rest), or the launcher when there is none, and wait for the launcher: it
    ends only once init, and so every process of the agent, is gone."""
    if init is None:
        process.kill()
    else:
        try:
            signal.pidfd_send_signal(init, signal.SIGKILL)
        except ProcessLookupError:  # init has ended already
            pass
        finally:
            os.close(init)
    await process.wait()
