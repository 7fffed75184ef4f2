"""The dealer's side of the wire: listening sockets, the VERSION handshake that
claims a seat, and one connection per seat with the reference's line framing.

Reference behaviour kept (docs/protocol.md, Messages and The dealer's rules;
``net.c`` ``getListenSocket``, ``getLine``; ``dealer.c`` ``checkVersion``):

* one listener per seat, ``SO_REUSEADDR``, closed once its seat is taken;
  ``TCP_NODELAY`` on the seat's socket;
* a "line" ends at ``\\n`` or after :data:`LONGEST_LINE` bytes (the reference's
  :data:`READBUF_LEN` buffer less the C string terminator), so longer input
  arrives as several lines; a bare ``\\n`` ends a line; at end of input a partial
  line is still returned, and the *next* read reports the end;
* a version line is valid when ``sscanf(line, "VERSION:%u.%u.%u")`` reads three
  numbers, whatever they are (the caller warns about a version it does not speak).

Where we differ, and why:

* the listeners bind ``127.0.0.1`` unless the caller names another host (the
  reference binds every interface);
* a seat goes to the first connection that sends a valid version line, not to
  the first connection: the reference binds the seat on ``accept`` and then
  waits for ever for the version, so one idle connection (a port scanner, a
  stray ``nc``) hung it and the real agent was refused. Here the listener stays
  open; a connection is dropped if it sends anything else, closes, stays silent
  for the version timeout, or is the oldest of more than
  :data:`MAX_PENDING_PER_SEAT` connections still waiting to send one (so a flood
  holds a bounded number of sockets, and a real agent, which sends its version
  as it connects, gets through it). A well-behaved agent sees no difference;
* a seat may be given the one address its agent connects from
  (:class:`dealer.server.MatchConfig`'s ``peers``): a connection from any other
  is dropped at once, so a seat open to the network is not taken by a stranger;
* a seat may be given a secret key (``keys``), which its agent sends as a
  comment line before its version line (:func:`poker.protocol.key_line`;
  docs/protocol.md): a connection whose first line is not that key is dropped
  like any stray one. An address is no secret (everyone behind one NAT, on one
  host, or behind Docker's proxy shares it) and the port range is small; the
  key is what makes a seat its owner's. A comment line is what the protocol
  lets an agent send beyond its version, so an agent that sends it to a seat
  without a key is not refused either: the line is skipped;
* a listener may be a socket the caller bound beforehand (``sockets`` of
  :func:`open_listeners`): a port reserved for a seat stays bound from its
  reservation until the seat is taken, with no moment where another program
  could bind it and pose as the dealer;
* the backlog is :data:`_BACKLOG` instead of 8, so a burst of connections is
  queued rather than left retrying while the dealer drains it;
* a rejected version line is quoted escaped and cut (:func:`poker.excerpt.quote`),
  so a hostile line cannot put a terminal escape or kilobytes in the WARNING.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import os
import socket
from collections.abc import Sequence
from collections.abc import Callable
from typing import Final

import trio

from poker.excerpt import quote
from dealer._scan import scan_unsigned
from poker.protocol import KEY_PREFIX, READBUF_LEN, key_line

__all__ = [
    "LONGEST_LINE",
    "MAX_PENDING_PER_SEAT",
    "SeatSetupError",
    "Seat",
    "open_listeners",
    "listener_port",
    "claim_seat",
    "c_string",
    "version_numbers",
    "Address",
    "peer_address",
    "Peers",
]

#: The most bytes one line from an agent can have, its ``\n`` included; longer input is split.
LONGEST_LINE: Final = READBUF_LEN - 1
#: Connections of one seat allowed to wait for their version line at once.
MAX_PENDING_PER_SEAT: Final = 16
_BACKLOG: Final = 128

_RECEIVE_BYTES: Final = 65536

#: Called for each dropped connection with the seat index, the peer and why.
DropReport = Callable[[int, str, str], None]
#: An IP address, as a seat's only allowed peer.
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: The addresses a seat takes connections from: one, or a few (its agent's and a relay's).
Peers = Address | frozenset[Address]


class SeatSetupError(Exception):
    """A listener could not be opened; ``str()`` is the ERROR line."""


async def open_listeners(
    host: str, ports: tuple[int, ...], sockets: Sequence[socket.socket | None] = ()
) -> list[trio.SocketListener]:
    """One listener per entry of ``ports`` (0 = the OS picks), in seat order;
    where ``sockets`` has a socket for a seat, that socket, already bound by
    the caller (its reservation of the port), is made to listen instead, and
    from then on belongs to the listener (closing one closes the other)."""
    listeners: list[trio.SocketListener] = []
    try:
        for index, port in enumerate(ports):
            bound = sockets[index] if index < len(sockets) else None
            try:
                listeners.append(_listen_on(bound) if bound is not None else await _listen(host, port))
            except OSError as error:
                reason = error.strerror or str(error)
                raise SeatSetupError(
                    f"ERROR: could not create listen socket for player {index + 1} on port {port}: {reason}"
                ) from None
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


def _listen_on(bound: socket.socket) -> trio.SocketListener:
    """A listener on a socket the caller bound (never closed and bound again:
    that would leave a moment for another program to bind the port)."""
    port = bound.getsockname()[1]
    try:
        bound.setblocking(False)
        bound.listen(_BACKLOG)
    except OSError as error:
        raise OSError(error.errno, f"{error.strerror or error} (the reserved socket of port {port})") from None
    return trio.SocketListener(trio.socket.from_stdlib_socket(bound))


def listener_port(listener: trio.SocketListener) -> int:
    port: int = listener.socket.getsockname()[1]
    return port


def c_string(line: bytes) -> bytes:
    """The line as C sees it: up to the first NUL."""
    end = line.find(b"\0")
    return line if end < 0 else line[:end]


def version_numbers(line: bytes) -> tuple[int, int, int] | None:
    """The three numbers ``sscanf(line, "VERSION:%u.%u.%u")`` reads, or ``None``
    if it reads fewer (the line is not a version line)."""
    text = c_string(line).decode("latin-1")
    if not text.startswith("VERSION:"):
        return None
    numbers: list[int] = []
    pos = len("VERSION:")
    for separator in ("", ".", "."):
        if text[pos : pos + len(separator)] != separator:
            return None
        scanned = scan_unsigned(text, 32, pos + len(separator))
        if scanned is None:
            return None
        numbers.append(scanned[0])
        pos = scanned[1]
    return numbers[0], numbers[1], numbers[2]


class Seat:
    """An agent connection with the reference's line framing."""

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
        """The next line including its ``\\n``, at most :data:`LONGEST_LINE` bytes;
        ``b""`` at end of input, ``None`` if no whole line came within ``timeout_s``
        (a partial line stays buffered). Raises ``trio.BrokenResourceError`` on
        a reset connection.

        What has already arrived is read with a plain non-blocking ``read``:
        an answer is often there by the time the dealer looks, and then neither
        trio's scheduler nor a cancel scope is needed. This does not yield to
        other tasks; the caller makes its own scheduling points."""
        line = self.poll_line()
        if line is not None:
            return line
        return await self.wait_line(timeout_s=timeout_s)

    async def wait_line(self, *, timeout_s: float) -> bytes | None:
        """:meth:`read_line` for a caller that has just seen :meth:`poll_line`
        return ``None``: it waits at once, without reading again first."""
        line = None
        with trio.move_on_after(timeout_s):
            while line is None:
                await trio.lowlevel.wait_readable(self._fd)
                if self._receive_nowait():
                    line = self._take_line()
        return line

    def poll_line(self) -> bytes | None:
        """The next line if it has arrived, else ``None``, without waiting: what
        :meth:`read_line` returns at once, for a caller with something to do
        before it waits."""
        line = self._take_line()
        if line is None and self._receive_nowait():
            line = self._take_line()
        return line

    def _receive_nowait(self) -> bool:
        """Buffer what has arrived (noting the end of input); False if nothing had."""
        try:
            data = os.read(self._fd, _RECEIVE_BYTES)
        except BlockingIOError:
            return False
        except OSError as error:
            raise trio.BrokenResourceError(f"could not read from seat {self.index + 1}: {error}") from error
        if data:
            self._buffer += data
        else:
            self._eof = True
        return True

    def _take_line(self) -> bytes | None:
        buffer = self._buffer
        end = buffer.find(b"\n", 0, LONGEST_LINE)
        if end >= 0:
            end += 1
        elif len(buffer) >= LONGEST_LINE:
            end = LONGEST_LINE
        elif not self._eof:
            return None
        else:
            end = len(buffer)
        line = bytes(buffer[:end])
        del buffer[:end]
        return line

    async def aclose(self) -> None:
        await self._stream.aclose()


