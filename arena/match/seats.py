"""The seat runner: plays a :class:`~arena.match.plan.MatchPlan`'s seatings
through our dealer in this process, one agent per seat (a ``python -m agent``
process in a session of its own, or a trio task), following the log for a
progress bar and stopping cleanly on SIGINT/SIGTERM."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

import trio
from tqdm import tqdm

from agent import cli as agent_cli
from agent.client import AgentError, ConnectionLost, play
from analysis.tables import plural
from arena.match.plan import (
    AGENT_EXIT_S,
    AGENT_GONE_S,
    Bot,
    MatchError,
    MatchPlan,
    Outcome,
    SeatingResult,
    agent_spec,
    resumed_seed,
)
from arena.match.results import read_seating
from dealer.server import MatchConfig, MatchResult, serve_match
from strategies.base import make_strategy

__all__ = [
    "Stop",
    "run_plan",
    "run_plan_with_signals",
    "sigterm_as_interrupt",
]

_POLL_S: Final = 0.2


# -- stopping on a signal ---------------------------------------------------------


@dataclass
class _Seating:
    """The running seating: its nursery and the dealer's own scope."""

    scope: trio.CancelScope
    dealer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    result: MatchResult | None = None
    dealer_done: bool = False
    failures: list[str] = field(default_factory=list)  # agents' own faults
    lost: list[str] = field(default_factory=list)  # agents that lost the connection (status 3)
    gone: list[str] = field(default_factory=list)  # agents that ended their connection early
    processes: list[trio.Process] = field(default_factory=list)  # agent processes
    stopped: bool = False  # by a signal

    def fail(self, message: str, *, connection: bool = False) -> None:
        """An agent failed: by its own fault, or (``connection``) because its
        connection broke, which a dealer that aborts causes. The dealer, which
        sees the connection close, gets a moment to say why and stop."""
        (self.lost if connection else self.failures).append(message)
        self._hurry_dealer()

    def left(self, who: str) -> None:
        """An agent saw the end of its connection while the dealer still plays:
        normal if the dealer is finishing, a stuck dealer otherwise."""
        if not self.dealer_done:
            self.gone.append(who)
            self._hurry_dealer()

    def _hurry_dealer(self) -> None:
        self.dealer_scope.deadline = min(self.dealer_scope.deadline, trio.current_time() + AGENT_GONE_S)

    def stop_dealer(self) -> None:
        """Stop the agent processes (SIGTERM: they exit at once and say nothing,
        where a connection the dealer closes with their answer unread would be
        reset under them), then the dealer, which closes the connections (agent
        tasks see them end). The agents get time to exit."""
        self.stopped = True
        for process in self.processes:
            if process.returncode is None:
                process.terminate()
        self.dealer_scope.cancel()
        self.scope.deadline = min(self.scope.deadline, trio.current_time() + AGENT_EXIT_S)


@dataclass
class Stop:
    """Set by SIGINT/SIGTERM: the first stops the dealer of the running seating,
    a second one everything at once."""

    interrupted: bool = False
    current: _Seating | None = None
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


