"""A person at a table against bots, in this one process (trio): our dealer
(:func:`dealer.server.serve_match`), one agent task per opponent, the person's
seat (:class:`agent.human.seat.HumanSeat`, an ACPC client like any agent) and
either the web table (:mod:`agent.human.web`) or the terminal table
(:mod:`agent.human.tui`). ``arena play`` (:mod:`arena.commands.play`) is its
front end.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from agent.client import AgentError, play
from agent.human.seat import HumanSeat, Limits
from agent.human.tui import Quit, in_colour, read_stdin_line, run_tui
from agent.human.web import Pages, new_token, serve_table
from analysis.hand_files import read_hands
from analysis.phh import phh_problem, write_phh
from arena.match.seats import aborted_text
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game
from poker.protocol import MatchState
from poker.state import Action
from strategies.base import Spec, Strategy

__all__ = ["PlayPlan", "Session", "play_session", "write_phh_file", "HOST", "MATCH_NAME"]

HOST: Final = "127.0.0.1"
DEFAULT_HANDS: Final = 100
DEFAULT_T_RESPONSE_MS: Final = 600_000
DEFAULT_T_HAND_MS: Final = 1_800_000
DEFAULT_T_PER_HAND_MS: Final = 600_000
DEFAULT_LINGER_S: Final = 10.0
_FINISH_S: Final = 5.0
MATCH_NAME: Final = "match"


@dataclass(frozen=True)
class PlayPlan:
    game: Game
    game_arg: str
    hands: int
    seed: int
    names: tuple[str, ...]  # seat order
    human: int  # the person's seat
    opponents: tuple[tuple[int, Spec, Strategy], ...]  # (seat, spec, strategy)
    run_dir: Path
    limits: Limits
    t_hand_ms: int
    t_per_hand_ms: int


@dataclass
class Session:
    """What happened, for the exit status and the closing lines."""

    result: MatchResult | None = None
    failures: list[str] = field(default_factory=list)
    left: str | None = None  # why the person left early
    dealer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    dealer_done: trio.Event = field(default_factory=trio.Event)


async def play_session(plan: PlayPlan, tui: bool, fd: int | None, linger: float) -> Session:
    """Play ``plan`` at the web table served on the bound socket ``fd``
    (:func:`agent.human.web.bind_table`) or, with ``tui``, in this terminal; what happened."""
    session = Session()
    title = f"{plan.game_arg}, seed {plan.seed}"
    seat = HumanSeat(plan.game, plan.names, plan.human, hands=plan.hands, limits=plan.limits, title=title)
    shutdown = trio.Event()
    pages = Pages()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_signals, session, seat, shutdown)
        if fd is not None:
            url: str = await nursery.start(serve_table, seat, fd, new_token(), pages, shutdown)
            print(f"arena play: your table is at {url}", flush=True)
        config = MatchConfig(
            match_name=MATCH_NAME,
            game=plan.game,
            game_path=plan.game_arg,
            num_hands=plan.hands,
            seed=plan.seed,
            names=plan.names,
            t_response_ms=plan.limits.response_ms,
            t_hand_ms=plan.t_hand_ms,
            t_per_hand_ms=plan.t_per_hand_ms,
            log_dir=plan.run_dir,
            quiet=True,
        )
        try:
            ports: tuple[int, ...] = await nursery.start(_dealer, config, plan.run_dir, session, seat)
        except RuntimeError:
            shutdown.set()
            return session
        for seat_index, spec, strategy in plan.opponents:
            nursery.start_soon(_bot, plan, seat_index, strategy, ports[seat_index], session)
        nursery.start_soon(seat.run, HOST, ports[plan.human])
        if tui:
            await _terminal(seat, session)
            shutdown.set()
        else:
            await seat.over.wait()
            await _linger(pages, linger, shutdown)
        with trio.move_on_after(_FINISH_S):  # the dealer closes the bots' connections as it ends
            await session.dealer_done.wait()
        nursery.cancel_scope.cancel()  # the signal watcher, and any bot still stuck
    return session


async def _dealer(
    config: MatchConfig,
    run_dir: Path,
    session: Session,
    seat: HumanSeat,
    *,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    try:
        with open(run_dir / f"{MATCH_NAME}.out", "w") as out, open(run_dir / f"{MATCH_NAME}.err", "w") as err:
            with session.dealer_scope:
                session.result = await serve_match(config, stdout=out, stderr=err, task_status=task_status)
    finally:
        session.dealer_done.set()
    result = session.result
    if result is not None and result.aborted:
        seat.end(aborted_text(result))
    elif session.left:
        seat.end(session.left)


async def _bot(plan: PlayPlan, seat: int, strategy: Strategy, port: int, session: Session) -> None:
    """One bot's connection. Its decisions run in a worker thread, so a bot that
    thinks for a while (a re-solving one) does not stall the web table."""

    async def decide(view: MatchState) -> Action:
        return await trio.to_thread.run_sync(strategy.act, view)

    try:
        await play(HOST, port, plan.game, strategy, decide=decide)
    except (AgentError, OSError) as error:
        if session.left is None and (session.result is None or not session.result.aborted):
            session.failures.append(f"bot {plan.names[seat]} (seat {seat + 1}) failed: {error}")


async def _terminal(seat: HumanSeat, session: Session) -> None:
    colour = sys.stdout.isatty()

    def write(line: str) -> None:
        print(in_colour(line) if colour else line, flush=True)

    try:
        await run_tui(seat, read_stdin_line, write)
    except Quit as why:
        _leave(session, seat, str(why))


def _leave(session: Session, seat: HumanSeat, why: str) -> None:
    if session.left is None:
        session.left = why
    session.dealer_scope.cancel()
    seat.end(why)


async def _linger(pages: Pages, linger: float, shutdown: trio.Event) -> None:
    """Serve the final table until no page has been open for ``linger`` seconds."""
    while not shutdown.is_set():
        if pages.count == 0:
            with trio.move_on_after(linger):
                await pages.changed.wait()
                continue
            break
        await pages.changed.wait()
    shutdown.set()


async def _watch_signals(session: Session, seat: HumanSeat, shutdown: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            if not session.dealer_done.is_set():  # after the match, Ctrl-C just closes the table
                _leave(session, seat, "interrupted")
            shutdown.set()


def write_phh_file(plan: PlayPlan) -> Path | None:
    """The run's finished hands as PHH, ``match.phhs`` beside its ACPC log
    (:mod:`analysis.phh`), for the poker world's tools; the file, or None
    where PHH has no such game (Kuhn and Leduc poker) or no hand finished.

    Raises:
        HandsError: the log cannot be read.
        OSError: the file cannot be written.
    """
    log = plan.run_dir / f"{MATCH_NAME}.log"
    if phh_problem(plan.game) is not None or not log.exists():
        return None
    hands = read_hands(log, plan.game, skip_damaged=True)  # a person who left may leave a hand half-written
    if not len(hands):
        return None
    path = plan.run_dir / f"{MATCH_NAME}.phhs"
    path.write_text("".join(write_phh(hands)), encoding="utf-8")
    return path
