"""``arena match GAME --hands N --seed S BOT BOT [BOT]``: a whole local match in one command.

Starts the dealer (in this process, :func:`dealer.server.serve_match`) and one
agent per seat (``python -m agent …`` processes by default, trio tasks with
``--in-process``), shows a progress bar, and leaves in the run directory what
``play_match.pl`` leaves (SPEC.md §3.6): ``<match>.log``, the dealer's
``<match>.err`` and stdout ``<match>.out``, and each agent's
``<match>.player<N>.std/.err``; plus the dealer's hand records and
``results.json``. It then prints one row per agent: the mean result per hand in
the game's unit with its 95% interval (:mod:`analysis.stats`). The dealer runs
quiet (``-q``), so its ``.err`` holds only the header, warnings and errors; the
table is followed by the number of WARNING lines, if any. The progress bar
follows the STATE lines the dealer appends to its ``.log``.

Duplicate (``--duplicate``, SPEC.md §3.5, §4.1): the same seed is played once per
seating, with fresh agents each time: seats reversed heads-up, all six
permutations three-handed. Cards go to positions, so every agent is dealt every
other agent's cards in the same spots. An agent's duplicate value for hand *h*
is its result in hand *h* averaged over the seatings, and the interval is over
those per-hand averages.

Seat names are the strategy names, numbered when they repeat
(``always-call-1``, ``always-call-2``); each agent keeps its name and its seed
(derived from the match seed and its place on the command line) in every
seating, so a seeded random agent plays the same stream each time.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
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

from agent.client import AgentError, play
from analysis.stats import Estimate, Unit, mean_ci, unit_of
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game, GameDefError, load_game
from poker.protocol import ProtocolError, format_value, parse_state_line
from strategies.base import StrategyError, make_strategy, parse_spec

__all__ = [
    "Bot",
    "MatchPlan",
    "SeatingResult",
    "AgentRow",
    "MatchError",
    "seat_names",
    "agent_seed",
    "plan_from_args",
    "run_plan",
    "summarize",
    "format_table",
    "main",
]

#: How long agents get to exit after the dealer is done (validate_submission.pl's 10 s).
AGENT_EXIT_S: Final = 10.0
_POLL_S: Final = 0.2


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
    t_response_ms: int = 600000
    t_hand_ms: int = 600000
    t_per_hand_ms: int = 7000
    start_timeout_ms: int = -1

    def match_name(self, index: int) -> str:
        return "match" if len(self.seatings) == 1 else f"match.{index + 1}"


@dataclass(frozen=True)
class SeatingResult:
    """One dealer run. ``values[h, b]`` is bot b's result in hand h, in chips."""

    match_name: str
    seating: tuple[int, ...]
    result: MatchResult
    values: npt.NDArray[np.float64]
    warnings: int


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


async def run_plan(plan: MatchPlan, progress: tqdm[Any] | None = None) -> list[SeatingResult]:
    """Play every seating in turn, each with fresh agents.

    Raises:
        MatchError: the dealer aborted or an agent failed.
    """
    return [await _run_seating(plan, k, progress) for k in range(len(plan.seatings))]


