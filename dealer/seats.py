"""The dealer's side of the wire: one listening socket and one connection per seat.

Reference behaviour kept (SPEC.md §2.1, §3.2; ``net.c`` ``getListenSocket``,
``getLine``):

* one listener per seat, ``SO_REUSEADDR``, backlog 8, closed after its single
  accept; ``TCP_NODELAY`` on the accepted socket;
* a "line" ends at ``\\n`` or after 4095 bytes (``READBUF_LEN`` 4096 minus the C
  string terminator), so longer input arrives as several lines; a bare ``\\n``
  ends a line; at end of input a partial line is still returned, and the *next*
  read reports the end.

We differ in one safe default: the listeners bind ``127.0.0.1`` unless the
caller names another host (the reference binds every interface).
"""

from __future__ import annotations

import math
import os

import trio

__all__ = ["MAX_LINE_BYTES", "SeatSetupError", "Seat", "open_listeners", "listener_port"]

MAX_LINE_BYTES = 4095
_BACKLOG = 8
_RECEIVE_BYTES = 65536


class SeatSetupError(Exception):
    """A listener could not be opened; ``str()`` is the reference's ERROR line."""


async def open_listeners(host: str, ports: tuple[int, ...]) -> list[trio.SocketListener]:
    """One listener per entry of ``ports`` (0 = the OS picks), in seat order."""
    listeners: list[trio.SocketListener] = []
    try:
        for index, port in enumerate(ports):
            try:
                listeners.append(await _listen(host, port))
            except OSError:
                raise SeatSetupError(f"ERROR: could not create listen socket for player {index + 1}") from None
    except BaseException:
        for listener in listeners:
            listener.socket.close()
        raise
    return listeners


async def _listen(host: str, port: int) -> trio.SocketListener:
    infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM, flags=trio.socket.AI_PASSIVE)
    family, type_, proto, _, address = infos[0]
    sock = trio.socket.socket(family, type_, proto)
    try:
        sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
        await sock.bind(address)
        sock.listen(_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


def listener_port(listener: trio.SocketListener) -> int:
    port: int = listener.socket.getsockname()[1]
    return port


class Seat:
    """An accepted agent connection with the reference's line framing."""

    __slots__ = ("index", "_stream", "_fd", "_buffer", "_eof")

    def __init__(self, index: int, stream: trio.SocketStream) -> None:
        self.index = index
        self._stream = stream
        self._fd = stream.socket.fileno()
        self._buffer = bytearray()
        self._eof = False
        stream.setsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY, True)

    async def send(self, data: bytes, *, timeout_s: float) -> None:
        """Write all of ``data``, giving up after ``timeout_s`` if the agent stops
        reading; raises ``trio.BrokenResourceError`` if it cannot be written.

        A state is small, so one plain non-blocking ``write`` nearly always takes
        it all, without a trip through trio's scheduler or a cancel scope; only
        the rest (a full socket buffer) waits through trio."""
        try:
            sent = os.write(self._fd, data)
        except BlockingIOError:
            sent = 0
        except OSError as error:
            raise trio.BrokenResourceError(f"could not write to seat {self.index + 1}: {error}") from error
        if sent < len(data):
            with trio.move_on_after(timeout_s) as scope:
                await self._stream.send_all(data[sent:])
            if scope.cancelled_caught:
                raise trio.BrokenResourceError(f"seat {self.index + 1} read nothing for {timeout_s} s")

    async def read_line(self, *, timeout_s: float = math.inf) -> bytes | None:
        """The next line including its ``\\n``, at most :data:`MAX_LINE_BYTES`;
        ``b""`` at end of input, ``None`` if no whole line came within ``timeout_s``
        (a partial line stays buffered). Raises ``trio.BrokenResourceError`` on
        a reset connection."""
        line = self._take_line()
        if line is not None:
            return line
        with trio.move_on_after(timeout_s):
            while line is None:
                data = await self._stream.receive_some(_RECEIVE_BYTES)
                if data:
                    self._buffer += data
                else:
                    self._eof = True
                line = self._take_line()
        return line

    def _take_line(self) -> bytes | None:
        buffer = self._buffer
        end = buffer.find(b"\n", 0, MAX_LINE_BYTES)
        if end >= 0:
            end += 1
        elif len(buffer) >= MAX_LINE_BYTES:
            end = MAX_LINE_BYTES
        elif not self._eof:
            return None
        else:
            end = len(buffer)
        line = bytes(buffer[:end])
        del buffer[:end]
        return line

    async def aclose(self) -> None:
        await self._stream.aclose()
