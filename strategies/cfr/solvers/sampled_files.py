"""The solver and files of ``arena solve --algorithm es-mccfr``: external-sampling MCCFR of a
three-player limit game over card buckets (:mod:`strategies.cfr.solvers.sampled_multiplayer`).

``arena solve holdem.limit.3p --algorithm es-mccfr --abstraction ehs2:16:imperfect
--max-raises 3,4,4,3 --seed 0 --iterations N --every K -o FILE`` writes a
``three-player-buckets`` strategy file. Every ``--every`` iterations it writes a
checkpoint (regrets and sums: ``--resume`` continues it, the deals and draws of
later iterations unchanged) and, where the game's full three-player tree can be
walked (3p Kuhn, Leduc with ``--abstraction none``), measures Abou Risk &
Szafron's (2010) seven-step epsilon of the average strategy exactly. The finished file holds the
average strategy alone (a quarter of a checkpoint's size). The solve loop
itself is ``arena solve``'s (:mod:`arena.commands.solve`); this module makes the solver and its files.
"""

from __future__ import annotations

from typing import Any

import numpy.typing as npt

from poker.gamedef import Game
from strategies.cfr.abstraction.card_abstraction import CardAbstraction
from strategies.cfr.abstraction.card_tables import Progress
from strategies.cfr.solvers.multiplayer import EpsilonCheck, MultiCFR, seven_step_epsilon
from strategies.cfr.solvers.sampled_multiplayer import ABSTRACTION_DIGEST, ALGORITHM, SampledCFR, expand, make_table
from strategies.cfr.strategy_file import BETTING_CUT, THREE_PLAYER_BUCKETS, StrategyFile
from strategies.cfr.tree.betting_graph import parse_cut
from strategies.cfr.tree.multi import build_multi_tree
from strategies.cfr.tree.public import TreeError

__all__ = ["Epsilon", "resume_solver", "sampled_file", "setup_solver"]


class Epsilon:
    """Abou Risk & Szafron's seven-step check of a sampled solver's average strategy, where
    the game's full three-player tree can be built (else :meth:`check` is None);
    kept per iteration."""

    def __init__(self, solver: SampledCFR) -> None:
        self.solver = solver
        try:
            self._exact: MultiCFR | None = MultiCFR(build_multi_tree(solver.game))
        except TreeError:
            self._exact = None
        self._check: tuple[int, EpsilonCheck] | None = None

    def check(self) -> EpsilonCheck | None:
        if self._exact is None:
            return None
        if self._check is None or self._check[0] != self.solver.iteration:
            strategy = expand(self.solver.table, self.solver.average_strategy(), self._exact.tree)
            self._check = self.solver.iteration, seven_step_epsilon(self._exact, strategy)
        return self._check[1]


def sampled_file(solver: SampledCFR, check: EpsilonCheck | None, *, final: bool) -> StrategyFile:
    """The strategy file of ``solver``: a checkpoint (strategy, regrets, sums) or,
    if ``final``, the average strategy alone."""
    abstraction = solver.table.abstraction
    strategy = solver.average_strategy()
    arrays: dict[str, npt.NDArray[Any]] = {"strategy": strategy}
    if not final:
        arrays.update(regret=solver.regret, cumulative=solver.cumulative)
    return StrategyFile(
        game=solver.game,
        abstraction=None,
        algorithm=ALGORITHM,
        iterations=solver.iteration,
        exploitability=None if check is None else check.epsilon,
        arrays=arrays,
        settings={
            "seed": solver.seed,
            BETTING_CUT: ",".join(map(str, solver.table.graph.cut)),
            ABSTRACTION_DIGEST: abstraction.digest if isinstance(abstraction, CardAbstraction) else None,
        },
        card_abstraction=abstraction.name,
        layout=THREE_PLAYER_BUCKETS,
        gains=None if check is None else check.gains,
    )


def setup_solver(
    game: Game, abstraction: str, max_raises: str | None, *, seed: int, progress: Progress | None = None
) -> SampledCFR:
    """A fresh solver of ``game`` over the card abstraction spec ``abstraction``,
    on the betting tree cut at ``max_raises`` (comma separated raise caps per
    round; None: the game's)."""
    cut = None if max_raises is None else parse_cut(max_raises, game)
    return SampledCFR(make_table(game, abstraction, cut, progress=progress), seed=seed)


def resume_solver(saved: StrategyFile, progress: Progress | None = None) -> SampledCFR:
    """The solver a checkpoint holds."""
    cut = parse_cut(str(saved.settings[BETTING_CUT]), saved.game)
    table = make_table(saved.game, saved.card_abstraction, cut, progress=progress)
    solver = SampledCFR(table, seed=int(saved.settings.get("seed", 0)))
    solver.load_arrays(iteration=saved.iterations, regret=saved.arrays["regret"], cumulative=saved.arrays["cumulative"])
    return solver
