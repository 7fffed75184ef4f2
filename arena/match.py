"""A whole local match as a library: the plan (:class:`MatchPlan`: game, bots,
seatings, limits, run directory), playing it (:func:`run_plan`: our dealer in
this process, one agent per seat as a process or a trio task, stopping cleanly
on a signal), reading a run's logs back (:func:`read_seating`), and its results
(:func:`summarize`, :func:`best_estimates`, :func:`write_results`). ``arena
match`` (:mod:`arena.commands.match`) is its front end; tournaments play their
matches through it too.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

import numpy as np
import numpy.typing as npt
import trio
from tqdm import tqdm

from agent import cli as agent_cli
from agent.client import AgentError, ConnectionLost, play
from analysis.tables import table_lines
from analysis.stats import Estimate, Unit, format_chips, mean_ci
from dealer.log import LogError, read_log
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game
from strategies.base import make_strategy, parse_spec

__all__ = [
    "Bot",
    "MatchPlan",
    "SeatingResult",
    "AgentRow",
    "MatchError",
    "Stop",
    "Outcome",
    "seat_names",
    "agent_spec",
    "components_path",
    "agent_seed",
    "resumed_seed",
    "run_plan",
    "summarize",
    "format_table",
    "BestRow",
    "best_estimates",
    "format_best",
    "hand_means",
    "read_seating",
    "run_plan_with_signals",
    "write_results",
    "write_json",
]


#: How long agents get to exit after the dealer is done (validate_submission.pl's 10 s).
AGENT_EXIT_S: Final = 10.0
#: How long the dealer may go on after an agent ended its connection (normally it is done).
AGENT_GONE_S: Final = 5.0
_POLL_S: Final = 0.2
PLAN_FORMAT: Final = 1
DEFAULT_T_RESPONSE_MS: Final = 600000
DEFAULT_T_HAND_MS: Final = 600000
DEFAULT_T_PER_HAND_MS: Final = 7000
NO_START_TIMEOUT: Final = -1


class MatchError(Exception):
    """The match could not be completed; the message says which part failed and where to look."""


@dataclass(frozen=True)
class Bot:
    """One agent: its strategy spec, its seat name and its strategy seed."""

    spec: str
    name: str
    seed: int


@dataclass(frozen=True)
class MatchPlan:
    """Everything needed to play a match (and its duplicate seatings)."""

    game: Game
    game_arg: str  # the GAME argument as given: a short name or a file path
    hands: int
    seed: int
    bots: tuple[Bot, ...]
    seatings: tuple[tuple[int, ...], ...]  # per seating, the bot index in each seat
    run_dir: Path
    in_process: bool = False
    t_response_ms: int = DEFAULT_T_RESPONSE_MS
    t_hand_ms: int = DEFAULT_T_HAND_MS
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS
    start_timeout_ms: int = NO_START_TIMEOUT
    game_file: str | None = None  # absolute path when GAME is a file, for agents started elsewhere

    @property
    def duplicate(self) -> bool:
        return len(self.seatings) > 1

    @property
    def agent_game(self) -> str:
        """The GAME argument for agent processes."""
        return self.game_file or self.game_arg

    def match_name(self, index: int) -> str:
        return "match" if len(self.seatings) == 1 else f"match.{index + 1}"


@dataclass(frozen=True)
class SeatingResult:
    """One seating as its ``.log`` has it. ``values[h, b]`` is bot b's result in
    hand h, in chips, NaN for hands not played; ``totals`` are per seat."""

    match_name: str
    seating: tuple[int, ...]
    values: npt.NDArray[np.float64]
    totals: tuple[float, ...]
    hands_played: int
    complete: bool  # every hand and the SCORE line are in the log
    warnings: int


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_plan` got: a result per seating (empty ones for seatings
    not reached), and whether a signal stopped it."""

    results: tuple[SeatingResult, ...]
    interrupted: bool

    @property
    def hands_played(self) -> int:
        return sum(r.hands_played for r in self.results)


