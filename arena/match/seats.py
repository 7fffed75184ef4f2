"""The seat runner: one seating of a match, our dealer in this process
(:func:`dealer.server.serve_match`) with an agent in every seat, and what became
of each agent. Every match is seated here, through :mod:`arena.match.run`:
``arena match``, tournaments, ``arena play`` and the hosted arena's matches and tables.

A seat is one of five kinds, given in seat order beside a
:class:`~dealer.server.MatchConfig` (whose ``names`` name them):

* :class:`InProcess` — one of our strategies (a :class:`strategies.base.Spec`
  and its seed), built before the dealer listens (loading a strategy file does
  not count against the start timeout) and played by a trio task here (with
  ``threaded``, its decisions in a worker thread, so that a bot that thinks
  for seconds does not stall what else the event loop serves);
* :class:`Command` — a program run as ``ARGV... HOST PORT AFTER...`` from
  ``cwd`` in a session of its own: an ACPC ``startme.sh``, or our own agent
  (:func:`agent_command`). Its stdout and stderr go to
  ``<match>.player<N>.std/.err`` beside the log, each bounded
  (:func:`keep_output`: a bot that floods its output cannot fill the disk);
  when its seating is over its whole process group is killed, so nothing it
  started outlives the seating;
* :class:`Remote` — nothing is started: the dealer's port for the seat is
  announced (:func:`run_seating` calls ``task_status.started(ports)``) and the
  first ACPC agent that connects and sends its version takes the seat, only
  from ``peer`` when one is given, only after its ``#KEY:`` line when a
  ``key`` is (:func:`poker.protocol.key_line`), and within the config's start
  timeout; on ``listener``, when given, a socket the caller bound to the
  seat's port beforehand (its reservation), which the dealer listens on as it is;
* :class:`Person` — a person at a table, played here: an ACPC client like any
  agent (:class:`agent.human.seat.HumanSeat`), made once the dealer listens
  and told why when the dealer aborts;
* :class:`Sandboxed` — a submitted agent's ``startme.sh``, run as a
  :class:`Command` is (its output kept alike, and its end judged alike) but
  confined by :class:`arena.sandbox.Sandbox`: its own uid and namespaces,
  its one way out relayed to its seat's port; when its seating is over, every
  process it started is gone. Where the confinement cannot be set up it is
  not run at all: the seat could not be started, saying why.

For example, a hosted bot against someone's own agent (a caller describes
its match as a :class:`~arena.match.plan.MatchPlan` instead, and
:func:`arena.match.run.play_seating` builds the config from it)::

    config = MatchConfig(match_name="match", game=game, game_path="leduc", num_hands=1000,
                         seed=7, names=("leduc-cfr", "you"), host="0.0.0.0",
                         start_timeout_ms=60_000, log_dir=run_dir).with_match_deadline()
    seats = (InProcess(Spec.parse("leduc-cfr"), seed=1), Remote(peer="203.0.113.5"))

    async def host(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
        run = await run_seating(config, seats, task_status=task_status)
        ...  # run.result, run.ends, run.culprits()

    ports = await nursery.start(host)  # ports[1]: where the agent connects

The seats this runner starts itself (in-process agents, a person's seat,
our own agent as a command, a sandboxed agent, whose relay sends the key
before anything of the agent's) each get a fresh secret key, so that no
other program on the machine takes their seat by connecting first (a hosted
bot's or a web table's port is no secret to a local user: ``ss -ltn`` lists
it). A command that is not our agent is kept by its address only.

The rules of a seating: the dealer writes ``<match>.log`` (and whatever the
config asks) in ``config.log_dir``, its stdout and stderr in ``<match>.out`` and
``<match>.err`` (appended to with ``config.append``, as are the commands'
files); an agent that ends while the dealer still plays gives the dealer
:data:`AGENT_GONE_S` to say why and stop; once the dealer is
done, agents get :data:`AGENT_EXIT_S` to exit (``after_abort_s``
after an abort) and are then stopped, which is not held against them. A
:class:`Stop` (SIGINT/SIGTERM, :func:`run_plan_with_signals`) stops the dealer
and the agents at once.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol, TextIO

import trio

from agent.cli import EXIT_AGENT_ERROR, EXIT_CONNECTION, KEY_VARIABLE
from agent.client import AgentError, ConnectionLost, play
from analysis.tables import plural
from arena.sandbox import Limits, Sandbox, SandboxError
from dealer.seats import Address, Peers, peer_address
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game
from poker.protocol import MatchState, key_line
from poker.state import Action
from strategies.base import Spec, Strategy, make_strategy

__all__ = [
    "InProcess",
    "Command",
    "Remote",
    "Person",
    "Sandboxed",
    "PersonSeat",
    "Seat",
    "agent_command",
    "SeatEnd",
    "SeatingRun",
    "aborted_text",
    "run_seating",
    "our_address",
    "keep_output",
    "last_line",
    "KEEP_BYTES",
    "Stop",
    "watch_signals",
    "sigterm_as_interrupt",
    "AGENT_EXIT_S",
    "AGENT_GONE_S",
]

#: How long agents get to exit after the dealer is done (validate_submission.pl's 10 s).
AGENT_EXIT_S: Final = 10.0
#: How long the dealer may go on after an agent ended its connection (normally it is done).
AGENT_GONE_S: Final = 5.0

#: What is kept of each output stream of a command, at its start and again at
#: its end: enough for any bot's own diagnostics, and a bound on the disk a
#: bot can fill (a stream that says more loses its middle).
KEEP_BYTES: Final = 64 * 1024
_READ_BYTES: Final = 64 * 1024
_SEAT_IN_ERROR: Final = re.compile(r"\bseat (\d+)\b")


# -- the seats --------------------------------------------------------------------


@dataclass(frozen=True)
class InProcess:
    """One of our strategies, played by a task in this process (``threaded``:
    each decision in a worker thread)."""

    spec: Spec
    seed: int
    threaded: bool = False


@dataclass(frozen=True)
class Command:
    """A program run as ``ARGV... HOST PORT AFTER...`` from ``cwd``;
    ``takes_key``: it is our agent, which reads its seat's key from
    :data:`agent.cli.KEY_VARIABLE` (an environment variable: a command line
    is readable by every user in ``ps``)."""

    argv: tuple[str, ...]
    after: tuple[str, ...] = ()
    cwd: str | None = None
    takes_key: bool = False


@dataclass(frozen=True)
class Remote:
    """A seat for an agent we do not start: whoever connects to its port first
    with a version line, from ``peer`` (an IP address) only when given, after
    a ``#KEY:`` line with ``key`` when given. ``listener``: the seat's port
    already bound by the caller (not listening), which the dealer listens on
    and closes once the seat is taken. ``relayed``: a relay on this machine
    (the hosted arena's seat route, which carries the agent's bytes over its
    HTTPS port) may connect too, from our own address, besides ``peer``.

    Raises:
        ValueError: ``peer`` is not an IP address, or ``key`` not a key.
    """

    peer: str | None = None
    key: str | None = field(default=None, repr=False)
    listener: socket.socket | None = field(default=None, repr=False, compare=False)
    relayed: bool = False

    def __post_init__(self) -> None:
        if self.peer is not None:
            peer_address(self.peer)
        if self.key is not None:
            key_line(self.key)


class PersonSeat(Protocol):
    """What a person's seat does (:class:`agent.human.seat.HumanSeat` does it)."""

    async def run(self, host: str, port: int, key: str | None = None) -> None:
        """Play the seat until the dealer closes the connection (never raises
        for a lost one), sending ``key`` before the version line when given."""

    def end(self, message: str | None) -> None:
        """The match is over: ``message`` says why when it did not end normally."""


