"""One ACPC match over TCP, as the reference ``dealer`` plays it (docs/protocol.md).

:func:`serve_match` locks the match name, binds one listener per seat, opens
the files, prints the ports line, gives each seat to the first connection that
sends a VERSION line, optionally replays a ``.tlog``, then plays the hands:

1. for every state of a hand, send each seat its view and time the acting seat
   from the end of that write;
2. read only from the acting seat until a response is acceptable
   (docs/protocol.md, The dealer's rules: comments skipped, unparsable or stale
   states warned about and skipped, unreadable or illegal actions turned into calls,
   no-limit sizes clamped);
3. apply the action (and log it to the ``.tlog``); at the end of the hand write
   the STATE line (flushed), the hand record, and send the final views;
4. rotate the button unless seats are fixed; deal the next hand.

Every stderr text, ``.log`` and ``.tlog`` byte is the reference's. A match
aborts (exit status 1, no SCORE) on a timeout or a disconnect, keeping every
finished hand on disk.

Departures, none visible to a well-behaved agent:

* a match name is locked (``<matchName>.lock``) and the files are opened after
  the listeners, so a second dealer with the same name, or on a busy port,
  fails before it truncates anything;
* a seat is not bound to the first connection but to the first that sends a
  valid version line; other connections are dropped with a WARNING, and
  ``start_timeout`` bounds the whole wait (:mod:`dealer.seats`);
* the acting seat's message is written first (each seat still gets its own
  messages in the reference's order, and stderr echoes them in seat order);
* a seat that stops reading for ``t_response`` aborts the match ("could not
  send state") where the reference would block for ever;
* the clock of a response runs from the state's send whatever lines come, so a
  seat that sends comment lines instead of an answer is timed out (the
  reference waits ``t_response`` afresh for each line and never charges a
  comment: ``#`` once a second stalled it for ever); the wait also ends when
  the seat's hand or match budget runs out, not only at ``t_response``
  (:mod:`dealer.budget`);
* ``match_limit_s`` (an extension, default none) caps the whole match's wall
  clock, :func:`dealer.budget.match_deadline_s` says how much a legitimate
  match can need, and a match past it aborts ("the match ran past its time
  limit") with its finished hands kept;
* agents' lines are echoed to stderr with every byte but printable ASCII
  escaped (:mod:`dealer._escape`): the reference copies them raw, terminal
  escape sequences included;
* the echoes held for one write are bounded (:data:`_ECHOES_HELD`), so a flood
  of comment lines is written as it is read, not kept in memory;
* ``strict`` (the protocol document's recommendation) aborts on the first bad
  response instead of repairing it;
* ``peers`` gives a seat the one address its agent may connect from (or a
  few: its agent's and a relay's), for a seat open to the network for
  someone's own agent; connections from any other are dropped with a WARNING;
* ``keys`` gives a seat a secret its agent sends in a ``#KEY:`` line before
  its version line (:func:`poker.protocol.key_line`); a connection without it is
  dropped with a WARNING, so a seat is its owner's whoever shares the address;
* ``sockets`` hands the dealer a seat's port already bound (a reservation
  held since the match was asked for), so that no other program can bind it
  between the reservation and the dealer's listening.

Lines from agents are bytes: they are parsed as Latin-1 (so only ASCII can
match) up to the first NUL, as the C string would be.

Matches share nothing, so one process can serve many at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import math
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO, TypeVar

import trio

from dealer._escape import escape_line
from dealer.budget import TimeBudgets, TimeLimits, match_deadline_s
from dealer.log import (
    LogError,
    MatchLog,
    TransactionLog,
    format_header,
    format_score,
    format_timestamp,
    format_transaction,
    parse_transaction,
)
from dealer.lock import MatchInUseError, MatchLock
from dealer.messages import HandTexts
from dealer.records import HandRecord, MatchHeader, RecordWriter, open_event_log
from dealer.seats import Peers, Seat, SeatSetupError, c_string, claim_seat, listener_port, open_listeners
from poker.deal import Dealer
from poker.hand_rank import hand_values
from poker.gamedef import Game
from poker.protocol import ProtocolError, format_state_line, parse_action, parse_match_state, view_of
from poker.state import CALL, Action, State

__all__ = ["MatchConfig", "MatchResult", "serve_match"]

_T = TypeVar("_T")
_MAJOR, _MINOR = 2, 0
_DROPS_REPORTED = 10  # dropped connections reported one by one; a flood is summed up in one line
#: Echoes held before they are written at once: a hand's worth, so a normal
#: hand costs one write, and a flood of comments is written as it comes.
_ECHOES_HELD = 256
#: A write to the match's files failing so (a full disk or quota, a file too
#: large, a device error) aborts the match with the reason; its finished hands
#: are on disk (each flushed as it ended).
_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})
_BAD_STATE = "WARNING: bad state format in response"
_UNREQUESTED = "WARNING: ignoring un-requested response"
_BAD_FORMAT = "WARNING: bad action format in response, changed to call"


@dataclass(frozen=True)
class MatchConfig:
    """Everything the reference command line sets, plus our extensions
    (``host``, ``log_dir``, ``records``, ``strict``, ``match_limit_s``,
    ``peers``, ``keys``, ``sockets``). Times
    are milliseconds but for ``match_limit_s``, a cap on the whole match's wall
    clock from the start of :func:`serve_match` (see
    :func:`dealer.budget.match_deadline_s` for one derived from the limits)."""

    match_name: str  # file prefix: <log_dir>/<match_name>.log / .tlog
    game: Game
    game_path: str  # as given on the command line (printed in the log header)
    num_hands: int
    seed: int
    names: tuple[str, ...]  # seat order
    ports: tuple[int, ...] = ()  # 0 or missing = OS picks
    host: str = "127.0.0.1"
    fixed_seats: bool = False
    write_log: bool = True
    write_tlog: bool = False
    append: bool = False
    quiet: bool = False
    t_response_ms: int = 600000
    t_hand_ms: int = 600000
    t_per_hand_ms: int = 7000
    start_timeout_ms: int = -1
    log_dir: Path = Path(".")
    records: bool = True  # msgpack hand records + structlog JSON events alongside the ACPC logs
    strict: bool = False  # abort on the first invalid response (extension)
    match_limit_s: float = math.inf  # abort a match still running after this long (extension)
    peers: tuple[Peers | None, ...] = ()  # per seat, the only addresses it accepts (None or missing: any)
    #: Per seat, the secret its agent's ``#KEY:`` line must carry (None or missing: no key); never printed.
    keys: tuple[str | None, ...] = dataclasses.field(default=(), repr=False)
    #: Per seat, a socket already bound to its port to listen on (None or missing: bind ``ports``);
    #: the dealer closes it once the seat is taken, as it closes its own listeners.
    sockets: tuple[socket.socket | None, ...] = dataclasses.field(default=(), repr=False, compare=False)

    def path(self, suffix: str) -> Path:
        """``<log_dir>/<match_name><suffix>``."""
        return Path(self.log_dir) / f"{self.match_name}{suffix}"

    @property
    def limits(self) -> TimeLimits:
        """The four reference time options, as :func:`dealer.budget.match_deadline_s` takes them."""
        return TimeLimits(self.t_response_ms, self.t_hand_ms, self.t_per_hand_ms, self.start_timeout_ms)

    def with_match_deadline(self) -> MatchConfig:
        """This match, capped at the most its own limits allow
        (:func:`dealer.budget.match_deadline_s`): what a tournament or a hosted
        table, which nobody watches, should serve. No cap without a start timeout."""
        limit_s = match_deadline_s(self.limits, num_hands=self.num_hands, num_seats=self.game.num_players)
        return dataclasses.replace(self, match_limit_s=limit_s)


@dataclass(frozen=True)
class MatchResult:
    totals: tuple[float, ...]  # per SEAT, chips
    hands_played: int  # finished hands, replayed ones included
    aborted: str | None  # the ERROR text if the match aborted
    exit_status: int  # 0 ok, 1 abort (reference)


class _Abort(Exception):
    """Ends the match; ``output`` is exactly what goes to stderr."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output


