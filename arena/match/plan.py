"""What a match is before it is played: the plan (:class:`MatchPlan`: game, bots,
seatings, limits, run directory), the bots with their seat names and seeds, a
seating's result as its log has it, and the spec each agent is started with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

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
    "agent_spec",
    "AGENT_EXIT_S",
    "AGENT_GONE_S",
    "PLAN_FORMAT",
    "DEFAULT_T_RESPONSE_MS",
    "DEFAULT_T_HAND_MS",
    "DEFAULT_T_PER_HAND_MS",
    "NO_START_TIMEOUT",
]


#: How long agents get to exit after the dealer is done (validate_submission.pl's 10 s).
AGENT_EXIT_S: Final = 10.0
#: How long the dealer may go on after an agent ended its connection (normally it is done).
AGENT_GONE_S: Final = 5.0
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

    spec: Spec
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


def agent_spec(plan: MatchPlan, match_name: str, bot: Bot) -> Spec:
    """The spec an agent is started with: the bot's, plus ``log=`` for a
    portfolio that does not name its own file, so that every hand of the run
    says which component played it (:func:`components_path`). The ACPC
    protocol has no channel for it: the choice is the agent's own state."""
    if bot.spec.name != "portfolio" or bot.spec.has_option("log"):
        return bot.spec
    try:
        return bot.spec.with_option("log", str(components_path(plan.run_dir, match_name, bot.name).resolve()))
    except StrategyError:  # a path with a ',' would split the spec's options: leave the portfolio unrecorded
        return bot.spec
