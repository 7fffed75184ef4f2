"""Playing a :class:`~arena.match.plan.MatchPlan`: the only place that turns a
match into dealer runs. :func:`seating_config` is a seating's dealer
(:class:`dealer.server.MatchConfig`) and :func:`play_seating` plays it through
the seat runner (:func:`arena.match.seats.run_seating`) with fresh agents,
resumed where its log stops, and says what became of each seat: a caller with
its own rules for a failure (a tournament's forfeits, the hosted arena's
aborted matches, ``arena play``'s closing lines) plays seatings so.

:func:`run_plan` plays every seating in turn, following the log for a
progress bar and stopping cleanly on SIGINT/SIGTERM; any failure (an agent's
fault, a dealer that aborted) fails the match:
:class:`~arena.match.plan.MatchError`, with the causes in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import trio
from tqdm import tqdm

from agent.cli import EXIT_CONNECTION
from arena.match.plan import MatchError, MatchPlan, Outcome, SeatingResult, agent_spec, resumed_seed
from arena.match.results import read_seating
from arena.match.seats import InProcess, Seat, SeatingRun, Stop, aborted_text, agent_command, run_seating, watch_signals
from dealer.server import MatchConfig

__all__ = ["seating_config", "play_seating", "run_plan", "run_plan_with_signals"]

_POLL_S: Final = 0.2


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
    """:func:`run_plan`, the first SIGINT/SIGTERM stopping the running seating
    (``Outcome.interrupted``), a second one everything."""
    stop = Stop()
    failed: MatchError | None = None
    async with trio.open_nursery() as nursery:
        await nursery.start(watch_signals, stop)
        try:
            outcome = await run_plan(plan, progress, stop)
        except MatchError as error:
            failed = error  # raised outside the nursery, not in an exception group
        nursery.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return outcome


def _resuming(plan: MatchPlan, index: int) -> bool:
    name = plan.match_name(index)
    return (plan.run_dir / f"{name}.log").exists() or (plan.run_dir / f"{name}.tlog").exists()


def seating_config(plan: MatchPlan, index: int) -> MatchConfig:
    """The dealer of seating ``index``: its files in the run directory (appended
    to, after the ``.tlog`` is replayed, where an earlier run left them)."""
    config = MatchConfig(
        match_name=plan.match_name(index),
        game=plan.game,
        game_path=plan.game_arg,
        num_hands=plan.hands,
        seed=plan.seed,
        names=tuple(plan.bots[b].name for b in plan.seatings[index]),
        ports=plan.seat_ports(index),
        host=plan.host,
        write_tlog=plan.tlog,
        append=_resuming(plan, index),  # with the .tlog: replay it, then play on (dealer -a -T)
        t_response_ms=plan.limits.response_ms,
        t_hand_ms=plan.limits.hand_ms,
        t_per_hand_ms=plan.limits.per_hand_ms,
        start_timeout_ms=plan.limits.start_timeout_ms,
        log_dir=plan.run_dir,
        quiet=True,
    )
    return config.with_match_deadline() if plan.match_deadline else config


async def play_seating(
    plan: MatchPlan,
    index: int,
    *,
    stop: Stop | None = None,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> SeatingRun:
    """Play seating ``index`` of ``plan`` with fresh agents, from where its log
    stops; ``task_status.started(ports)`` once its dealer listens (see
    :func:`arena.match.seats.run_seating`, whose run this returns).

    Raises:
        MatchError: the run directory's log cannot be read, or a bot of ours has no spec.
        StrategyError: an in-process seat's strategy cannot be built.
    """
    first_hand = read_seating(plan, index).hands_played if _resuming(plan, index) else 0
    config = seating_config(plan, index)
    seats = [_seat(plan, config.match_name, b, first_hand) for b in plan.seatings[index]]
    return await run_seating(config, seats, stop=stop, after_abort_s=plan.after_abort_s, task_status=task_status)


async def _run_seating(plan: MatchPlan, index: int, progress: tqdm[Any] | None, stop: Stop) -> SeatingResult:
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
    log_start = log_path.stat().st_size if log_path.exists() else 0
    async with trio.open_nursery() as outer:
        if progress is not None:
            outer.start_soon(_follow_log, log_path, log_start, progress)
        run = await play_seating(plan, index, stop=stop)
        outer.cancel_scope.cancel()
    after = read_seating(plan, index)
    if stop.interrupted:
        return after
    if progress is not None:
        progress.update((index + 1) * plan.hands - progress.n)
    names = tuple(plan.bots[b].name for b in plan.seatings[index])
    message = _failure(name, names, run, err_path)
    if message is not None:
        raise MatchError(message)
    if not after.complete:
        raise MatchError(
            f"{log_path} holds {after.hands_played} of its {plan.hands} hands or lacks the SCORE line,"
            f" though the dealer finished (see {err_path})"
        )
    return after


def _seat(plan: MatchPlan, name: str, index: int, first_hand: int) -> Seat:
    """Bot ``index`` of the plan: its own seat when it has one; else ours, a
    task here (an in-process plan, unless the bot asks for a ``process``) or
    ``python -m agent`` with its output in
    ``<match>.player<N>.std/.err`` (as play_match.pl), in a session of its own
    (a Ctrl-C at the terminal reaches only us), with a fresh seed when it joins
    a seating from hand ``first_hand`` > 0."""
    bot = plan.bots[index]
    if bot.seat is not None:
        return bot.seat
    seed = bot.seed if first_hand == 0 else resumed_seed(plan.seed, index, first_hand)
    spec = agent_spec(plan, name, bot)
    return InProcess(spec, seed) if plan.in_process and not bot.process else agent_command(plan.agent_game, spec, seed)


def _failure(name: str, names: tuple[str, ...], run: SeatingRun, err_path: Path) -> str | None:
    """What went wrong in a seating, causes first: an agent's own fault (a bad
    line, an illegal action), then the dealer's abort, then agents that lost
    their connection, which is what a dealer that aborts does to them."""
    who = [f"agent {names[end.seat]} (seat {end.seat + 1})" for end in run.ends]
    parts = [f"{w} {end.describe()}" for w, end in zip(who, run.ends) if end.status not in (0, EXIT_CONNECTION)]
    result = run.result
    if result is not None and result.aborted is not None:
        parts.append(f"{aborted_text(result)} (see {err_path})")
    lost = [f"{w} {end.describe()}" for w, end in zip(who, run.ends) if end.status == EXIT_CONNECTION]
    # A dealer stopped while it played (no result) is the cause, whether its agents saw their
    # connections end (0) or reset under them (3: the dealer dropped them with their line unread).
    gone = [
        f"{w} {'ended' if end.status == 0 else 'lost'} the connection"
        for w, end in zip(who, run.ends)
        if end.status in (0, EXIT_CONNECTION) and end.during
    ]
    if result is None and gone and not parts:
        said = _last_dealer_message(err_path)
        reason = f"; the dealer's last message: {said}" if said else ""
        return f"{name}: the dealer was stopped: {', '.join(gone)} before the match was over{reason} (see {err_path})"
    parts += lost
    if parts:
        return f"{name}: {'; then '.join(parts)}"
    if result is None:
        return f"{name}: the dealer stopped without a result (see {err_path})"
    return None


def _last_dealer_message(err_path: Path) -> str | None:
    lines = [line for line in err_path.read_text(errors="replace").splitlines() if line.startswith(("ERROR", "WARNING"))]
    return lines[-1] if lines else None


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