@dataclass(frozen=True)
class Person:
    """A person at a table, played by a task in this process. ``sit`` makes the
    seat once the dealer listens, from the seating's names in seat order and
    the person's seat (a web table makes one per seating); when the dealer
    aborts, the seat is told why. ``listener``: as a :class:`Remote` seat's."""

    sit: Callable[[tuple[str, ...], int], PersonSeat]
    listener: socket.socket | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Sandboxed:
    """A submitted agent: ``agent_dir/startme.sh HOST PORT AFTER...`` run in
    the sandbox with ``limits``."""

    agent_dir: Path
    limits: Limits = Limits()
    after: tuple[str, ...] = ()


Seat = InProcess | Command | Remote | Person | Sandboxed


def agent_command(game: str, spec: Spec, seed: int) -> Command:
    """Our own agent as a process (``python -m agent GAME HOST PORT --strategy
    SPEC --seed S``): what a seat of ours is when agents run as processes."""
    return Command((sys.executable, "-m", "agent", game), after=("--strategy", str(spec), "--seed", str(seed)), takes_key=True)


# -- what became of them ------------------------------------------------------------


@dataclass(frozen=True)
class SeatEnd:
    """An agent that ended on its own, with an error or while the dealer still
    played. ``status`` is a command's exit status, or for an in-process agent
    the one ``arena agent`` would give (0 the connection ended, 1 its own fault,
    3 the connection was lost or refused); ``None``: the command could not be
    started. ``detail`` says why (the error; a command's last line on stderr);
    ``output`` is a command's stderr file (``None`` in-process)."""

    seat: int
    status: int | None
    detail: str
    during: bool  # the dealer was still playing
    output: Path | None = None

    @property
    def command(self) -> bool:
        return self.output is not None

    def describe(self, when: str = "") -> str:
        """What happened, in words; ``when`` follows the verb (" before the match was over")."""
        if self.status is None:
            return f"could not be started: {self.detail}"
        if self.command:
            said = f": {self.detail}" if self.detail else ""
            return f"exited with status {self.status}{when}{said} (see {self.output})"
        if self.status == 0:
            return f"ended the connection{when}"
        return f"failed{when}: {self.detail}"


