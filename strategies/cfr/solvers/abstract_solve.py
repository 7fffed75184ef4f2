"""Abstract-game CFR+ solves as strategy files, shared by ``arena solve
--algorithm abstract`` (:mod:`strategies.cfr.runs`) and ``benchmarks/solve_hulhe.py``.

:class:`AbstractSolve` is an :class:`~strategies.cfr.solvers.abstract_game.AbstractGame`
with the card abstraction that names it: it writes a solve (average strategy,
and regrets and cumulative strategy for a checkpoint) as a bucket-layout
strategy file, the layout public chance sampling writes
(:func:`strategies.cfr.solvers.pcs.row_layout`), so :class:`~strategies.cfr.solvers.pcs.PCSStrategy`
plays it, and it rebuilds the solver such a file continues.

Card abstraction ``none`` (small games) means none at all. The abstract game
needs perfect-recall sequence numbers (round r-1's sequence = round r's
``// ratio``), which :class:`~strategies.cfr.solvers.pcs.LosslessAbstraction`'s columns
(board dealt so far b, then hand h: ``b * H + h``) are not; :class:`LosslessSequences`
numbers the same information sets ``h * B_r + b`` (``B_r`` boards by round r),
and files keep the PCS order, so a file of either algorithm plays alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game
from strategies.cfr.abstraction.card_abstraction import (
    Abstraction,
    CardAbstraction,
    NullAbstraction,
    buckets_by_round,
    load_abstraction,
)
from strategies.cfr.abstraction.card_tables import Progress as BuildProgress
from strategies.cfr.solvers.abstract_game import (
    AbstractCFR,
    AbstractGame,
    AbstractGameError,
    Progress,
    enumerate_joint_tables,
    sequence_counts,
)
from strategies.cfr.solvers.pcs import LosslessAbstraction, PCSStrategy
from strategies.cfr.strategy_file import BUCKETS, StrategyFile, StrategyFileError, save_strategy
from strategies.cfr.tree.public import BettingAbstraction

__all__ = ["ABSTRACT_EXPLOITABILITY", "ALGORITHM", "AbstractSolve", "LosslessSequences"]

#: The ``algorithm`` of the strategy files written here.
ALGORITHM = "abstract"
#: Settings key of the abstract-game exploitability (chips per hand) at the file's
#: iteration, or None when it was not measured there.
ABSTRACT_EXPLOITABILITY = "abstract_game_exploitability"


class LosslessSequences:
    """No card abstraction, as perfect-recall bucket sequences: round r's
    sequence of hand h on the board dealt so far is ``h * B_r + b``, with ``b``
    the board's index among the ``B_r`` boards of :class:`LosslessAbstraction`
    (which lists each board's extensions together, so ``b // (B_r / B_{r-1})`` is
    the index of its round r-1 part). Small games only, like that class."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.lossless = LosslessAbstraction(game)
        self._hands = len(private_hands(game))

    @property
    def name(self) -> str:
        return self.lossless.name

    def num_buckets(self, round: int) -> int:
        return self.lossless.num_buckets(round)

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        column = self.lossless.buckets(round, board).astype(np.int64)
        sequence = _sequence_of(column, self._hands, self.num_buckets(round) // self._hands)
        return np.where(column < 0, -1, sequence).astype(np.int32)

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        return buckets_by_round(self, self.game, board)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        column = self.lossless.bucket(round, hole, board)
        return -1 if column < 0 else int(_sequence_of(column, self._hands, self.num_buckets(round) // self._hands))

    def file_columns(self, game: AbstractGame) -> npt.NDArray[np.int64]:
        """``int64[R]``: column j of a PCS-ordered table is column ``[j]`` of ``game``'s."""
        columns = np.empty(game.num_columns, dtype=np.int64)
        for node in game.decisions:
            start, width = int(game.doff[node]), int(game.width[node])
            j = np.arange(width, dtype=np.int64)
            columns[start : start + width] = start + _sequence_of(j, self._hands, width // self._hands)
        return columns


def _sequence_of(column: Any, hands: int, boards: int) -> Any:
    """The perfect-recall sequence ``h * boards + b`` of lossless PCS column
    ``b * hands + h`` (ints or integer arrays)."""
    return (column % hands) * boards + column // hands


@dataclass(frozen=True, eq=False)
class AbstractSolve:
    """An abstract game and the card abstraction whose columns its files use
    (``abstraction``: what :class:`PCSStrategy` plays them with; ``spec``: its
    name in the file). ``columns`` maps file columns to the game's (None: the
    same order)."""

    game: AbstractGame
    abstraction: Abstraction
    spec: str
    columns: npt.NDArray[np.int64] | None = None

    @classmethod
    def build(
        cls,
        abstraction: CardAbstraction | NullAbstraction,
        *,
        betting: BettingAbstraction | None = None,
        cache_dir: Path | None = None,
        workers: int | None = None,
        progress: Progress | None = None,
        single: bool = False,
    ) -> AbstractSolve:
        """The abstract game of a perfect-recall card abstraction (joint tables
        read from the cache or built, ``progress`` as for
        :func:`~strategies.cfr.solvers.abstract_game.load_joint_tables`), or of no
        abstraction (:class:`NullAbstraction`, small games: tables enumerated)."""
        if isinstance(abstraction, CardAbstraction):
            game = AbstractGame.from_abstraction(
                abstraction, cache_dir=cache_dir, workers=workers, progress=progress, betting=betting, single=single
            )
            return cls(game, abstraction, abstraction.name)
        lossless = LosslessSequences(abstraction.game)
        tables = enumerate_joint_tables(lossless.game, lossless)
        game = AbstractGame(
            lossless.game, sequence_counts(lossless, lossless.game), tables, betting=betting, single=single
        )
        return cls(game, lossless.lossless, lossless.name, lossless.file_columns(game))

    @classmethod
    def resume(
        cls,
        saved: StrategyFile,
        *,
        cache_dir: Path | None = None,
        workers: int | None = None,
        build_progress: BuildProgress | None = None,
        progress: Progress | None = None,
    ) -> tuple[AbstractSolve, AbstractCFR]:
        """The abstract game of a checkpoint written by :meth:`save` and the solver
        that continues it (the card abstraction and joint tables from the cache,
        or built again with the progress callbacks).

        Raises:
            StrategyFileError: not an abstract-game checkpoint.
        """
        if saved.layout != BUCKETS or saved.algorithm != ALGORITHM:
            raise StrategyFileError(f"a {saved.algorithm} strategy file is not an abstract-game checkpoint")
        if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
            raise StrategyFileError("the file holds no regrets and cumulative strategy to resume from")
        settings = saved.settings
        abstraction = load_abstraction(
            saved.card_abstraction, saved.game, cache_dir=cache_dir, workers=workers, progress=build_progress
        )
        solve = cls.build(
            abstraction, betting=saved.abstraction, cache_dir=cache_dir, workers=workers, progress=progress,
            single=bool(settings.get("single", False)),
        )  # fmt: skip
        solver = AbstractCFR(solve.game, delay=int(settings.get("delay", 0)))
        solver.load_arrays(
            iteration=saved.iterations,
            regret=solve.from_file(saved.arrays["regret"]),
            cumulative=solve.from_file(saved.arrays["cumulative"]),
        )
        return solve, solver

    def to_file(self, table: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """A table of the game in file column order."""
        return table if self.columns is None else table[:, self.columns]

    def from_file(self, table: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """A table in file column order in the game's order (:meth:`to_file` undone)."""
        shape = (self.game.max_actions, self.game.num_columns)
        if table.shape != shape:
            raise AbstractGameError(f"a table of this abstract game has shape {shape}, got {table.shape}")
        if self.columns is None:
            return table
        out = np.empty_like(table)
        out[:, self.columns] = table
        return out

    def strategy(self, solver: AbstractCFR) -> PCSStrategy:
        """The solver's average strategy, playable (and expandable onto a public tree)."""
        return self.playable(self.to_file(solver.average()))

    def playable(self, table: npt.NDArray[np.float64]) -> PCSStrategy:
        """A table in file column order (:meth:`to_file`) as a playable strategy
        (and expandable onto a public tree)."""
        return PCSStrategy(
            self.game.game, self.abstraction, table, betting=self.game.tree.abstraction, tree=self.game.tree
        )

    def strategy_file(
        self,
        solver: AbstractCFR,
        *,
        exploitability: float | None,
        abstract_exploitability: float | None,
        checkpoint: bool = True,
    ) -> StrategyFile:
        """The bucket-layout :class:`StrategyFile` of ``solver`` (regrets and
        cumulative strategy too when ``checkpoint``): ``exploitability`` is the
        real game's (None: not measured), ``abstract_exploitability`` the
        abstract game's at this iteration (both chips per hand)."""
        arrays = {"strategy": self.to_file(solver.average())}
        if checkpoint:
            arrays.update(regret=self.to_file(solver.regret), cumulative=self.to_file(solver.cumulative))
        return StrategyFile(
            game=self.game.game,
            abstraction=self.game.tree.abstraction,
            algorithm=ALGORITHM,
            iterations=solver.iteration,
            exploitability=exploitability,
            arrays=arrays,
            settings={
                "delay": solver.delay,
                "single": self.game.single,
                ABSTRACT_EXPLOITABILITY: abstract_exploitability,
            },
            card_abstraction=self.spec,
            layout=BUCKETS,
        )

    def save(
        self,
        path: Path,
        solver: AbstractCFR,
        *,
        exploitability: float | None,
        abstract_exploitability: float | None,
        checkpoint: bool = True,
    ) -> None:
        """Write :meth:`strategy_file` to ``path`` (atomically)."""
        strategy_file = self.strategy_file(
            solver,
            exploitability=exploitability,
            abstract_exploitability=abstract_exploitability,
            checkpoint=checkpoint,
        )
        save_strategy(path, strategy_file, self.game.tree)
