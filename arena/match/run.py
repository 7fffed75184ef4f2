"""Playing a :class:`~arena.match.plan.MatchPlan`: each seating in turn through
the seat runner (:func:`arena.match.seats.run_seating`) with fresh agents of
ours, resumed where its log stops, following the log for a progress bar and
stopping cleanly on SIGINT/SIGTERM. Any failure (an agent's fault, a dealer
that aborted) fails the match: :class:`~arena.match.plan.MatchError`, with the
causes in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import trio
from tqdm import tqdm

from agent.cli import EXIT_CONNECTION
from arena.match.plan import Bot, MatchError, MatchPlan, Outcome, SeatingResult, agent_spec, resumed_seed
from arena.match.results import read_seating
from arena.match.seats import InProcess, Seat, SeatingRun, Stop, aborted_text, agent_command, run_seating, watch_signals
from dealer.server import MatchConfig

__all__ = ["run_plan", "run_plan_with_signals"]

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
    seats = [_seat(plan, name, bot) for bot in bots]
    log_start = log_path.stat().st_size if log_path.exists() else 0
    async with trio.open_nursery() as outer:
        if progress is not None:
            outer.start_soon(_follow_log, log_path, log_start, progress)
        run = await run_seating(config, seats, stop=stop)
        outer.cancel_scope.cancel()
    after = read_seating(plan, index)
    if stop.interrupted:
        return after
    if progress is not None:
        progress.update((index + 1) * plan.hands - progress.n)
    message = _failure(name, config.names, run, err_path)
    if message is not None:
        raise MatchError(message)
    if not after.complete:
        raise MatchError(
            f"{log_path} holds {after.hands_played} of its {plan.hands} hands or lacks the SCORE line,"
            f" though the dealer finished (see {err_path})"
        )
    return after


def _seat(plan: MatchPlan, name: str, bot: Bot) -> Seat:
    """A bot of the plan: a task here, or ``python -m agent`` with its output
    in ``<match>.player<N>.std/.err`` (as play_match.pl), in a session of its
    own (a Ctrl-C at the terminal reaches only us)."""
    spec = agent_spec(plan, name, bot)
    return InProcess(spec, bot.seed) if plan.in_process else agent_command(plan.agent_game, spec, bot.seed)


def _failure(name: str, names: tuple[str, ...], run: SeatingRun, err_path: Path) -> str | None:
    """What went wrong in a seating, causes first: an agent's own fault (a bad
    line, an illegal action), then the dealer's abort, then agents that lost
    their connection, which is what a dealer that aborts does to them."""
    who = [f"agent {names[end.seat]} (seat {end.seat + 1})" for end in run.ends]
    parts = [f"{w} {end.describe()}" for w, end in zip(who, run.ends) if end.status not in (0, EXIT_CONNECTION)]
    result = run.result
    if result is not None and result.aborted is not None:
        parts.append(f"{aborted_text(result)} (see {err_path})")
    parts += [f"{w} {end.describe()}" for w, end in zip(who, run.ends) if end.status == EXIT_CONNECTION]
    if parts:
        return f"{name}: {'; then '.join(parts)}"
    gone = [w for w, end in zip(who, run.ends) if end.status == 0 and end.during]
    if result is None and gone:
        said = _last_dealer_message(err_path)
        reason = f"; the dealer's last message: {said}" if said else ""
        return (
            f"{name}: the dealer was stopped: {', '.join(gone)} ended the connection"
            f" before the match was over{reason} (see {err_path})"
        )
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