def peer_address(text: str) -> Address:
    """``text`` as an address a peer is compared with; an IPv4 address mapped
    into IPv6 (what a dual-stack listener sees) is the IPv4 address.

    Raises:
        ValueError: ``text`` is not an IP address.
    """
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


async def claim_seat(
    listener: trio.SocketListener,
    index: int,
    *,
    version_timeout_s: float,
    dropped: DropReport,
    peer: Peers | None = None,
    key: str | None = None,
) -> tuple[Seat, tuple[int, int, int]]:
    """Accept connections on ``listener`` until one sends a valid version line;
    returns that connection as seat ``index`` with its version numbers. Every
    other connection is closed, and reported to ``dropped`` unless the wait was
    cancelled (see the module notes); with ``peer`` (an address or a set of
    them), so is every connection from another address, and with ``key``, every connection whose first line
    is not :func:`key_line` of it (the key itself is never reported). Raises
    ``OSError`` if accepting fails (the reference's "could not connect"). It
    waits for as long as it takes: bound it with a cancel scope."""
    claim = _Claim(index, version_timeout_s, dropped, peer, key)
    try:
        async with trio.open_nursery() as nursery:
            claim.nursery = nursery
            nursery.start_soon(claim.accept, listener)
    except BaseException:
        if claim.winner is not None:  # won just as the caller gave up
            with trio.CancelScope(shield=True):
                await claim.winner[0].aclose()
        raise
    if claim.error is not None:
        raise claim.error
    assert claim.winner is not None  # the nursery ends early only when the seat is won
    return claim.winner