async def _run_seating(plan: MatchPlan, index: int, progress: tqdm[Any] | None) -> SeatingResult:
    seating = plan.seatings[index]
    name = plan.match_name(index)
    config = MatchConfig(
        match_name=name,
        game=plan.game,
        game_path=plan.game_arg,
        num_hands=plan.hands,
        seed=plan.seed,
        names=tuple(plan.bots[b].name for b in seating),
        t_response_ms=plan.t_response_ms,
        t_hand_ms=plan.t_hand_ms,
        t_per_hand_ms=plan.t_per_hand_ms,
        start_timeout_ms=plan.start_timeout_ms,
        log_dir=plan.run_dir,
        quiet=True,
    )
    results: list[MatchResult] = []
    log_path = plan.run_dir / f"{name}.log"
    err_path = plan.run_dir / f"{name}.err"
    run_agent = _agent_task if plan.in_process else _agent_process
    if progress is not None and len(plan.seatings) > 1:
        progress.set_description(name)
    with open(plan.run_dir / f"{name}.out", "w") as out, open(err_path, "w") as err:
        async with trio.open_nursery() as outer:
            if progress is not None:
                outer.start_soon(_follow_log, log_path, progress)
            async with trio.open_nursery() as nursery:
                failures = _Failures(nursery.cancel_scope)
                serve = functools.partial(_serve, config, out, err, results, nursery.cancel_scope)
                try:
                    ports: tuple[int, ...] = await nursery.start(serve)
                except RuntimeError:  # the dealer could not open its files or ports and said so
                    if not results:
                        raise
                    ports = ()
                for seat, (bot, port) in enumerate(zip(seating, ports)):
                    nursery.start_soon(run_agent, plan, name, seat, plan.bots[bot], port, failures)
            outer.cancel_scope.cancel()
    if progress is not None:
        progress.update((index + 1) * plan.hands - progress.n)
    if failures.messages:
        raise MatchError(f"{name}: {'; '.join(failures.messages)}")
    result = results[0]
    if result.aborted is not None:
        raise MatchError(
            f"{name}: the dealer aborted after {result.hands_played} hands: {result.aborted} (see {err_path})"
        )
    warnings = sum(1 for line in err_path.read_text(errors="replace").splitlines() if line.startswith("WARNING"))
    values = _values_by_bot(log_path, plan, seating)
    return SeatingResult(name, seating, result, values, warnings)