def _now_us() -> int:
    return time.time_ns() // 1000


def _open(what: str, path: Path, opener: Callable[[Path], _T]) -> _T:
    try:
        return opener(path)
    except OSError:
        raise _Abort(f"ERROR: could not open {what} {path}\n") from None


def _lines(text: str) -> list[str]:
    """Split after each ``\\n`` only (``fgets``), keeping the newlines."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


async def serve_match(
    config: MatchConfig,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> MatchResult:
    """Play one match and return its result; ``stdout``/``stderr`` default to
    the process's. Calls ``task_status.started(ports)`` once the listeners are
    bound and the ports line is printed. If the files or listeners cannot be
    opened, the ERROR is printed and an aborted result returned without calling
    ``started`` (so ``nursery.start`` raises ``RuntimeError``)."""
    match = _Match(config, stdout or sys.stdout, stderr or sys.stderr)
    return await match.serve(task_status)


class _Match:
    def __init__(self, config: MatchConfig, out: TextIO, err: TextIO) -> None:
        self.config = config
        self.game = config.game
        self.n = config.game.num_players
        self.out = out
        self.err = err
        self.quiet = config.quiet
        self.log: MatchLog | None = None
        self.tlog: TransactionLog | None = None
        self.records: RecordWriter | None = None
        self.events: Any = None
        self.events_file: Any = None
        self.seats: list[Seat] = []
        # The order to write a state in, by acting seat: that seat first, then the others.
        self.orders = [(first, *(seat for seat in range(self.n) if seat != first)) for first in range(self.n)]
        self.drops = 0  # connections turned away while the seats were taken
        self.budgets = TimeBudgets(
            self.n,
            response_us=config.t_response_ms * 1000,
            hand_us=config.t_hand_ms * 1000,
            match_us=config.t_per_hand_ms * 1000 * config.num_hands,
        )
        self.totals = [0.0] * self.n
        self.dealer = Dealer(config.game, seed=config.seed)
        self.hand_id = 0
        self.player0_seat = 0
        self.deal = self.dealer.next_hand()
        self.state = State(config.game)
        self.texts = HandTexts(config.game, self.deal, 0)
        self.last_send_us = 0
        # TO/FROM lines held for stderr until flush_echoes(): written one by
        # one they cost a system call each, about twenty a hand.
        self.echoes: list[str] = []

    # -- output ------------------------------------------------------------------

    def write_err(self, text: str) -> None:
        """Write ``text`` to stderr now, after any echo still held."""
        self.flush_echoes()
        self._write_err(text)

    def flush_echoes(self) -> None:
        """Write the echoes held, in order. Called at the end of every hand,
        before any wait for an agent and before any other stderr text, so
        stderr reads as it did and is never more than a hand behind."""
        if not self.echoes:
            return
        text = "".join(self.echoes)
        self.echoes.clear()
        self._write_err(text)

    def _write_err(self, text: str) -> None:
        try:
            try:
                self.err.write(text)
            except UnicodeEncodeError:
                self.err.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
        except OSError as error:  # stderr a file on a full disk: the match's result still says why it ended
            if error.errno not in _WRITE_ERRORS:
                raise

    def warn(self, seat: Seat, text: str, line: bytes) -> None:
        self.write_err(text + "\n")
        if self.events is not None:
            self.events.warning("response", seat=seat.index, text=text, line=line[:200].decode("latin-1"))
        if self.config.strict:
            raise _Abort(f"ERROR: strict mode: seat {seat.index + 1} sent an invalid response\n")

    # -- setup -------------------------------------------------------------------

    def open_files(self) -> None:
        """Open the files the config asks for (``w``, or ``a`` with ``append``).
        The reference opens them before it listens; we do after, so a dealer
        that cannot listen leaves any files of that name untouched."""
        config, append = self.config, self.config.append
        if config.write_log:
            self.log = _open("log file", config.path(".log"), lambda path: MatchLog(path, append=append))
        if config.write_tlog:
            self.tlog = _open("transaction file", config.path(".tlog"), lambda path: TransactionLog(path, append=append))
        if config.records:
            self.records = _open("hand records file", config.path(".hands.msgpack"), lambda path: RecordWriter(path, append=append))
            self.events, self.events_file = _open(
                "events file",
                config.path(".events.jsonl"),
                lambda path: open_event_log(path, append=append, match_name=config.match_name),
            )

    def close_files(self) -> None:
        """Close every file; one that cannot be (a full disk) is left: every
        line and record was flushed as it was written, so what a failing close
        loses was a failed write, which already aborted the match and said why."""
        for file in (self.log, self.tlog, self.records, self.events_file):
            if file is not None:
                with contextlib.suppress(OSError):
                    file.close()

    async def serve(self, task_status: trio.TaskStatus[tuple[int, ...]]) -> MatchResult:
        """Lock the match name, listen, open the files, announce, take the seats,
        play, all within ``match_limit_s``. Nothing is written before the lock
        is held and the ports are open, so a dealer that cannot start leaves a
        running match's files alone."""
        config = self.config
        lock: MatchLock | None = None
        cap = trio.CancelScope(deadline=trio.current_time() + config.match_limit_s)
        over_time = _Abort(f"ERROR: the match ran past its time limit of {config.match_limit_s:.1f} seconds\n")
        try:
            with cap:
                lock = self.lock()
                ports = config.ports[: self.n] + (0,) * (self.n - len(config.ports[: self.n]))
                try:
                    listeners = await open_listeners(config.host, ports, config.sockets)
                except SeatSetupError as error:
                    raise _Abort(f"{error}\n") from None
                try:
                    self.open_files()
                    bound = tuple(listener_port(listener) for listener in listeners)
                    self.announce(bound)
                    task_status.started(bound)
                    await self.accept(listeners)
                finally:
                    for listener in listeners:
                        listener.socket.close()
                try:
                    await self.play()
                except OSError as error:
                    if error.errno not in _WRITE_ERRORS:
                        raise
                    raise _Abort(f"ERROR: could not write the match's files: {error.strerror}\n") from None
            if cap.cancelled_caught:
                raise over_time
        except _Abort as abort:
            # What the cap cut short (the wait for the seats) may have had its own say first.
            return self.aborted(over_time if cap.cancel_called else abort)
        finally:
            self.flush_echoes()
            with trio.CancelScope(shield=True):
                for seat in self.seats:
                    await seat.aclose()
            self.close_files()
            if lock is not None:
                lock.release()
        return MatchResult(tuple(self.totals), self.hand_id, None, 0)

    def lock(self) -> MatchLock | None:
        """Hold ``<matchName>.lock`` while the match writes files (none without files)."""
        config = self.config
        if not (config.write_log or config.write_tlog or config.records):
            return None
        path = config.path(".lock")
        try:
            return MatchLock(path)
        except MatchInUseError as error:
            raise _Abort(
                f"ERROR: match {config.match_name} is being played by another dealer"
                f" (process {error.holder or '?'} holds {path})\n"
            ) from None
        except OSError as error:
            raise _Abort(f"ERROR: could not open lock file {path}: {error.strerror or error}\n") from None

    def announce(self, ports: tuple[int, ...]) -> None:
        """The ports line on stdout; the header on stderr and in the log."""
        config = self.config
        self.out.write(" ".join(str(port) for port in ports) + "\n")
        self.out.flush()
        header = format_header(
            config.match_name,
            config.game_path,
            config.num_hands,
            config.seed,
            t_response_ms=config.t_response_ms,
            t_hand_ms=config.t_hand_ms,
            t_per_hand_ms=self.budgets.match_us // config.num_hands // 1000,
        )
        self.write_err(header)
        if self.log is not None:
            self.log.write(header)
        if self.records is not None:
            self.records.write(
                MatchHeader(
                    config.match_name, config.game, config.game_path, config.num_hands, config.seed,
                    config.names, config.fixed_seats,
                )
            )
        if self.events is not None:
            self.events.info("listening", ports=list(ports), host=config.host, names=list(config.names))

    def aborted(self, abort: _Abort) -> MatchResult:
        self.write_err(abort.output)
        reason = abort.output.rstrip("\n")
        if self.events is not None:
            try:
                self.events.error("aborted", reason=reason, hands=self.hand_id)
            except OSError as error:  # the events file on a full disk: the result says why
                if error.errno not in _WRITE_ERRORS:
                    raise
        return MatchResult(tuple(self.totals), self.hand_id, reason, 1)

    async def accept(self, listeners: list[trio.SocketListener]) -> None:
        """Take every seat (:func:`dealer.seats.claim_seat`), all at once, within
        ``start_timeout``; then warn about versions we do not speak, in seat
        order, as the reference's ``checkVersion`` does."""
        timeout_ms = self.config.start_timeout_ms
        deadline = trio.current_time() + timeout_ms / 1000 if timeout_ms >= 0 else math.inf
        claimed: list[tuple[Seat, tuple[int, int, int]] | None] = [None] * self.n
        failed: list[int] = []

        async def claim(index: int, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
            try:
                claimed[index] = await claim_seat(
                    listener,
                    index,
                    version_timeout_s=self.config.t_response_ms / 1000,
                    dropped=self.dropped,
                    peer=self.config.peers[index] if index < len(self.config.peers) else None,
                    key=self.config.keys[index] if index < len(self.config.keys) else None,
                )
            except OSError:
                failed.append(index)
                nursery.cancel_scope.cancel()
                return
            listener.socket.close()
            if self.events is not None:
                self.events.info("connected", seat=index, name=self.config.names[index])

        with trio.move_on_at(deadline):
            async with trio.open_nursery() as nursery:
                for index, listener in enumerate(listeners):
                    nursery.start_soon(claim, index, listener, nursery)
        self.seats = [entry[0] for entry in claimed if entry is not None]
        if failed:
            raise _Abort(f"ERROR: seat {min(failed) + 1} could not connect\n")
        waiting = [index for index, entry in enumerate(claimed) if entry is None]
        if waiting:
            raise _Abort(f"ERROR: timed out waiting for seat {waiting[0] + 1} to connect\n")
        for _, (major, minor, _) in (entry for entry in claimed if entry is not None):
            if major != _MAJOR or minor > _MINOR:
                self.write_err(f"ERROR: this server is currently using version {_MAJOR}.{_MINOR}.0\n")

    def dropped(self, index: int, peer: str, reason: str) -> None:
        """Report a connection turned away from seat ``index``: the first
        :data:`_DROPS_REPORTED` on stderr, then one line saying the rest are not."""
        self.drops += 1
        if self.drops <= _DROPS_REPORTED:
            self.write_err(f"WARNING: dropped connection to seat {index + 1} from {peer}: {reason}\n")
        elif self.drops == _DROPS_REPORTED + 1:
            self.write_err("WARNING: further dropped connections are not reported\n")
        if self.events is not None and self.drops <= _DROPS_REPORTED:
            self.events.warning("dropped", seat=index, peer=peer, reason=reason)

    # -- the match -----------------------------------------------------------------

    async def play(self) -> None:
        config = self.config
        self.last_send_us = _now_us()
        if not self.quiet:
            self.write_err(f"STARTED at {format_timestamp(self.last_send_us)}\n")
        if self.events is not None:
            self.events.info("started")
        if self.tlog is not None and self.tlog.previous:
            self.replay(self.tlog.previous)
        while self.hand_id < config.num_hands:
            await self.play_hand()
        if not self.quiet:
            self.write_err(f"FINISHED at {format_timestamp(self.last_send_us)}\n")
        score = format_score(self.totals, config.names)
        self.out.write(score + "\n")
        self.out.flush()
        self.write_err(score + "\n")
        if self.log is not None:
            self.log.write(score + "\n")
        if self.events is not None:
            self.events.info("finished", hands=self.hand_id, totals=self.totals)

    def replay(self, text: str) -> None:
        """Replay an interrupted match's ``.tlog`` (``processTransactionFile``)."""
        for line in _lines(text):
            try:
                transaction = parse_transaction(line, self.game)
            except LogError as error:
                raise _Abort(str(error)) from None
            if transaction.hand_id != self.hand_id:
                raise _Abort(f"ERROR: handId mismatch in transaction log: {line}")
            action = transaction.action
            if action is None or not self.state.is_legal(action):
                raise _Abort(f"ERROR: invalid action in transaction log: {line}")
            seat = (self.state.current_player() + self.player0_seat) % self.n
            if not self.budgets.charge(seat, transaction.send_us, transaction.recv_us):
                raise _Abort(f"ERROR: seat {seat + 1} ran out of time in transaction file\n")
            self.state = self.state.apply(action)
            if self.state.finished:
                self.score_hand()
                self.next_hand()

    def score_hand(self) -> tuple[Fraction, ...]:
        """The finished hand's values by position, added to the seats' totals as
        doubles in seat order, as the reference accumulates them."""
        values = hand_values(self.state, self.deal.hole, self.deal.board)
        for p, value in enumerate(values):
            self.totals[(p + self.player0_seat) % self.n] += float(value)
        return values

    def next_hand(self) -> None:
        """``setUpNewHand``: next id, rotate the button, reset hand budgets, deal."""
        self.hand_id += 1
        if not self.config.fixed_seats:
            self.player0_seat = (self.player0_seat + 1) % self.n
        self.budgets.new_hand()
        self.deal = self.dealer.next_hand()
        self.state = State(self.game)
        self.texts = HandTexts(self.game, self.deal, self.hand_id)

    async def play_hand(self) -> None:
        hand_id, n, player0_seat = self.hand_id, self.n, self.player0_seat
        while not self.state.finished:
            acting = self.state.current_player()
            text, send_us = await self.broadcast(acting)
            seat = self.seats[(acting + player0_seat) % n]
            action, recv_us = await self.read_response(seat, acting, text, send_us)
            if self.tlog is not None:
                self.tlog.write(format_transaction(action, hand_id, send_us, recv_us))
            self.state = self.state.apply(action)
        values = self.score_hand()
        if self.log is not None or self.records is not None:
            seats = tuple((p + player0_seat) % n for p in range(n))
            if self.log is not None:
                names = [self.config.names[s] for s in seats]
                line = format_state_line(self.state, self.deal, hand_id=hand_id, values=values, names=names)
                self.log.write(line + "\n")
            if self.records is not None:
                floats = tuple(float(v) for v in values)
                self.records.write(HandRecord.of(hand_id, seats, self.state, self.deal, floats))
        await self.broadcast_final()
        self.flush_echoes()
        if not self.quiet and hand_id % 100 == 0:
            for index, used in enumerate(self.budgets.used_match_us):
                self.write_err(f"Seconds cumulatively spent in match for seat {index}: {used // 1_000_000}\n")
        self.next_hand()
        # Reads and writes do not yield when the agents keep up; yield once a
        # hand so that other matches in this process (and cancellation) get in.
        await trio.lowlevel.checkpoint()

    async def broadcast(self, acting: int) -> tuple[str, int]:
        """Send every seat its view; returns the acting position's text and the
        time its write finished (when its clock starts)."""
        views = self.texts.views(self.state)
        acting_seat = (acting + self.player0_seat) % self.n
        stamps = await self.deliver(self.by_seat(views), acting_seat)
        self.last_send_us = stamps[acting_seat]
        return views[acting], stamps[acting_seat]

    async def broadcast_final(self) -> None:
        await self.deliver(self.by_seat(self.texts.views(self.state)), None)

    def by_seat(self, by_position: list[str]) -> list[str]:
        """Reorder per-position items by seat: seat s holds position s - player0_seat."""
        shift = -self.player0_seat % self.n
        return by_position[shift:] + by_position[:shift]

    async def deliver(self, texts: list[str], first: int | None) -> list[int]:
        """Write ``texts[seat]`` to each seat and echo them in seat order, as the
        reference does; returns when each write finished (0 where not needed).

        The acting seat is written first so it can start thinking while the
        others are written; no agent can tell, as each sees its own messages in
        the reference's order. The reference blocks for ever on an agent that
        stops reading; we give up after one response time."""
        order = range(self.n) if first is None else self.orders[first]
        stamps = [0] * self.n
        stamp_all = not self.quiet
        timeout_s = self.config.t_response_ms / 1000
        seats = self.seats
        for seat in order:
            try:
                await seats[seat].send(f"{texts[seat]}\r\n".encode("ascii"), timeout_s=timeout_s)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise _Abort(f"ERROR: could not send state to seat {seat + 1}\n") from None
            if stamp_all or seat == first:
                stamps[seat] = _now_us()
        if stamp_all:
            for seat, text in enumerate(texts):
                self.echoes.append(f"TO {seat + 1} at {format_timestamp(stamps[seat])} {text}\r\n")
        return stamps

    def no_answer(self, number: int, send_us: int, *, over_budget: bool) -> _Abort:
        """The abort for seat ``number`` with no answer: "ran out of time" when
        its hand or match budget ran out first (``over_budget``), else "could
        not get action" (its response time ran out, or it hung up). The
        seconds spent count from the send, comments and all, where the
        reference's count from its last line."""
        if over_budget:
            return _Abort(f"ERROR: seat {number} ran out of time\n")
        response_us = self.budgets.response_us
        spent = (_now_us() - send_us) / 1_000_000
        return _Abort(
            f"ERROR: could not get action from seat {number}\n"
            f"{spent:.1f} seconds spent waiting; timeout {response_us / 1_000_000:.1f}\n"
        )

    async def read_response(self, seat: Seat, position: int, expected: str, send_us: int) -> tuple[Action, int]:
        """Read from the acting seat until a response is acceptable (docs/protocol.md, The
        dealer's rules), or until it has had all the time its limits allow since
        ``send_us``.

        ``expected`` is the text the seat was sent: an answer that starts with it
        and ``:`` is about the current state without parsing it (it would parse
        to exactly that state); anything else is parsed and compared as the
        reference's ``matchStatesEqual`` does."""
        game, state, quiet, budgets = self.game, self.state, self.quiet, self.budgets
        number = seat.index + 1
        while True:
            # Recomputed per line: a line charged below leaves less of the budgets.
            allowed_us = budgets.allowance_us(seat.index)
            try:
                line = seat.poll_line()
                if line is None:
                    self.flush_echoes()  # the wait may be long: show what happened so far
                    left_us = min(max(send_us + allowed_us - _now_us(), 0), allowed_us)  # a clock set back waits no longer
                    line = await seat.wait_line(timeout_s=left_us / 1_000_000)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                line = b""
            recv_us = _now_us()
            if not line:  # None: no line in the time allowed; b"": the seat hung up
                raise self.no_answer(number, send_us, over_budget=line is None and allowed_us < budgets.response_us)
            raw = c_string(line)
            if not quiet:
                self.echoes.append(f"FROM {number} at {format_timestamp(recv_us)} {escape_line(raw)}")
                if len(self.echoes) >= _ECHOES_HELD:
                    self.flush_echoes()
            if raw[:1] in (b"#", b";"):
                if recv_us - send_us > allowed_us:  # the clock runs on through comments
                    raise self.no_answer(number, send_us, over_budget=allowed_us < budgets.response_us)
                await trio.lowlevel.checkpoint()  # a flood of ignored lines must not starve other matches
                continue
            if not self.budgets.charge(seat.index, send_us, recv_us):
                raise _Abort(f"ERROR: seat {number} ran out of time\n")
            text = raw.decode("latin-1")
            end = len(expected)
            if not (text.startswith(expected) and text[end : end + 1] == ":"):
                try:
                    seen, end = parse_match_state(text, game)
                except ProtocolError:
                    self.warn(seat, _BAD_STATE, raw)
                    await trio.lowlevel.checkpoint()
                    continue
                if not seen.same_as(view_of(state, self.deal, hand_id=self.hand_id, viewer=position)):
                    self.warn(seat, _UNREQUESTED, raw)
                    await trio.lowlevel.checkpoint()
                    continue
            action: Action | None = None
            if text[end : end + 1] == ":":
                try:
                    action, _ = parse_action(text, game, end + 1)
                except ProtocolError:
                    pass
                else:
                    fixed, warning = state.repair(action)
                    if warning is not None:
                        self.warn(seat, warning, raw)
                    return fixed, recv_us
            self.warn(seat, _BAD_FORMAT, raw)
            return CALL, recv_us