@dataclass(frozen=True)
class SeatingRun:
    """What :func:`run_seating` saw: the dealer's result (``None`` when it was
    stopped before it finished: by a :class:`Stop`, or after an agent left),
    the agents that ended on their own in the order they did
    (:class:`SeatEnd`), and whether a :class:`Stop` ended the seating."""

    result: MatchResult | None
    ends: tuple[SeatEnd, ...]
    stopped: bool

    def culprits(self) -> dict[int, str]:
        """Seat -> why, for the seats to blame when the seating did not finish:
        commands that ended while the dealer played and in-process agents that
        broke the protocol (an in-process agent that loses its connection is the
        victim of someone else), then the seat the dealer's ERROR names (one
        that never connected, timed out or left: a remote seat is blamed only so)."""
        blamed: dict[int, str] = {}
        for end in self.ends:
            if (end.command and end.during) or (not end.command and end.status == EXIT_AGENT_ERROR):
                blamed.setdefault(end.seat, end.describe(" before the match was over" if end.command else ""))
        result = self.result
        if result is not None and result.aborted:
            lines = result.aborted.splitlines()
            said = next((line for line in lines if line.startswith("ERROR")), lines[0])
            named = _SEAT_IN_ERROR.search(said)
            if named and 1 <= int(named.group(1)) <= len(result.totals):
                blamed.setdefault(int(named.group(1)) - 1, f"the dealer: {said}")
        return blamed


def aborted_text(result: MatchResult) -> str:
    """Why the dealer aborted, on one line: what a match's failure, the human
    table's page and its closing line say."""
    reason = "; ".join(line for line in (result.aborted or "").splitlines() if line)
    return f"the dealer aborted after {plural(result.hands_played, 'hand')}: {reason}"


# -- stopping on a signal ---------------------------------------------------------