async def _watch_signals(stop: Stop, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
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


# -- playing ----------------------------------------------------------------------


async def run_plan(plan: MatchPlan, progress: tqdm[Any] | None = None, stop: Stop | None = None) -> Outcome:
    """Play every seating in turn, each with fresh agents; seatings the run
    directory already holds complete are read, unfinished ones resumed.

    Raises:
        MatchError: the dealer aborted or an agent failed (and no signal came).
    """
    stop = stop or Stop()
    results: list[SeatingResult] = []
    for index in range(len(plan.seatings)):
        if stop.interrupted:
            results.append(read_seating(plan, index))
        else:
            results.append(await _run_seating(plan, index, progress, stop))
    return Outcome(tuple(results), stop.interrupted)


async def run_plan_with_signals(plan: MatchPlan, progress: tqdm[Any] | None) -> Outcome:
    stop = Stop()
    failed: MatchError | None = None
    async with trio.open_nursery() as nursery:
        await nursery.start(_watch_signals, stop)
        try:
            outcome = await run_plan(plan, progress, stop)
        except MatchError as error:
            failed = error  # raised outside the nursery, not in an exception group
        nursery.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return outcome


async def _run_seating(plan: MatchPlan, index: int, progress: tqdm[Any] | None, stop: Stop) -> SeatingResult:
    seating = plan.seatings[index]
    name = plan.match_name(index)
    log_path = plan.run_dir / f"{name}.log"
    err_path = plan.run_dir / f"{name}.err"
    before = read_seating(plan, index)
    if progress is not None:
        if len(plan.seatings) > 1:
            progress.set_description(name)
        progress.update(index * plan.hands + before.hands_played - progress.n)
    if before.complete:
        return before
    resuming = log_path.exists() or (plan.run_dir / f"{name}.tlog").exists()
    first_hand = before.hands_played
    bots = [
        plan.bots[b] if first_hand == 0 else Bot(plan.bots[b].spec, plan.bots[b].name, resumed_seed(plan.seed, b, first_hand))
        for b in seating
    ]
    config = MatchConfig(
        match_name=name,
        game=plan.game,
        game_path=plan.game_arg,
        num_hands=plan.hands,
        seed=plan.seed,
        names=tuple(bot.name for bot in bots),
        write_tlog=True,
        append=resuming,  # with the .tlog: replay it, then play on (dealer -a -T)
        t_response_ms=plan.t_response_ms,
        t_hand_ms=plan.t_hand_ms,
        t_per_hand_ms=plan.t_per_hand_ms,
        start_timeout_ms=plan.start_timeout_ms,
        log_dir=plan.run_dir,
        quiet=True,
    )
    run_agent = _agent_task if plan.in_process else _agent_process
    log_start = log_path.stat().st_size if log_path.exists() else 0
    mode = "a" if resuming else "w"
    with open(plan.run_dir / f"{name}.out", mode) as out, open(err_path, mode) as err:
        async with trio.open_nursery() as outer:
            if progress is not None:
                outer.start_soon(_follow_log, log_path, log_start, progress)
            async with trio.open_nursery() as nursery:
                run = _Seating(nursery.cancel_scope)
                stop.current = run
                if stop.interrupted:  # a signal came while this seating was set up
                    run.stop_dealer()
                try:
                    ports: tuple[int, ...] = await nursery.start(_serve, config, out, err, run)
                except RuntimeError:  # the dealer could not open its files or ports, or was stopped
                    if run.result is None and not stop.interrupted:
                        raise
                    ports = ()
                for seat, (bot, port) in enumerate(zip(bots, ports)):
                    nursery.start_soon(run_agent, plan, name, seat, bot, port, run, resuming)
            stop.current = None
            outer.cancel_scope.cancel()
    after = read_seating(plan, index)
    if stop.interrupted:
        return after
    if progress is not None:
        progress.update((index + 1) * plan.hands - progress.n)
    message = _failure(name, run, err_path)
    if message is not None:
        raise MatchError(message)
    if not after.complete:
        raise MatchError(
            f"{log_path} holds {after.hands_played} of its {plan.hands} hands or lacks the SCORE line,"
            f" though the dealer finished (see {err_path})"
        )
    return after


def _failure(name: str, run: _Seating, err_path: Path) -> str | None:
    """What went wrong in a seating, causes first: an agent's own fault (a bad
    line, an illegal action), then the dealer's abort, then agents that lost
    their connection, which is what a dealer that aborts does to them."""
    parts = list(run.failures)
    result = run.result
    if result is not None and result.aborted is not None:
        reason = "; ".join(line for line in result.aborted.splitlines() if line)  # one line
        parts.append(f"the dealer aborted after {plural(result.hands_played, 'hand')}: {reason} (see {err_path})")
    parts += run.lost
    if parts:
        return f"{name}: {'; then '.join(parts)}"
    if result is None and run.gone:
        said = _last_dealer_message(err_path)
        reason = f"; the dealer's last message: {said}" if said else ""
        return (
            f"{name}: the dealer was stopped: {', '.join(run.gone)} ended the connection"
            f" before the match was over{reason} (see {err_path})"
        )
    if result is None:
        return f"{name}: the dealer stopped without a result (see {err_path})"
    return None


def _last_dealer_message(err_path: Path) -> str | None:
    lines = [line for line in err_path.read_text(errors="replace").splitlines() if line.startswith(("ERROR", "WARNING"))]
    return lines[-1] if lines else None


async def _serve(
    config: MatchConfig,
    out: TextIO,
    err: TextIO,
    run: _Seating,
    *,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    with run.dealer_scope:
        run.result = await serve_match(config, stdout=out, stderr=err, task_status=task_status)
    run.dealer_done = True
    err.flush()
    run.scope.deadline = min(run.scope.deadline, trio.current_time() + AGENT_EXIT_S)  # agents exit at end of file


async def _agent_task(
    plan: MatchPlan, name: str, seat: int, bot: Bot, port: int, run: _Seating, resuming: bool
) -> None:
    try:
        await play("127.0.0.1", port, plan.game, make_strategy(agent_spec(plan, name, bot), plan.game, seed=bot.seed))
    except (AgentError, OSError) as error:
        connection = isinstance(error, (ConnectionLost, OSError))
        run.fail(f"agent {bot.name} (seat {seat + 1}) failed: {error}", connection=connection)
    else:
        run.left(f"agent {bot.name} (seat {seat + 1})")


async def _agent_process(
    plan: MatchPlan, name: str, seat: int, bot: Bot, port: int, run: _Seating, resuming: bool
) -> None:
    """``python -m agent`` with its output in ``<match>.player<N>.std/.err`` (as
    play_match.pl), in a session of its own: a Ctrl-C at the terminal reaches
    only us. The agent ends when the dealer closes its connection, or on SIGTERM
    from :meth:`_Seating.stop_dealer` (silently: it has no SIGTERM handler)."""
    command = [sys.executable, "-m", "agent", plan.agent_game, "127.0.0.1", str(port)]
    command += ["--strategy", str(agent_spec(plan, name, bot)), "--seed", str(bot.seed)]
    err_path = plan.run_dir / f"{name}.player{seat + 1}.err"
    mode = "ab" if resuming else "wb"
    with open(plan.run_dir / f"{name}.player{seat + 1}.std", mode) as out, open(err_path, mode) as err:
        process = await trio.lowlevel.open_process(command, stdout=out, stderr=err, start_new_session=True)
        run.processes.append(process)
        try:
            await process.wait()
        finally:
            if process.returncode is None:  # the seating was cancelled: it had its chance to exit
                process.kill()
                with trio.CancelScope(shield=True):
                    await process.wait()
    who = f"agent {bot.name} (seat {seat + 1})"
    if run.stopped:
        return  # terminated by us on a signal
    if process.returncode != 0:
        lines = err_path.read_text(errors="replace").strip().splitlines()
        last = f": {lines[-1]}" if lines else ""
        connection = process.returncode == agent_cli.EXIT_CONNECTION  # refused, reset or lost
        run.fail(f"{who} exited with status {process.returncode}{last} (see {err_path})", connection=connection)
    else:
        run.left(who)


async def _follow_log(path: Path, start: int, progress: tqdm[Any]) -> None:
    """Advance ``progress`` by the STATE lines the dealer appends to its log after ``start``."""
    while not path.exists():
        await trio.sleep(_POLL_S)
    with open(path, "rb") as log:
        log.seek(start)
        pending = b""
        while True:
            pending += log.read()
            lines = pending.split(b"\n")
            pending = lines.pop()
            progress.update(sum(1 for line in lines if line.startswith(b"STATE:")))
            await trio.sleep(_POLL_S)
