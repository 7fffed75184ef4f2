"""A person at a table against bots, in this one process (trio): a
:class:`~arena.match.MatchPlan` played through :func:`arena.match.play_seating`
(our dealer, one agent task per opponent, each deciding in a worker thread so
that a bot that thinks does not stall the table), with the person's seat
(:class:`agent.human.seat.HumanSeat`, an ACPC client like any agent: a
:class:`~arena.match.Person` seat) and either the web table
(:mod:`agent.human.web`) or the terminal table (:mod:`agent.human.tui`).
``arena play`` (:mod:`arena.commands.play`) is its front end.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from agent.human.seat import LEFT, HumanSeat, Limits
from agent.human.tui import Quit, in_colour, read_stdin_line, run_tui
from agent.human.web import Pages, new_token, serve_table
from analysis.hand_files import read_hands
from analysis.phh import phh_problem, write_phh
from arena.match import Bot, InProcess, MatchPlan, Person, SeatingRun, Stop, play_seating
from dealer.budget import TimeLimits
from dealer.server import MatchResult
from poker.gamedef import Game
from strategies.base import Spec

__all__ = ["PlayPlan", "Session", "play_session", "write_phh_file", "HOST", "MATCH_NAME"]

HOST: Final = "127.0.0.1"
DEFAULT_HANDS: Final = 100
DEFAULT_LINGER_S: Final = 10.0
_FINISH_S: Final = 5.0
#: After the dealer aborted, the seconds before the seats still playing are
#: stopped: a person's seat waits on the person, not on the connection.
_ABORT_GRACE_S: Final = 1.0
MATCH_NAME: Final = "match"


@dataclass(frozen=True)
class PlayPlan:
    """A person's match: the bots in their seats (``opponents``: seat, spec,
    seed) and the person in seat ``human``, under ``limits`` (the dealer's: a
    person's, :data:`arena.match.PERSON_LIMITS`, unless told otherwise)."""

    game: Game
    game_arg: str
    hands: int
    seed: int
    names: tuple[str, ...]  # seat order
    human: int  # the person's seat
    opponents: tuple[tuple[int, Spec, int], ...]  # (seat, spec, strategy seed)
    run_dir: Path
    limits: TimeLimits

    def seat_limits(self) -> Limits:
        """What the person's clock shows: the dealer's limits, the match's as a whole."""
        return Limits(self.limits.response_ms, self.limits.hand_ms, self.limits.per_hand_ms * self.hands)

    def match_plan(self, seat: HumanSeat) -> MatchPlan:
        """The match, with ``seat`` in the person's place and each bot deciding in a worker thread."""
        bots = {s: Bot(spec, self.names[s], seed, InProcess(spec, seed, threaded=True)) for s, spec, seed in self.opponents}
        bots[self.human] = Bot.seated(self.names[self.human], Person(lambda names, index: seat))
        return MatchPlan(
            game=self.game,
            game_arg=self.game_arg,
            hands=self.hands,
            seed=self.seed,
            bots=tuple(bots[s] for s in range(len(self.names))),
            seatings=(tuple(range(len(self.names))),),
            run_dir=self.run_dir,
            in_process=True,
            limits=self.limits,
            host=HOST,
            match_names=(MATCH_NAME,),
            tlog=False,
            after_abort_s=_ABORT_GRACE_S,
        )


@dataclass
class Session:
    """What happened, for the exit status and the closing lines."""

    result: MatchResult | None = None
    failures: list[str] = field(default_factory=list)
    left: str | None = None  # why the person left early
    stop: Stop = field(default_factory=Stop)
    done: trio.Event = field(default_factory=trio.Event)  # the seating is over


async def play_session(plan: PlayPlan, tui: bool, fd: int | None, linger: float) -> Session:
    """Play ``plan`` at the web table served on the bound socket ``fd``
    (:func:`agent.human.web.bind_table`) or, with ``tui``, in this terminal; what happened."""
    session = Session()
    title = f"{plan.game_arg}, seed {plan.seed}"
    seat = HumanSeat(plan.game, plan.names, plan.human, hands=plan.hands, limits=plan.seat_limits(), title=title)
    shutdown = trio.Event()
    pages = Pages()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_signals, session, seat, shutdown)
        if fd is not None:
            url: str = await nursery.start(serve_table, seat, fd, new_token(), pages, shutdown)
            print(f"arena play: your table is at {url}", flush=True)
        try:
            await nursery.start(_match, plan.match_plan(seat), session)
        except RuntimeError:  # the dealer could not start: its result says why
            shutdown.set()
            return session
        if tui:
            await _terminal(seat, session)
            shutdown.set()
        else:
            await seat.over.wait()
            if seat.left:  # "leave the table" on the page: as q at the terminal table
                _leave(session, seat, LEFT)
            await _linger(pages, linger, shutdown)
        with trio.move_on_after(_FINISH_S):  # the dealer closes the bots' connections as it ends
            await session.done.wait()
        nursery.cancel_scope.cancel()  # the signal watcher, and any bot still stuck
    return session


async def _match(plan: MatchPlan, session: Session, *, task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED) -> None:
    """Play the match; ``task_status.started`` once the dealer listens."""
    try:
        run = await play_seating(plan, 0, stop=session.stop, task_status=task_status)
    finally:
        session.done.set()
    session.result = run.result
    session.failures += _failures(plan, run, session)


def _failures(plan: MatchPlan, run: SeatingRun, session: Session) -> list[str]:
    """The bots that failed on their own: not those the person's leaving or the
    dealer's abort cut off."""
    if session.left is not None or (run.result is not None and run.result.aborted):
        return []
    return [
        f"bot {plan.bots[end.seat].name} (seat {end.seat + 1}) failed: {end.detail}"
        for end in run.ends
        if end.status != 0 and plan.bots[end.seat].spec is not None
    ]


async def _terminal(seat: HumanSeat, session: Session) -> None:
    colour = sys.stdout.isatty()

    def write(line: str) -> None:
        print(in_colour(line) if colour else line, flush=True)

    try:
        await run_tui(seat, read_stdin_line, write)
    except Quit as why:
        _leave(session, seat, str(why))


def _leave(session: Session, seat: HumanSeat, why: str) -> None:
    """The person left: the dealer stops (the log keeps every finished hand)."""
    if session.left is None:
        session.left = why
        session.stop.signal()
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
            if not session.done.is_set():  # after the match, Ctrl-C just closes the table
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