async def _serve(
    config: MatchConfig,
    out: TextIO,
    err: TextIO,
    results: list[MatchResult],
    scope: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    results.append(await serve_match(config, stdout=out, stderr=err, task_status=task_status))
    scope.deadline = trio.current_time() + AGENT_EXIT_S  # agents exit at end of file


@dataclass
class _Failures:
    """Agent failures of one seating; the first one stops the seating."""

    scope: trio.CancelScope
    messages: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        self.messages.append(message)
        self.scope.cancel()


async def _agent_task(plan: MatchPlan, name: str, seat: int, bot: Bot, port: int, failures: _Failures) -> None:
    try:
        await play("127.0.0.1", port, plan.game, make_strategy(bot.spec, plan.game, seed=bot.seed))
    except (AgentError, OSError) as error:
        failures.add(f"agent {bot.name} (seat {seat + 1}) failed: {error}")


async def _agent_process(plan: MatchPlan, name: str, seat: int, bot: Bot, port: int, failures: _Failures) -> None:
    """``python -m agent`` with its output in ``<match>.player<N>.std/.err`` (as play_match.pl)."""
    command = [sys.executable, "-m", "agent", plan.game_arg, "127.0.0.1", str(port)]
    command += ["--strategy", bot.spec, "--seed", str(bot.seed)]
    err_path = plan.run_dir / f"{name}.player{seat + 1}.err"
    with open(plan.run_dir / f"{name}.player{seat + 1}.std", "wb") as out, open(err_path, "wb") as err:
        done = await trio.run_process(command, stdout=out, stderr=err, check=False)
    if done.returncode != 0:
        lines = err_path.read_text(errors="replace").strip().splitlines()
        last = f": {lines[-1]}" if lines else ""
        failures.add(f"agent {bot.name} (seat {seat + 1}) exited with status {done.returncode}{last} (see {err_path})")


async def _follow_log(path: Path, progress: tqdm[Any]) -> None:
    """Advance ``progress`` by the STATE lines the dealer appends to its log."""
    while not path.exists():
        await trio.sleep(_POLL_S)
    with open(path, "rb") as log:
        pending = b""
        while True:
            pending += log.read()
            lines = pending.split(b"\n")
            pending = lines.pop()
            progress.update(sum(1 for line in lines if line.startswith(b"STATE:")))
            await trio.sleep(_POLL_S)


def _values_by_bot(log_path: Path, plan: MatchPlan, seating: tuple[int, ...]) -> npt.NDArray[np.float64]:
    """``values[h, b]``: bot b's chips in hand h, from the log's STATE lines."""
    bot_of_name = {plan.bots[b].name: b for b in seating}
    values = np.full((plan.hands, len(plan.bots)), np.nan)
    with open(log_path) as log:
        for number, line in enumerate(log, start=1):
            if not line.startswith("STATE:"):
                continue
            try:
                state_line = parse_state_line(line, plan.game)
            except ProtocolError as error:
                raise MatchError(f"{log_path}:{number}: {error}") from None
            for name, value in zip(state_line.names, state_line.values):
                values[state_line.hand_id, bot_of_name[name]] = value
    if np.isnan(values).any():
        missing = int(np.isnan(values).any(axis=1).sum())
        raise MatchError(f"{log_path} lacks {missing} of its {plan.hands} hands")
    return values


@dataclass(frozen=True)
class AgentRow:
    """One line of the results table; ``estimate`` is in chips per hand."""

    bot: Bot
    total_chips: float
    estimate: Estimate


def summarize(plan: MatchPlan, results: Sequence[SeatingResult]) -> list[AgentRow]:
    """Per agent: chips over all seatings, and the (duplicate) per-hand mean."""
    per_hand = np.mean([r.values for r in results], axis=0)  # [hands, bots], averaged over seatings
    totals = np.sum([r.values.sum(axis=0) for r in results], axis=0)
    return [AgentRow(bot, float(totals[b]), mean_ci(per_hand[:, b])) for b, bot in enumerate(plan.bots)]


def format_table(plan: MatchPlan, rows: Sequence[AgentRow], unit: Unit) -> str:
    kind = f"duplicate over {len(plan.seatings)} seatings, " if len(plan.seatings) > 1 else ""
    lines = [f"{plan.game_arg}: {plan.hands} hands, seed {plan.seed}, {kind}run dir {plan.run_dir}"]
    width = max(len("agent"), *(len(r.bot.name) for r in rows))
    strategy_width = max(len("strategy"), *(len(r.bot.spec) for r in rows))
    header = f"{'agent':<{width}}  {'strategy':<{strategy_width}}  {'total chips':>12}  {unit.name:>11}  {'95% CI':>9}"
    lines.append(header)
    for row in rows:
        estimate = row.estimate.scaled(unit.per_chip)
        lines.append(
            f"{row.bot.name:<{width}}  {row.bot.spec:<{strategy_width}}  {format_value(row.total_chips):>12}"
            f"  {estimate.mean:>11.3f}  {'±' + format(estimate.half_width, '.3f'):>9}"
        )
    return "\n".join(lines)


def _write_results(plan: MatchPlan, results: Sequence[SeatingResult], rows: Sequence[AgentRow], unit: Unit) -> None:
    document = {
        "game": plan.game_arg,
        "hands": plan.hands,
        "seed": plan.seed,
        "unit": unit.name,
        "matches": [
            {
                "name": r.match_name,
                "names": [plan.bots[b].name for b in r.seating],
                "totals": list(r.result.totals),
                "warnings": r.warnings,
            }
            for r in results
        ],
        "agents": [
            {
                "name": row.bot.name,
                "strategy": row.bot.spec,
                "seed": row.bot.seed,
                "total_chips": row.total_chips,
                "mean": row.estimate.mean * unit.per_chip,
                "ci95": row.estimate.half_width * unit.per_chip,
                "hands": row.estimate.n,
            }
            for row in rows
        ],
    }
    (plan.run_dir / "results.json").write_text(json.dumps(document, indent=2) + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena match",
        description="Play a local match: our dealer plus one agent per BOT, then a results table.",
        epilog="BOT is a strategy spec NAME[:option=value,...] as for `arena agent --strategy`.",
    )
    parser.add_argument("game", metavar="GAME", help="game file or short game name (kuhn, leduc, hulhe, hunl, ...)")
    parser.add_argument("bots", metavar="BOT", nargs="+", help="one strategy per seat, in seat order")
    parser.add_argument("--hands", type=int, required=True, metavar="N", help="hands per match")
    parser.add_argument("--seed", type=int, required=True, metavar="S", help="card seed (0..2^32-1)")
    parser.add_argument("--duplicate", action="store_true", help="also play the other seatings with the same cards")
    parser.add_argument("--in-process", action="store_true", help="agents as tasks in this process, not processes")
    parser.add_argument("--run-dir", type=Path, metavar="DIR", help="default: runs/<time>-<game>-<seed>/")
    parser.add_argument("--t-response", type=int, default=600000, metavar="MS", help="per response (default 600000)")
    parser.add_argument("--t-hand", type=int, default=600000, metavar="MS", help="per seat and hand (default 600000)")
    parser.add_argument("--t-per-hand", type=int, default=7000, metavar="MS", help="average per hand (default 7000)")
    parser.add_argument(
        "--start-timeout", type=int, default=-1, metavar="MS", help="for all agents to connect (default: no limit)"
    )
    return parser


def _default_run_dir(game_arg: str, seed: int) -> Path:
    stem = Path(game_arg).name.removesuffix(".game")
    base = Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-{stem}-{seed}"
    candidates = (base if n == 0 else base.with_name(f"{base.name}.{n}") for n in itertools.count())
    return next(path for path in candidates if not path.exists())


def plan_from_args(args: argparse.Namespace) -> MatchPlan:
    """Check the arguments and build the plan.

    Raises:
        GameDefError, StrategyError: a bad game or strategy.
        MatchError: a bad combination (count of bots, hands, seed).
    """
    game = load_game(args.game)
    if len(args.bots) != game.num_players:
        raise MatchError(f"{args.game} is a {game.num_players}-player game, but {len(args.bots)} bots were given")
    if args.hands < 2:
        raise MatchError(f"--hands must be at least 2 (a confidence interval needs two hands), got {args.hands}")
    if not 0 <= args.seed < 2**32:
        raise MatchError(f"--seed must be in 0..4294967295, got {args.seed}")
    names = seat_names(args.bots)
    bots = tuple(Bot(spec, name, agent_seed(args.seed, i)) for i, (spec, name) in enumerate(zip(args.bots, names)))
    for bot in bots:
        make_strategy(bot.spec, game, seed=bot.seed)  # fail now, not in a seat
    seats = range(game.num_players)
    seatings = tuple(itertools.permutations(seats)) if args.duplicate else (tuple(seats),)
    run_dir = args.run_dir if args.run_dir is not None else _default_run_dir(args.game, args.seed)
    return MatchPlan(
        game=game,
        game_arg=args.game,
        hands=args.hands,
        seed=args.seed,
        bots=bots,
        seatings=seatings,
        run_dir=run_dir,
        in_process=args.in_process,
        t_response_ms=args.t_response,
        t_hand_ms=args.t_hand,
        t_per_hand_ms=args.t_per_hand,
        start_timeout_ms=args.start_timeout,
    )


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        plan = plan_from_args(args)
    except (GameDefError, StrategyError, MatchError) as error:
        print(f"arena match: error: {error}", file=sys.stderr)
        return 2
    try:
        plan.run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"arena match: error: cannot create the run directory: {error}", file=sys.stderr)
        return 1
    unit = unit_of(plan.game)
    total = plan.hands * len(plan.seatings)
    with tqdm(total=total, unit="hand", file=sys.stderr, disable=None, dynamic_ncols=True) as progress:
        try:
            results = trio.run(run_plan, plan, progress)
        except MatchError as error:
            progress.close()
            print(f"arena match: error: {error}", file=sys.stderr)
            return 1
    rows = summarize(plan, results)
    _write_results(plan, results, rows, unit)
    print(format_table(plan, rows, unit))
    warnings = sum(r.warnings for r in results)
    if warnings:
        print(f"dealer warnings: {warnings} (see the .err files in {plan.run_dir})")
    return 0