def seat_names(specs: Sequence[str]) -> tuple[str, ...]:
    """Strategy names, numbered ``-1``, ``-2``… where the same name appears twice."""
    names = [parse_spec(spec)[0] for spec in specs]
    repeated = {name for name in names if names.count(name) > 1}
    seen: dict[str, int] = {}
    result = []
    for name in names:
        if name in repeated:
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}-{seen[name]}"
        result.append(name)
    return tuple(result)


def agent_seed(match_seed: int, index: int) -> int:
    """A 32-bit strategy seed for the bot at ``index``, fixed by the match seed."""
    return int(np.random.SeedSequence([match_seed, index]).generate_state(1)[0])


def resumed_seed(match_seed: int, index: int, first_hand: int) -> int:
    """The seed of the bot at ``index`` when it joins a resumed seating at hand
    ``first_hand`` > 0 (the number of hands that seating's log already holds)."""
    return int(np.random.SeedSequence([match_seed, index, first_hand]).generate_state(1)[0])


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
        parts.append(f"the dealer aborted after {result.hands_played} hands: {reason} (see {err_path})")
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


def components_path(run_dir: Path, match_name: str, bot_name: str) -> Path:
    """Where a portfolio agent records which component played each hand: beside
    the seating's log, ``<match>.<name>.components.csv`` (one ``hand_id,component``
    line per hand; :func:`analysis.hands.read_components` joins it to the hands)."""
    return run_dir / f"{match_name}.{bot_name}.components.csv"


def agent_spec(plan: MatchPlan, match_name: str, bot: Bot) -> str:
    """The spec an agent is started with: the bot's, plus ``log=`` for a
    portfolio that does not name its own file, so that every hand of the run
    says which component played it (:func:`components_path`). The ACPC
    protocol has no channel for it: the choice is the agent's own state."""
    name, options = parse_spec(bot.spec)
    if name != "portfolio" or "log" in options:
        return bot.spec
    path = components_path(plan.run_dir, match_name, bot.name).resolve()
    if "," in str(path):  # would split the spec's options: leave the portfolio unrecorded
        return bot.spec
    return f"{bot.spec}{',' if ':' in bot.spec else ':'}log={path}"


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
    command += ["--strategy", agent_spec(plan, name, bot), "--seed", str(bot.seed)]
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


def read_seating(plan: MatchPlan, index: int) -> SeatingResult:
    """A seating as its ``.log`` stands (no log: no hands).

    Raises:
        MatchError: an unreadable log, or one with hands that do not belong.
    """
    seating = plan.seatings[index]
    name = plan.match_name(index)
    log_path = plan.run_dir / f"{name}.log"
    err_path = plan.run_dir / f"{name}.err"
    values = np.full((plan.hands, len(plan.bots)), np.nan)
    totals = [0.0] * len(seating)
    if not log_path.exists():
        return SeatingResult(name, seating, values, tuple(totals), 0, False, 0)
    try:
        contents = read_log(log_path, plan.game)
    except LogError as error:
        raise MatchError(str(error)) from None
    bot_of_name = {plan.bots[b].name: b for b in seating}
    seat_of_name = {plan.bots[b].name: s for s, b in enumerate(seating)}
    for state_line in contents.hands:
        hand = state_line.hand_id
        if hand >= plan.hands or not np.isnan(values[hand]).all() or set(state_line.names) != set(bot_of_name):
            raise MatchError(f"{log_path}: hand {hand} does not belong to this plan or appears twice")
        for name_, value in zip(state_line.names, state_line.values):
            values[hand, bot_of_name[name_]] = value
            totals[seat_of_name[name_]] += value  # in hand order, as the dealer adds them
    played = len(contents.hands)
    complete = contents.score is not None and played == plan.hands
    if complete and contents.score is not None:
        totals = list(contents.score[0])
    warnings = 0
    if err_path.exists():
        warnings = sum(1 for line in err_path.read_text(errors="replace").splitlines() if line.startswith("WARNING"))
    return SeatingResult(name, seating, values, tuple(totals), played, complete, warnings)