@dataclass
class _Running:
    """The running seating: its nursery, the dealer's own scope, and what the agents did."""

    scope: trio.CancelScope
    dealer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    result: MatchResult | None = None
    dealer_done: trio.Event = field(default_factory=trio.Event)
    ends: list[SeatEnd] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # the commands' process groups
    persons: list[PersonSeat] = field(default_factory=list)  # told why, should the dealer abort
    stopped: bool = False  # by a signal

    def ended(self, end: SeatEnd) -> None:
        """An agent ended on its own: kept when it failed or left early."""
        if end.during:
            self.hurry_dealer()
        if not self.stopped and (end.status != 0 or end.during):
            self.ends.append(end)

    def hurry_dealer(self) -> None:
        """An agent's connection ended: the dealer, which sees it close, gets a
        moment to say why and stop (a seat that never connected would keep it
        waiting)."""
        if not self.dealer_done.is_set():
            self.dealer_scope.deadline = min(self.dealer_scope.deadline, trio.current_time() + AGENT_GONE_S)

    def stop_dealer(self) -> None:
        """Stop the commands (SIGTERM to each group: they exit at once and say
        nothing, where a connection the dealer closes with their answer unread
        would be reset under them), then the dealer, which closes the
        connections (in-process agents see them end). The agents get time to exit."""
        self.stopped = True
        for group in self.groups:
            _signal_group(group, signal.SIGTERM)
        self.dealer_scope.cancel()
        self.scope.deadline = min(self.scope.deadline, trio.current_time() + AGENT_EXIT_S)


@dataclass
class Stop:
    """Set by SIGINT/SIGTERM (:func:`watch_signals`): the first stops the dealer
    of the running seating, a second one everything at once."""

    interrupted: bool = False
    current: _Running | None = None
    signals: int = 0

    def signal(self) -> None:
        self.signals += 1
        self.interrupted = True
        if self.current is None:
            return
        if self.signals == 1:
            self.current.stop_dealer()
        else:
            self.current.scope.cancel()


