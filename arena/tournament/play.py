"""The matches of a tournament: the schedule, and one match played anywhere.

:func:`schedule` lists every pairing (triple) in every series as a
:class:`MatchJob`, plain data that pickles to a process pool or a Dask worker;
:func:`play_match` plays one in a directory of its own and returns its
:class:`MatchRecord`. Either way the match is an :class:`arena.match.MatchPlan`
(an external command a :class:`~arena.match.Command` seat, a submitted agent
a :class:`~arena.match.seats.Sandboxed` one, started afresh in each
seating): played through :func:`arena.match.run_plan` when every bot is
ours, seating by seating through :mod:`arena.tournament.external` when one
is an external command or a submitted agent (where a bot that fails
forfeits instead of failing the match). A match plays every seating on the
same cards (duplicate), or with ``duplicate = false`` the one seating its
series' turn gives.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import trio

from arena.match import AGENT_EXIT_S, Bot, Command, MatchError, MatchPlan, agent_seed, run_plan, score_seatings
from arena.match.seats import Sandboxed
from arena.tournament.external import ABORT_GRACE_S, forfeit_charges, play_seatings
from arena.tournament.config import Config, Entrant
from dealer.budget import TimeLimits
from poker.gamedef import format_game, parse_game
from strategies.base import Spec

__all__ = ["MatchJob", "MatchRecord", "schedule", "play_match", "MatchError", "MatchInterrupted", "FORFEIT"]

#: A forfeit line as a match records it (:func:`_play_with_commands`), in its parts: the
#: match's key, the seating's name, the bot, its seat (from 1), the hands it forfeits, why.
FORFEIT: Final = re.compile(
    r"(?P<match>\S+) (?P<seating>\S+): (?P<bot>\S+) \(seat (?P<seat>\d+)\) forfeits hands (?P<first>\d+)\.\.(?P<last>\d+): (?P<reason>.*)",
    re.DOTALL,
)


class MatchInterrupted(MatchError):
    """An interrupt (Ctrl-C, or SIGTERM passed on) stopped the match: a pool
    worker that sees one plays no further match (the runner's ``_play``)."""


@dataclass(frozen=True)
class MatchJob:
    """One match: a pairing (or triple) in one series, in every seating. Plain
    data, so that it pickles to a pool or a Dask worker."""

    key: str  # "s<series>:<name>:<name>[:<name>]"
    series: int
    game_text: str
    game_arg: str
    game_file: str | None
    bots: tuple[Entrant, ...]
    seed: int
    hands: int
    limits: tuple[int, int, int, int]
    in_process: bool
    matches_dir: str  # absolute: the attempt directories go under it
    duplicate: bool = True

    @property
    def seatings(self) -> tuple[tuple[int, ...], ...]:
        """Every seating of the bots (duplicate), else the series' turn of them."""
        every = tuple(itertools.permutations(range(len(self.bots))))
        return every if self.duplicate else (every[self.series % len(every)],)

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)


@dataclass(frozen=True)
class MatchRecord:
    """A finished match. ``values[i]``: ``players[i]``'s chips over all
    seatings; ``hands``: hands each player played (hands x seatings);
    ``seat_values[s]``: seating s's totals in seat order (its players in
    ``seatings[s]``, indices into ``players``), forfeited hands' charges
    included; ``forfeits``: one line per seat that forfeited a seating."""

    key: str
    players: tuple[str, ...]
    values: tuple[float, ...]
    hands: int
    seatings: tuple[tuple[int, ...], ...]
    seat_values: tuple[tuple[float, ...], ...]
    logs: tuple[str, ...]
    warnings: int
    forfeits: tuple[str, ...] = ()


def schedule(config: Config) -> list[MatchJob]:
    """Every pairing (triple) in every series, series first: series k deals with ``seed + k``."""
    groups = list(itertools.combinations(config.bots, config.game.num_players))
    game_text = format_game(config.game)
    matches_dir = str((config.output / "matches").resolve())
    return [
        MatchJob(
            key=f"s{series}:{':'.join(bot.name for bot in group)}",
            series=series,
            game_text=game_text,
            game_arg=config.game_arg,
            game_file=config.game_file,
            bots=group,
            seed=config.seed + series,
            hands=config.hands,
            limits=config.limits,
            in_process=config.in_process,
            matches_dir=matches_dir,
            duplicate=config.duplicate,
        )
        for series in range(config.series)
        for group in groups
    ]