class _Claim:
    """The connections competing for one seat."""

    def __init__(
        self, index: int, version_timeout_s: float, dropped: DropReport, peer: Peers | None, key: str | None
    ) -> None:
        self.index = index
        self.version_timeout_s = version_timeout_s
        self.dropped = dropped
        self.peers = None if peer is None else peer if isinstance(peer, frozenset) else frozenset((peer,))
        self.key = None if key is None else key_line(key).rstrip(b"\r\n")
        self.nursery: trio.Nursery | None = None
        self.pending: dict[trio.CancelScope, None] = {}  # handshakes under way, oldest first
        self.evicted: dict[trio.CancelScope, str] = {}  # handshakes cancelled to make room -> why
        self.winner: tuple[Seat, tuple[int, int, int]] | None = None
        self.error: OSError | None = None

    async def accept(self, listener: trio.SocketListener) -> None:
        assert self.nursery is not None
        while True:
            try:
                stream = await listener.accept()
            except OSError as error:
                self.error = error
                self.nursery.cancel_scope.cancel()
                return
            if len(self.pending) >= MAX_PENDING_PER_SEAT:
                oldest = next(iter(self.pending))
                del self.pending[oldest]
                self.evicted[oldest] = f"more than {MAX_PENDING_PER_SEAT} connections waiting to send a version"
                oldest.cancel()
            scope = trio.CancelScope()
            self.pending[scope] = None
            self.nursery.start_soon(self.handshake, stream, scope)

    def allowed(self, host: str) -> bool:
        """Whether a connection from ``host`` may compete for the seat."""
        if self.peers is None:
            return True
        try:
            return peer_address(host) in self.peers
        except ValueError:  # no address (a scoped IPv6 one, or none at all): not the peer
            return False

    @staticmethod
    async def next_line(seat: Seat, deadline: float) -> bytes | None:
        """The seat's next line by ``deadline``: ``None`` if none came, ``b""``
        if the connection ended or failed."""
        try:
            return await seat.read_line(timeout_s=max(deadline - trio.current_time(), 0.0))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return b""

    async def handshake(self, stream: trio.SocketStream, scope: trio.CancelScope) -> None:
        try:
            host, port = stream.socket.getpeername()[:2]
            peer = f"{host}:{port}"
        except OSError:
            host, peer = "", "an unknown peer"
        reason = ""
        won = False
        try:
            with scope:
                if not self.allowed(host):
                    assert self.peers is not None  # only they are allowed
                    reason = f"only {' or '.join(sorted(str(address) for address in self.peers))} may take this seat"
                    return
                try:
                    seat = Seat(self.index, stream)
                except OSError:
                    reason = "closed without a version line"
                    return
                deadline = trio.current_time() + self.version_timeout_s
                line = await self.next_line(seat, deadline)
                if self.key is not None and line:
                    if not hmac.compare_digest(line.rstrip(b"\r\n"), self.key):
                        reason = "no seat key" if not line.startswith(KEY_PREFIX) else "a wrong seat key"
                        reason += " (this seat needs its #KEY line before the version line)"
                        return
                    line = await self.next_line(seat, deadline)
                elif line and line.startswith(KEY_PREFIX):  # a key for a seat that needs none: a comment
                    line = await self.next_line(seat, deadline)
                if line is None:
                    reason = f"no version line within {self.version_timeout_s:g} s"
                elif not line:
                    reason = "closed without a version line"
                elif (numbers := version_numbers(line)) is None:
                    reason = f"invalid version string {quote(c_string(line))}"
                elif self.winner is None:
                    self.winner = seat, numbers
                    won = True
                    assert self.nursery is not None
                    self.nursery.cancel_scope.cancel()
        finally:  # also when the whole claim is cancelled: the seat is taken, or the caller gave up
            if not won:
                self.pending.pop(scope, None)
                reason = self.evicted.pop(scope, reason) or ("the seat is taken" if self.winner is not None else "")
                with trio.CancelScope(shield=True):
                    await stream.aclose()
                if reason:  # none when the caller gave up waiting
                    self.dropped(self.index, peer, reason)