# -- results ----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentRow:
    """One line of the results table; ``estimate`` is in chips per hand."""

    bot: Bot
    total_chips: float
    estimate: Estimate


def hand_means(results: Sequence[SeatingResult]) -> npt.NDArray[np.float64]:
    """``[hands, bots]``: each hand averaged over the seatings that finished it;
    hands no seating finished are left out."""
    stacked = np.array([r.values for r in results])  # [seatings, hands, bots]
    played = ~np.isnan(stacked[:, :, 0])
    counts = played.sum(axis=0)
    kept = counts > 0
    sums = np.where(np.isnan(stacked), 0.0, stacked).sum(axis=0)
    per_hand: npt.NDArray[np.float64] = sums[kept] / counts[kept, None]
    return per_hand


def summarize(plan: MatchPlan, results: Sequence[SeatingResult]) -> list[AgentRow]:
    """Per agent: chips over all seatings, and the (duplicate) per-hand mean.

    Raises:
        ValueError: fewer than two hands were played.
    """
    per_hand = hand_means(results)
    totals = [sum(r.totals[r.seating.index(b)] for r in results) for b in range(len(plan.bots))]
    return [AgentRow(bot, float(totals[b]), mean_ci(per_hand[:, b])) for b, bot in enumerate(plan.bots)]


def _title(plan: MatchPlan, results: Sequence[SeatingResult]) -> str:
    kind = f"duplicate over {len(plan.seatings)} seatings, " if plan.duplicate else ""
    played = [r.hands_played for r in results]
    if all(r.complete for r in results):
        hands = f"{plan.hands} hands"
    elif plan.duplicate:
        hands = f"partial: {'+'.join(map(str, played))} of {len(played)}x{plan.hands} hands"
    else:
        hands = f"partial: {played[0]} of {plan.hands} hands"
    return f"{plan.game_arg}: {hands}, seed {plan.seed}, {kind}run dir {plan.run_dir}"


def format_table(plan: MatchPlan, rows: Sequence[AgentRow], unit: Unit, results: Sequence[SeatingResult] = ()) -> str:
    """The title line, then one row per agent; every column as wide as its widest cell."""
    header = ("agent", "strategy", "total chips", unit.name, "95% CI")
    cells = [header]
    for row in rows:
        estimate = row.estimate.scaled(unit.per_chip)
        cells.append(
            (
                row.bot.name,
                row.bot.spec,
                format_chips(row.total_chips),
                f"{estimate.mean:.3f}",
                f"±{estimate.half_width:.3f}",
            )
        )
    # agent and strategy are left-aligned, the numbers right-aligned
    lines = [_title(plan, results), *table_lines(cells, left=(0, 1))]
    return "\n".join(lines)


@dataclass(frozen=True)
class BestRow:
    """An agent's best available estimate (:func:`best_estimates`), chips per hand."""

    bot: Bot
    estimator: str
    estimate: Estimate


def _per_hand_mean(hand_id: npt.NDArray[np.int64], values: npt.NDArray[np.float64]) -> Estimate:
    """The mean, with its interval, of each hand's values averaged over the
    seatings that played it (one seating: the values themselves)."""
    _, index = np.unique(hand_id, return_inverse=True)
    averaged = np.bincount(index, weights=values) / np.bincount(index)
    return mean_ci(averaged)