def _claim_dir(matches_dir: Path, key: str) -> Path:
    """A directory no other attempt at this match uses (``mkdir`` is atomic)."""
    stem = key.replace(":", "_")
    matches_dir.mkdir(parents=True, exist_ok=True)
    for attempt in itertools.count(1):
        path = matches_dir / (stem if attempt == 1 else f"{stem}.{attempt}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")  # pragma: no cover


def play_match(job: MatchJob) -> MatchRecord:
    """Play one match in a directory of its own with fresh agents; runs
    anywhere (a pool process, a Dask worker thread).

    Raises:
        MatchError: the dealer aborted or an agent of ours failed.
        MatchInterrupted: an interrupt stopped it.
    """
    external = any(bot.command or bot.sandboxed for bot in job.bots)
    plan = MatchPlan(
        game=parse_game(job.game_text, source=job.game_arg),
        game_arg=job.game_arg,
        hands=job.hands,
        seed=job.seed,
        bots=tuple(_bot(job, i) for i in range(len(job.bots))),
        seatings=job.seatings,
        run_dir=_claim_dir(Path(job.matches_dir), job.key),
        in_process=job.in_process,
        limits=TimeLimits(*job.limits),
        game_file=job.game_file,
        match_deadline=external,  # nobody watches: a seating cannot outlast what its limits allow
        after_abort_s=ABORT_GRACE_S if external else AGENT_EXIT_S,
    )
    if external:
        return _play_with_commands(job, plan)
    outcome = trio.run(run_plan, plan)
    results = outcome.results
    if outcome.interrupted or not all(r.complete for r in results):
        raise MatchInterrupted(f"{job.key}: interrupted (see {plan.run_dir})")
    score = score_seatings(plan, results, estimators=())  # a tournament ranks by chips: no estimator needed
    return MatchRecord(
        key=job.key,
        players=job.players,
        values=tuple(player.chips for player in score.players),
        hands=job.hands * len(plan.seatings),
        seatings=tuple(r.seating for r in results),
        seat_values=tuple(tuple(r.totals) for r in results),
        logs=tuple(str(plan.run_dir / f"{r.match_name}.log") for r in results),
        warnings=sum(r.warnings for r in results),
    )


def _bot(job: MatchJob, index: int) -> Bot:
    """Bot ``index`` of the match: an external command, run from its program's
    directory, a submitted agent in the sandbox (a new one in each seating),
    or one of ours (seated as the job's ``agents`` say)."""
    bot = job.bots[index]
    if bot.sandboxed is not None:
        return Bot.seated(bot.name, Sandboxed(Path(bot.sandboxed)))
    if bot.command:
        return Bot.seated(bot.name, Command(bot.command, cwd=str(Path(bot.command[0]).parent)))
    return Bot(_spec(bot), bot.name, agent_seed(job.seed, index))


def _spec(bot: Entrant) -> Spec:
    """The spec of one of our bots (an entrant without a command has one)."""
    if bot.spec is None:
        raise MatchError(f"bot {bot.name} has neither a strategy spec nor a command")
    return bot.spec


def _play_with_commands(job: MatchJob, plan: MatchPlan) -> MatchRecord:
    """A match with an external command or a submitted agent: :mod:`arena.tournament.external`
    plays the seatings; a seat that failed forfeits the hands of its seating
    it did not finish (:func:`arena.tournament.external.forfeit_charges`)."""
    seatings = plan.seatings
    outcomes = play_seatings(plan)
    values = [0.0] * len(job.bots)
    seat_values = []
    forfeits = []
    for seating, outcome in zip(seatings, outcomes):
        charges = forfeit_charges(plan.game, set(outcome.failed), outcome.hands_played, job.hands)
        totals = tuple(total + charge for total, charge in zip(outcome.totals, charges))
        seat_values.append(totals)
        for seat, bot in enumerate(seating):
            values[bot] += totals[seat]
        for seat, reason in sorted(outcome.failed.items()):
            forfeits.append(
                f"{job.key} {outcome.match_name}: {job.bots[seating[seat]].name} (seat {seat + 1}) forfeits hands"
                f" {outcome.hands_played + 1}..{job.hands}: {reason}"
            )
    names = [plan.match_name(k) for k in range(len(seatings))]
    errs = [plan.run_dir / f"{name}.err" for name in names]
    return MatchRecord(
        key=job.key,
        players=job.players,
        values=tuple(values),
        hands=job.hands * len(seatings),
        seatings=tuple(seatings),
        seat_values=tuple(seat_values),
        logs=tuple(str(plan.run_dir / f"{name}.log") for name in names),
        warnings=sum(line.startswith("WARNING") for err in errs for line in err.read_text(errors="replace").splitlines()),
        forfeits=tuple(forfeits),
    )
