"""Matches with external-command bots: ACPC submissions (``startme.sh HOST PORT``).

:func:`arena.match.run_plan` starts only our own agents, so a match in which
one bot is an external command plays its seatings here, each through our
dealer (:func:`dealer.server.serve_match`) on loopback with fresh agents:

* a command is run as ``COMMAND... HOST PORT`` from its program's directory,
  in a session of its own, stdout and stderr kept in the match directory as
  ``<match>.player<seat>.std/.err`` (play_match.pl's names), each bounded
  (:func:`_keep`: the first and the last :data:`KEEP_BYTES`, and how much was
  dropped between them, since a bot that floods its output would otherwise
  fill the disk beside ``tournament.db``); when its seating
  is over it gets :data:`arena.match.AGENT_EXIT_S` to exit (a second after an
  aborted seating), then its whole process group is killed (a ``startme.sh`` that started a child leaves none
  behind, as the ACPC's validation demanded);
* our bots in the same match play as in-process agents, or with
  ``agents = "process"`` as ``python -m agent`` processes started the same way.

A seat whose agent fails *forfeits* that seating, and the tournament goes on:
the dealer aborts the match when a peer is dead (docs/protocol.md, The dealer's rules:
"could not get action from seat N", no SCORE line; "timed out waiting for seat N to
connect" when it never connects), keeping every finished hand in the ``.log``. An agent
fails when the dealer names its seat in such an abort, or when its process ends (or,
in-process, its strategy breaks the protocol) before the seating is over. The finished
hands count as played; each unfinished hand costs every failed seat its blind (its
position's ``blind``, as if it folded at once), shared equally by the seats that did not
fail. The remaining seatings are still played with fresh agents, so one crash costs one
seating. A seating that ends without any seat to blame (the dealer could not start, say)
is a failure of ours: :class:`arena.match.MatchError`, and ``--resume`` plays it again.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from agent.client import AgentError, ConnectionLost, play
from analysis.tables import plural
from arena.match import AGENT_EXIT_S, AGENT_GONE_S, MatchError
from dealer.log import LogError, read_log
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game
from strategies.base import Spec, Strategy, make_strategy

__all__ = ["Seat", "SeatingOutcome", "play_seatings", "forfeit_charges", "KEEP_BYTES"]

HOST = "127.0.0.1"
#: What is kept of each output stream of a command, at its start and again at
#: its end: enough for any bot's own diagnostics, and a bound on the disk a
#: bot can fill (a stream that says more loses its middle).
KEEP_BYTES: Final = 64 * 1024
_READ_BYTES: Final = 64 * 1024
_ABORT_GRACE_S = 1.0
_SEAT_IN_ERROR = re.compile(r"\bseat (\d+)\b")


@dataclass(frozen=True)
class Seat:
    """Who sits in a seat: a command line (``HOST PORT`` go between ``argv``
    and ``after``) or, with no ``argv``, our in-process agent for ``spec``."""

    name: str
    argv: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    cwd: str | None = None
    spec: Spec | None = None
    seed: int = 0


@dataclass(frozen=True)
class SeatingOutcome:
    """One seating as it ended: per-seat totals of its finished hands (from the
    ``.log``), how many hands finished, whether the log is complete, and the
    failed seats with the reason for each (empty when it was played out)."""

    match_name: str
    totals: tuple[float, ...]
    hands_played: int
    complete: bool
    failed: dict[int, str]


@dataclass
class _Run:
    dealer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    result: MatchResult | None = None
    dealer_done: bool = False
    failed: dict[int, str] = field(default_factory=dict)

    def fail(self, seat: int, reason: str) -> None:
        """A seat's agent is gone or broke the protocol: the dealer, which
        usually sees it and aborts, gets a moment to say so, then is stopped
        (a seat that never connected would keep it waiting)."""
        self.failed.setdefault(seat, reason)
        self.dealer_scope.deadline = min(self.dealer_scope.deadline, trio.current_time() + AGENT_GONE_S)


def _last_line(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return f": {lines[-1]}" if lines else ""


async def _keep(stream: trio.abc.ReceiveStream, path: Path, keep: int = KEEP_BYTES) -> None:
    """Save what ``stream`` says to ``path``: the first ``keep`` bytes as they
    come, and at the end (EOF or cancelled) a line saying how many bytes were
    dropped, then the last ``keep``. Only the tail is held in memory, so the
    bytes in between cost neither disk nor memory however many there are."""
    head = dropped = 0
    tail = bytearray()
    with open(path, "wb") as file:
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


async def _process(seat: Seat, index: int, port: int, run: _Run, run_dir: Path, name: str) -> None:
    err_path = run_dir / f"{name}.player{index + 1}.err"
    command = [*seat.argv, HOST, str(port), *seat.after]
    try:
        process = await trio.lowlevel.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=seat.cwd, start_new_session=True
        )
    except OSError as error:
        run.fail(index, f"could not be started: {error.strerror or error}")
        return
    assert process.stdout is not None and process.stderr is not None  # both are pipes
    async with trio.open_nursery() as keepers:  # ends at EOF: once the whole group below is gone
        keepers.start_soon(_keep, process.stdout, run_dir / f"{name}.player{index + 1}.std")
        keepers.start_soon(_keep, process.stderr, err_path)
        try:
            await process.wait()
        finally:
            try:  # the whole group: a startme.sh's children too
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if process.returncode is None:
                with trio.CancelScope(shield=True):
                    await process.wait()
    if not run.dealer_done:
        run.fail(index, f"exited with status {process.returncode} before the match was over{_last_line(err_path)} (see {err_path})")


async def _in_process(strategy: Strategy, index: int, port: int, run: _Run, game: Game) -> None:
    try:
        await play(HOST, port, game, strategy)
    except ConnectionLost:
        pass  # the dealer aborted: the cause is another seat's, or the dealer's
    except (AgentError, OSError) as error:
        run.fail(index, f"broke off: {error}")


async def _seating(config: MatchConfig, seats: tuple[Seat, ...], game: Game, run_dir: Path) -> _Run:
    run = _Run()
    # our strategies are built before the dealer listens: the start timeout
    # is the commands' (loading a strategy file must not count against ours)
    strategies = {i: make_strategy(seat.spec, game, seed=seat.seed) for i, seat in enumerate(seats) if seat.spec is not None}
    with open(run_dir / f"{config.match_name}.out", "w") as out, open(run_dir / f"{config.match_name}.err", "w") as err:
        async with trio.open_nursery() as nursery:

            async def serve(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
                with run.dealer_scope:
                    run.result = await serve_match(config, stdout=out, stderr=err, task_status=task_status)
                run.dealer_done = True
                err.flush()
                # then the agents are killed: after a played-out match they had
                # their chance to see the end; after an abort nothing waits on them
                played_out = run.result is not None and run.result.aborted is None
                nursery.cancel_scope.deadline = trio.current_time() + (AGENT_EXIT_S if played_out else _ABORT_GRACE_S)

            try:
                ports: tuple[int, ...] = await nursery.start(serve)
            except RuntimeError:  # the dealer could not open its files or ports
                return run
            for index, (seat, port) in enumerate(zip(seats, ports)):
                if seat.argv:
                    nursery.start_soon(_process, seat, index, port, run, run_dir, config.match_name)
                else:
                    nursery.start_soon(_in_process, strategies[index], index, port, run, game)
    return run


def _read(path: Path, game: Game, names: tuple[str, ...], hands: int) -> tuple[tuple[float, ...], int, bool]:
    """Per-seat totals of the hands the ``.log`` holds, their count, and
    whether it is complete (every hand and the SCORE line)."""
    if not path.exists():
        return (0.0,) * len(names), 0, False
    try:
        contents = read_log(path, game)
    except LogError as error:
        raise MatchError(str(error)) from None
    totals = [0.0] * len(names)
    seat_of = {name: seat for seat, name in enumerate(names)}
    for line in contents.hands:
        for name, value in zip(line.names, line.values):
            totals[seat_of[name]] += value
    complete = contents.score is not None and len(contents.hands) == hands
    if complete and contents.score is not None:
        totals = list(contents.score[0])
    return tuple(totals), len(contents.hands), complete


async def _play_all(configs: list[MatchConfig], seatings: list[tuple[Seat, ...]], game: Game, run_dir: Path) -> list[_Run]:
    return [await _seating(config, seats, game, run_dir) for config, seats in zip(configs, seatings)]


def play_seatings(configs: list[MatchConfig], seatings: list[tuple[Seat, ...]], game: Game, run_dir: Path) -> list[SeatingOutcome]:
    """Play each seating (``configs[i]`` with ``seatings[i]`` in seat order) in turn.

    Raises:
        MatchError: a seating ended unfinished with no seat to blame.
    """
    outcomes = []
    for config, seats, run in zip(configs, seatings, trio.run(_play_all, configs, seatings, game, run_dir)):
        log = run_dir / f"{config.match_name}.log"
        totals, played, complete = _read(log, game, config.names, config.num_hands)
        failed = {} if complete else dict(run.failed)
        aborted = run.result.aborted if run.result is not None else None
        if not complete and aborted:
            said = next((line for line in aborted.splitlines() if line.startswith("ERROR")), aborted.splitlines()[0])
            named = _SEAT_IN_ERROR.search(said)
            if named and 1 <= int(named.group(1)) <= len(seats):
                failed.setdefault(int(named.group(1)) - 1, f"the dealer: {said}")
        if not complete and not failed:
            err = run_dir / f"{config.match_name}.err"
            raise MatchError(f"{config.match_name}: the dealer stopped after {plural(played, 'hand')} with no seat to blame{_last_line(err)} (see {err})")
        outcomes.append(SeatingOutcome(config.match_name, totals, played, complete, failed))
    return outcomes


def forfeit_charges(game: Game, failed: set[int], first: int, hands: int) -> tuple[float, ...]:
    """Per seat, the chips the unfinished hands ``first..hands-1`` move: each
    failed seat pays its blind in each (seat s has position (s - h) mod N in
    hand h; docs/protocol.md, Positions and seats), shared equally by the seats that did not fail
    (nothing moves when every seat failed)."""
    n = game.num_players
    charges = [0.0] * n
    others = [s for s in range(n) if s not in failed]
    if not others or not failed:
        return tuple(charges)
    for seat in failed:
        # the blind of each position, counted over the unfinished hands at once
        for position in range(n):
            count = _hands_at(position, seat, n, first, hands)
            paid = game.blind[position] * count
            charges[seat] -= paid
            for other in others:
                charges[other] += paid / len(others)
    return tuple(charges)


def _hands_at(position: int, seat: int, n: int, first: int, hands: int) -> int:
    """How many hands h in ``first..hands-1`` have ``(seat - h) mod n == position``."""
    residue = (seat - position) % n  # h ≡ residue (mod n)
    start = first + (residue - first) % n
    return 0 if start >= hands else (hands - 1 - start) // n + 1