def best_estimates(plan: MatchPlan, results: Sequence[SeatingResult]) -> list[BestRow]:
    """Each agent's lowest-variance unbiased estimate that the match allows,
    from the seatings' logs; empty when none beats the money of the table.

    * no-limit: **all-in adjusted** (:mod:`analysis.allin`): hands all in
      before the board was complete valued at their expectation over the rest;
    * two-player limit games whose public tree can be built (Kuhn, Leduc):
      **AIVAT** (:func:`analysis.estimators.aivat_column`; hold'em's equity value
      function costs too much per hand for the end of every match: ``arena
      analyze --strategy`` has it) for an agent whose strategy
      states its policy, with the value function of that strategy against
      itself, fixed before the match; where both agents' strategies do, the one
      with the narrower interval; the other agent's is its negative (``-aivat
      of NAME``: the game is zero-sum), so the two rows agree.

    With ``--duplicate`` each hand's values are averaged over the seatings first,
    as in the table. Logs the estimators cannot read give no rows."""
    from analysis.allin import AllInError, adjusted_hands
    from analysis.estimators import EstimatorError, aivat_column
    from analysis.hands import HandsError, concat, read_hands

    try:
        tables = [read_hands(plan.run_dir / f"{r.match_name}.log", plan.game) for r in results if r.hands_played]
        every = concat(tables)
    except HandsError:
        return []
    game = plan.game
    if not game.is_limit:
        try:
            adjusted, _ = adjusted_hands(every)
        except AllInError:
            return []
        rows = []
        for bot in plan.bots:
            chips = adjusted.name_values(bot.name)
            played = ~np.isnan(chips)
            rows.append(BestRow(bot, "all-in adjusted", _per_hand_mean(adjusted.hand_id[played], chips[played])))
        return rows
    if game.num_players != 2:
        return []
    columns: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
    for b, bot in enumerate(plan.bots):
        try:
            hands, column = aivat_column(every, bot.name, bot.spec, tree_only=True)
        except EstimatorError:
            continue
        columns[b] = (hands.hand_id, column)
    if not columns:
        return []
    estimates = {b: _per_hand_mean(*column) for b, column in columns.items()}
    best = min(estimates, key=lambda b: estimates[b].half_width)
    other = 1 - best
    hand_id, column = columns[best]
    negated = BestRow(plan.bots[other], f"-aivat of {plan.bots[best].name}", _per_hand_mean(hand_id, -column))
    rows = [BestRow(plan.bots[best], "aivat", estimates[best]), negated]
    return sorted(rows, key=lambda row: plan.bots.index(row.bot))


def format_best(plan: MatchPlan, rows: Sequence[BestRow], unit: Unit) -> str:
    """The lines :func:`best_estimates` adds below the results table."""
    kind = "; each hand averaged over its seatings" if plan.duplicate else ""
    cells = [("agent", "best estimator", unit.name, "95% CI")]
    for row in rows:
        estimate = row.estimate.scaled(unit.per_chip)
        cells.append((row.bot.name, row.estimator, f"{estimate.mean:.3f}", f"±{estimate.half_width:.3f}"))
    title = f"best unbiased estimate beside the money (lower variance{kind}):"
    return "\n".join([title, *table_lines(cells, left=(0, 1))])


def write_results(
    plan: MatchPlan, outcome: Outcome, rows: Sequence[AgentRow], unit: Unit, best: Sequence[BestRow] = ()
) -> None:
    partial = not all(r.complete for r in outcome.results)
    document = {
        "game": plan.game_arg,
        "hands": plan.hands,
        "seed": plan.seed,
        "unit": unit.name,
        "partial": partial,
        "hands_played": [r.hands_played for r in outcome.results],
        "matches": [
            {
                "name": r.match_name,
                "names": [plan.bots[b].name for b in r.seating],
                "hands_played": r.hands_played,
                "totals": list(r.totals),
                "warnings": r.warnings,
            }
            for r in outcome.results
        ],
        "agents": [
            {
                "name": row.bot.name,
                "strategy": row.bot.spec,
                "seed": row.bot.seed,
                "total_chips": row.total_chips,
                **_estimate_fields(row.estimate, unit),
            }
            for row in rows
        ],
    }
    document["best_estimates"] = [
        {"name": row.bot.name, "estimator": row.estimator, **_estimate_fields(row.estimate, unit)} for row in best
    ]
    write_json(plan.run_dir / "results.json", document)


def _estimate_fields(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    """``mean``, ``ci95`` (in the game's unit) and ``hands`` of results.json."""
    return {"mean": estimate.mean * unit.per_chip, "ci95": estimate.half_width * unit.per_chip, "hands": estimate.n}


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write whole or not at all (a signal or full disk leaves the old file)."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(json.dumps(document, indent=2) + "\n")
    scratch.replace(path)
