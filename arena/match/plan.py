"""What a match is before it is played: the plan (:class:`MatchPlan`: game,
players, seatings, limits, where its dealer listens, run directory), the players
with their seat names and how each takes its seat, a seating's result as its
log has it, and the spec each agent of ours is started with.

Every caller that plays a match (``arena match``, tournaments, ``arena play``,
the hosted arena and its web tables) describes it as a :class:`MatchPlan` and
plays it through :mod:`arena.match.run`: the only place that turns a match
into dealer runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from arena.match.seats import AGENT_EXIT_S, Seat
from dealer.budget import TimeLimits
from poker.gamedef import Game
from strategies.base import Spec, StrategyError

__all__ = [
    "MatchError",
    "Bot",
    "MatchPlan",
    "SeatingResult",
    "Outcome",
    "seat_names",
    "agent_seed",
    "resumed_seed",
    "components_path",
    "values_path",
    "agent_spec",
    "PLAN_FORMAT",
    "AGENT_LIMITS",
    "PERSON_LIMITS",
    "NO_START_TIMEOUT",
]


PLAN_FORMAT: Final = 1
NO_START_TIMEOUT: Final = -1
#: An agent's time limits, the one set of defaults: the reference dealer's own
#: (600 s an action, 600 s a hand, 7 s a hand on average over the match; no
#: limit on connecting), which ``arena match``, tournaments and the dealer use
#: unless told otherwise.
AGENT_LIMITS: Final = TimeLimits()
#: A person's at a table (``arena play``, the hosted arena's web tables): the
#: agent's, with thirty minutes a hand and ten a hand on average, as a person
#: thinks and pauses where a program does not.
PERSON_LIMITS: Final = dataclasses.replace(AGENT_LIMITS, hand_ms=1_800_000, per_hand_ms=600_000)


class MatchError(Exception):
    """The match could not be completed; the message says which part failed and where to look."""


@dataclass(frozen=True)
class Bot:
    """One player of a match: its strategy spec and seed when it is one of ours
    (``spec`` None: an external command, a remote agent or a person, whose
    policy we do not know), its seat name, and how it takes its seat.

    ``seat`` None: our strategy as the plan says (in-process with
    ``MatchPlan.in_process``, else ``python -m agent``; ``process``: as
    ``python -m agent`` in any plan, for a bot whose decisions would stall the
    plan's event loop, one that re-solves at every decision), with a fresh seed
    when it joins a resumed seating, and the side files of :func:`agent_spec`
    named per seating. Any other :data:`arena.match.seats.Seat` is
    used as given, in every seating: a command (:class:`~arena.match.seats.Command`),
    a remote agent on the seat's port (:class:`~arena.match.seats.Remote`), a
    person at a table (:class:`~arena.match.seats.Person`), or one of ours
    seated a particular way (:class:`~arena.match.seats.InProcess` with its
    decisions in a worker thread; :func:`~arena.match.seats.agent_command`)."""

    spec: Spec | None
    name: str
    seed: int = 0
    seat: Seat | None = None
    process: bool = False

    @classmethod
    def seated(cls, name: str, seat: Seat) -> Bot:
        """A player that is not one of our strategies: ``seat`` says who it is."""
        return cls(None, name, seat=seat)


@dataclass(frozen=True)
class MatchPlan:
    """Everything needed to play a match (and its duplicate seatings).

    ``ports`` fixes, per seating, the port of each seat (0: any free one; empty:
    every port free), for a caller that reserves them; ``match_names`` names
    each seating's files (empty: ``match``, or ``match.K`` in duplicate).
    ``tlog`` keeps the dealer's transaction log, which lets an interrupted
    seating resume; ``match_deadline`` stops a seating that outlasts what its
    limits allow (:meth:`dealer.server.MatchConfig.with_match_deadline`: a
    match nobody watches); ``after_abort_s`` is how long agents get to exit
    after the dealer aborted."""

    game: Game
    game_arg: str  # the GAME argument as given: a short name or a file path
    hands: int
    seed: int
    bots: tuple[Bot, ...]
    seatings: tuple[tuple[int, ...], ...]  # per seating, the bot index in each seat
    run_dir: Path
    in_process: bool = False
    limits: TimeLimits = AGENT_LIMITS
    game_file: str | None = None  # absolute path when GAME is a file, for agents started elsewhere
    host: str = "127.0.0.1"  # where the dealer listens
    ports: tuple[tuple[int, ...], ...] = ()
    match_names: tuple[str, ...] = ()
    tlog: bool = True
    match_deadline: bool = False
    after_abort_s: float = AGENT_EXIT_S

    @property
    def duplicate(self) -> bool:
        return len(self.seatings) > 1

    @property
    def agent_game(self) -> str:
        """The GAME argument for agent processes."""
        return self.game_file or self.game_arg

    def match_name(self, index: int) -> str:
        if self.match_names:
            return self.match_names[index]
        return "match" if len(self.seatings) == 1 else f"match.{index + 1}"

    def seat_ports(self, index: int) -> tuple[int, ...]:
        """Seating ``index``'s port of each seat (0: any free one)."""
        return self.ports[index] if self.ports else (0,) * len(self.seatings[index])


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


def seat_names(specs: Sequence[Spec]) -> tuple[str, ...]:
    """Strategy names, numbered ``-1``, ``-2``… where the same name appears twice."""
    names = [spec.name for spec in specs]
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


def components_path(run_dir: Path, match_name: str, bot_name: str) -> Path:
    """Where a portfolio agent records which component played each hand: beside
    the seating's log, ``<match>.<name>.components.csv`` (one ``hand_id,component``
    line per hand; :func:`analysis.hand_files.read_components` joins it to the hands)."""
    return run_dir / f"{match_name}.{bot_name}.components.csv"


def values_path(run_dir: Path, match_name: str, bot_name: str) -> Path:
    """Where a re-solving bot records its policies and values as it plays:
    beside the seating's log, ``<match>.<name>.values.msgpack``
    (:mod:`strategies.resolve.recording`; AIVAT with the bot's own values reads
    it, :mod:`analysis.recorded_values`)."""
    return run_dir / f"{match_name}.{bot_name}.values.msgpack"


def agent_spec(plan: MatchPlan, match_name: str, bot: Bot) -> Spec:
    """The spec an agent is started with: the bot's, plus ``log=`` for a
    portfolio that does not name its own file, so that every hand of the run
    says which component played it (:func:`components_path`), and ``record=``
    for a re-solving bot that does not name its own, so that its match is
    scored by AIVAT with its own values (:func:`values_path`). The ACPC
    protocol has no channel for either: they are the agent's own state.

    Raises:
        MatchError: the bot is not one of ours (no spec).
    """
    from strategies.bots import records_values

    spec = bot.spec
    if spec is None:
        raise MatchError(f"bot {bot.name} is not one of our strategies: it has no spec to start an agent with")
    if spec.name == "portfolio" and not spec.has_option("log"):
        option, path = "log", components_path(plan.run_dir, match_name, bot.name)
    elif records_values(spec.name) and not spec.has_option("record"):
        option, path = "record", values_path(plan.run_dir, match_name, bot.name)
    else:
        return spec
    try:
        return spec.with_option(option, str(path.resolve()))
    except StrategyError:  # a path with a ',' would split the spec's options: leave the agent unrecorded
        return spec