async def watch_signals(stop: Stop, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Pass SIGINT and SIGTERM to ``stop`` until cancelled."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            stop.signal()


@contextmanager
def sigterm_as_interrupt(forward: Callable[[], object] | None = None) -> Iterator[None]:
    """SIGTERM (kill, timeout, a batch scheduler) raises KeyboardInterrupt, as
    SIGINT does, outside trio's own receiver: a command stops the one way
    whichever it gets. ``forward`` runs first, to pass the interrupt on to the
    processes a terminal's Ctrl-C would have reached too (a tournament's pool
    workers), which a SIGTERM to us alone does not."""

    def interrupt(signum: int, frame: object) -> None:
        if forward is not None:
            forward()
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# -- running a seating ----------------------------------------------------------------


async def run_seating(
    config: MatchConfig,
    seats: Sequence[Seat],
    *,
    stop: Stop | None = None,
    after_abort_s: float = AGENT_EXIT_S,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> SeatingRun:
    """Play one seating: ``seats[i]`` in seat ``i`` (see the module notes for
    each kind), the dealer on ``config`` (its ``peers`` are the runner's: a
    remote seat's ``peer``; for our own agents the address they connect from,
    loopback when the dealer listens on every interface). Calls
    ``task_status.started(ports)`` once the dealer listens, before any agent
    connects; a dealer that cannot start (its ERROR is then in the result)
    returns without, as :func:`dealer.server.serve_match` does.

    Raises:
        ValueError: not one seat per player of the game.
        StrategyError: an in-process seat's strategy cannot be built.
    """
    if len(seats) != config.game.num_players:
        raise ValueError(f"{len(seats)} seats for a {config.game.num_players}-player game")
    stop = stop or Stop()
    host, local_peer = our_address(config.host)
    keys = tuple(_key(seat) for seat in seats)
    config = dataclasses.replace(
        config,
        peers=tuple(_peer(seat, local_peer) for seat in seats),
        keys=keys,
        sockets=tuple(seat.listener if isinstance(seat, (Remote, Person)) else None for seat in seats),
    )
    # built before the dealer listens: the start timeout is for connecting
    strategies = {
        i: make_strategy(seat.spec, config.game, seed=seat.seed) for i, seat in enumerate(seats) if isinstance(seat, InProcess)
    }
    mode = "a" if config.append else "w"
    with open(config.path(".out"), mode) as out, open(config.path(".err"), mode) as err:
        async with trio.open_nursery() as nursery:
            run = _Running(nursery.cancel_scope)
            stop.current = run
            if stop.interrupted:  # a signal came while this seating was set up
                run.stop_dealer()
            try:
                ports: tuple[int, ...] = await nursery.start(_serve, config, out, err, run, after_abort_s)
            except RuntimeError:  # the dealer could not open its files or ports, or was stopped
                ports = ()
            else:
                task_status.started(ports)
            for index, (seat, port) in enumerate(zip(seats, ports)):
                if isinstance(seat, InProcess):
                    nursery.start_soon(
                        _in_process, strategies.pop(index), index, host, port, run, config.game, seat.threaded, keys[index]
                    )
                elif isinstance(seat, Command):
                    nursery.start_soon(_command, seat, index, host, port, run, config, keys[index])
                elif isinstance(seat, Sandboxed):
                    nursery.start_soon(_sandboxed, seat, index, host, port, run, config, keys[index])
                elif isinstance(seat, Person):
                    run.persons.append(seat.sit(config.names, index))
                    nursery.start_soon(_person, run.persons[-1], index, host, port, run, keys[index])
        stop.current = None
    for strategy in strategies.values():  # never played: the dealer did not start
        strategy.close()
    return SeatingRun(run.result, tuple(run.ends), run.stopped)


def our_address(host: str) -> tuple[str, Address | None]:
    """Where our own agents connect to a dealer that listens on ``host``
    (loopback when it listens on every interface), and the address the dealer
    should then accept them from (none for a host name)."""
    local = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    try:
        return local, peer_address(local)
    except ValueError:
        return local, None


def _key(seat: Seat) -> str | None:
    """The seat's key: a remote seat's own; a fresh one for the agents we start that can send it."""
    if isinstance(seat, Remote):
        return seat.key
    if isinstance(seat, (InProcess, Sandboxed, Person)) or (isinstance(seat, Command) and seat.takes_key):
        return secrets.token_hex(16)
    return None


def _peer(seat: Seat, local: Address | None) -> Peers | None:
    if isinstance(seat, Remote):
        if seat.peer is None:
            return None
        if seat.relayed and local is not None:
            return frozenset((peer_address(seat.peer), local))
        return peer_address(seat.peer)
    return local


async def _serve(
    config: MatchConfig,
    out: TextIO,
    err: TextIO,
    run: _Running,
    after_abort_s: float,
    *,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    try:
        with run.dealer_scope:
            run.result = await serve_match(config, stdout=out, stderr=err, task_status=task_status)
    finally:
        run.dealer_done.set()
    if run.result is not None and run.result.aborted:  # before the persons' seats see their connections end
        for person in run.persons:
            person.end(aborted_text(run.result))
    err.flush()
    played_out = run.result is not None and run.result.aborted is None
    run.scope.deadline = min(run.scope.deadline, trio.current_time() + (AGENT_EXIT_S if played_out else after_abort_s))


async def _in_process(
    strategy: Strategy, seat: int, host: str, port: int, run: _Running, game: Game, threaded: bool, key: str | None
) -> None:
    """Play the seat. The end of the connection is the normal end when the
    dealer closed it, and an agent that left early when it did not: which one
    the dealer says once it is done (a moment later, or stopped: no result)."""

    async def in_thread(view: MatchState) -> Action:
        return await trio.to_thread.run_sync(strategy.act, view)

    try:
        if threaded:
            await play(host, port, game, strategy, decide=in_thread, key=key)
        else:
            await play(host, port, game, strategy, key=key)
    except (AgentError, OSError) as error:
        status = EXIT_CONNECTION if isinstance(error, (ConnectionLost, OSError)) else EXIT_AGENT_ERROR
        run.ended(SeatEnd(seat, status, str(error), not run.dealer_done.is_set()))
    else:
        run.hurry_dealer()
        await run.dealer_done.wait()
        run.ended(SeatEnd(seat, 0, "", run.result is None))


async def _person(person: PersonSeat, seat: int, host: str, port: int, run: _Running, key: str | None) -> None:
    """Play a person's seat (the dealer tells it why it aborted, if it did:
    a connection that ends says nothing of why)."""
    await person.run(host, port, key)
    run.hurry_dealer()
    await run.dealer_done.wait()
    run.ended(SeatEnd(seat, 0, "", run.result is None))


async def _command(
    command: Command, seat: int, host: str, port: int, run: _Running, config: MatchConfig, key: str | None
) -> None:
    """Run the command with its output kept (until EOF: once its whole process
    group is gone); when it ends, or the seating does, the group is killed.
    ``key`` goes to it in :data:`agent.cli.KEY_VARIABLE`."""
    err_path = config.path(f".player{seat + 1}.err")
    argv = [*command.argv, host, str(port), *command.after]
    env = {**os.environ, KEY_VARIABLE: key} if key is not None else None
    try:
        process = await trio.lowlevel.open_process(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=command.cwd, start_new_session=True, env=env
        )
    except OSError as error:
        run.ended(SeatEnd(seat, None, error.strerror or str(error), not run.dealer_done.is_set(), err_path))
        return
    assert process.stdout is not None and process.stderr is not None  # both are pipes
    run.groups.append(process.pid)
    async with trio.open_nursery() as keepers:
        keepers.start_soon(keep_output, process.stdout, config.path(f".player{seat + 1}.std"), KEEP_BYTES, config.append)
        keepers.start_soon(keep_output, process.stderr, err_path, KEEP_BYTES, config.append)
        try:
            await process.wait()
        finally:
            _signal_group(process.pid, signal.SIGKILL)  # a startme.sh's children too
            if process.returncode is None:  # the seating is over: it had its time to exit
                with trio.CancelScope(shield=True):
                    await process.wait()
        during = not run.dealer_done.is_set()
    run.ended(SeatEnd(seat, process.returncode, last_line(err_path), during, err_path))


async def _sandboxed(
    agent: Sandboxed, seat: int, host: str, port: int, run: _Running, config: MatchConfig, key: str | None
) -> None:
    """Run the submitted agent in its sandbox, its output kept as a
    command's, ``key`` sent to the dealer by its relay; when it ends, or the
    seating does, the sandbox ends every process it started before this returns."""
    err_path = config.path(f".player{seat + 1}.err")
    greeting = b"" if key is None else key_line(key)
    try:
        sandbox = Sandbox(agent.agent_dir, agent.limits, after=agent.after)
        async with sandbox.open(host, port, greeting=greeting) as confined, trio.open_nursery() as keepers:
            keepers.start_soon(keep_output, confined.stdout, config.path(f".player{seat + 1}.std"), KEEP_BYTES, config.append)
            keepers.start_soon(keep_output, confined.stderr, err_path, KEEP_BYTES, config.append)
            status = await confined.wait()
            during = not run.dealer_done.is_set()  # the relay holds the end of its connection back until now
    except SandboxError as error:
        run.ended(SeatEnd(seat, None, str(error), not run.dealer_done.is_set(), err_path))
        return
    run.ended(SeatEnd(seat, status, last_line(err_path), during, err_path))


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


def last_line(path: Path) -> str:
    """The last line of a file (a seat's or the dealer's stderr), "" when it has none."""
    lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return lines[-1] if lines else ""


async def keep_output(stream: trio.abc.ReceiveStream, path: Path, keep: int = KEEP_BYTES, append: bool = False) -> None:
    """Save what ``stream`` says to ``path`` (after what it holds, with
    ``append``): the first ``keep`` bytes as they come, and at the end (EOF or
    cancelled) a line saying how many bytes were dropped, then the last
    ``keep``. Only the tail is held in memory, so the bytes in between cost
    neither disk nor memory however many there are."""
    head = dropped = 0
    tail = bytearray()
    with open(path, "ab" if append else "wb") as file:
        async with stream:
            try:
                while chunk := await stream.receive_some(_READ_BYTES):
                    if head < keep:
                        part = chunk[: keep - head]
                        file.write(part)
                        head += len(part)
                        chunk = chunk[len(part) :]
                    tail += chunk
                    if len(tail) > keep:
                        dropped += len(tail) - keep
                        del tail[: len(tail) - keep]
            finally:
                if dropped:
                    file.write(f"\n[arena: {dropped} bytes dropped here: only the first and the last {keep} are kept]\n".encode())
                file.write(tail)
