"""A solve run, the library under ``arena solve``, ``arena bots build`` and ``arena
warmup``: a solver of the kind the settings ask for, fresh or resumed from a
checkpoint, with its iteration count, the figure it measures, the strategy files
it writes, and the loop that drives it (:func:`solve`).

The command front end (:mod:`arena.commands.solve`) turns argv into
:class:`SolveSettings` and shows what :func:`solve` reports (progress bar,
exploitability lines); everything that decides *what* is solved, *how* it is
iterated and *what* a file holds is here, so that a script or another command
runs the same solve without argv. The settings are the command's options, and
the errors name them as ``--option``: they are what the user typed.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from poker.gamedef import Game, load_game, shipped_name
from poker.stats import Unit, unit_of
from strategies.cfr import compile_notice
from strategies.cfr.abstraction.card_abstraction import load_abstraction
from strategies.cfr.abstraction.card_tables import Progress
from strategies.cfr.best_response.exact import exploitability
from strategies.cfr.interrupts import Interrupts
from strategies.cfr.solvers import abstract_game, pcs, sampled_files
from strategies.cfr.solvers.abstract_solve import ALGORITHM as ABSTRACT
from strategies.cfr.solvers.abstract_solve import AbstractSolve
from strategies.cfr.solvers.multiplayer import EpsilonCheck, MultiCFR, seven_step_epsilon
from strategies.cfr.solvers.sampled_multiplayer import ALGORITHM as SAMPLED
from strategies.cfr.solvers.sampled_multiplayer import SampledCFR
from strategies.cfr.solvers.solver import Algorithm, Solver
from strategies.cfr.strategy_file import (
    BUCKETS,
    THREE_PLAYER,
    THREE_PLAYER_BUCKETS,
    StrategyFile,
    StrategyFileError,
    load_strategy,
    save_strategy,
)
from strategies.cfr.tree.betting import BettingTree
from strategies.cfr.tree.betting_graph import BettingGraph
from strategies.cfr.tree.multi import MultiTree, build_multi_tree
from strategies.cfr.tree.public import BettingAbstraction, Tree, build_tree, buildable_tree, parse_bet_sizes

__all__ = [
    "PCS",
    "EVERY",
    "ABSTRACT_NEEDS_SPEC",
    "AnyTree",
    "SettingsError",
    "SolveSettings",
    "SolveRun",
    "LoopProgress",
    "Solved",
    "solve",
    "PCSRun",
    "AbstractRun",
    "MultiRun",
    "SampledRun",
    "TreeRun",
    "start_run",
    "resume_run",
]

#: The ``--algorithm`` of public chance sampling (:mod:`strategies.cfr.solvers.pcs`).
PCS = "pcs"
#: The settings key of ``--every`` in the files this command writes.
EVERY = "every"
#: Every kind of tree a strategy file's arrays are on.
AnyTree = Tree | BettingTree | MultiTree | BettingGraph
#: Why ``--algorithm abstract`` without ``--abstraction`` is refused.
ABSTRACT_NEEDS_SPEC = (
    "--algorithm abstract needs --abstraction SPEC: a perfect-recall card abstraction"
    " (e.g. ehs2:5:perfect) or none (no abstraction; small games only)"
)
#: The stage of the table builds that :meth:`AbstractSolve.build` reports.
_TABLES = "joint bucket tables"
#: :func:`solve` aims at progress reports (and interrupt checks) about this often, in seconds.
BATCH_SECONDS = 0.25


class SettingsError(Exception):
    """The settings ask for what cannot be (options that do not go together, a
    resume that names another solve than its file holds): the command's usage
    error, told apart from a failure while solving."""


@dataclasses.dataclass(frozen=True)
class SolveSettings:
    """What to solve, as ``arena solve``'s options give it: text specs are kept
    as written (parsed, and refused, where the run is set up, in the order the
    command always checked them). With :func:`resume_run` only what is given
    (not None) is compared with the file, whose settings win."""

    #: Short game name or .game file (not needed to resume).
    game: str | None = None
    #: :class:`Algorithm` value, :data:`PCS`, ``abstract`` or ``es-mccfr`` (None: cfr+, or the file's).
    algorithm: str | None = None
    #: Card abstraction spec (``ehs2:5:perfect``, ``none``) for pcs, abstract and es-mccfr.
    abstraction: str | None = None
    #: No-limit raises as comma-separated pot fractions (None: pot; all-in is always kept).
    bet_sizes: str | None = None
    #: es-mccfr: comma-separated raise caps per round of the solved betting tree (None: the game's).
    max_raises: str | None = None
    #: Board sampler seed of pcs and es-mccfr.
    seed: int = 0
    #: One board per suit-isomorphism class of the first board round (cfr+ and cfr).
    suit_isomorphism: bool = False
    #: Simultaneous instead of alternating updates (cfr+ and cfr).
    simultaneous: bool = False
    #: abstract: terminal matrix products in float32.
    float32: bool = False
    #: pcs: regret-matching+ instead of vanilla regret matching.
    plus: bool = False
    #: pcs: average weight max(t - delay, 0) instead of 1.
    linear: bool = False
    #: Iterations the average leaves out.
    delay: int = 0
    #: Measure exploitability every this many iterations (0: only at the end; None: 0, or the file's).
    every: int | None = None

    @classmethod
    def from_options(cls, game: str, options: Sequence[str]) -> SolveSettings:
        """The settings a recorded ``arena solve GAME OPTIONS`` command names
        (a bot's recipe, :mod:`strategies.bots`): each ``--name`` is the field of
        that name, a flag for a bool, else followed by its value.

        Raises:
            SettingsError: an option that is no setting, or one without its value.
        """
        fields = {field.name: str(field.type) for field in dataclasses.fields(cls) if field.name != "game"}
        values: dict[str, Any] = {"game": game}
        rest = list(options)
        while rest:
            option = rest.pop(0)
            name = option.removeprefix("--").replace("-", "_")
            kind = fields.get(name)
            if not option.startswith("--") or kind is None:
                raise SettingsError(f"{option!r} is not an option of a solve's settings")
            if kind == "bool":
                values[name] = True
            elif not rest:
                raise SettingsError(f"{option} needs a value")
            elif kind.startswith("int"):
                text = rest.pop(0)
                if not text.isdigit():
                    raise SettingsError(f"{option} {text!r} is not a whole number")
                values[name] = int(text)
            else:
                values[name] = rest.pop(0)
        return cls(**values)


class _Iterative(Protocol):
    """A solver as the solve loop advances it."""

    @property
    def iteration(self) -> int: ...

    def run(self, iterations: int) -> None: ...


class SolveRun(abc.ABC):
    """What the solve loop drives: a solver with its iteration count, a figure
    to measure every ``--every`` iterations, and saving."""

    algorithm: str
    solver: _Iterative
    #: Save a checkpoint at every measurement (long runs), not only at the end.
    checkpoints = False

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def run(self, iterations: int) -> None:
        self.solver.run(iterations)

    @abc.abstractmethod
    def exploitability(self) -> float | None:
        """The figure shown every ``--every`` iterations (None: cannot be measured)."""

    #: ``--every`` of this run, stored in its files so that ``--resume`` carries it over.
    every = 0
    #: What else the final line names to make the run reproducible (PCS: its board seed).
    details = ""

    @abc.abstractmethod
    def strategy_file(self, measured: float | None) -> tuple[StrategyFile, AnyTree]:
        """The file to write (a checkpoint) and the tree its arrays are on."""

    def save(self, path: Path, measured: float | None) -> None:
        self.write(path, *self.strategy_file(measured))

    def write(self, path: Path, strategy_file: StrategyFile, tree: AnyTree) -> None:
        settings = {**strategy_file.settings, EVERY: self.every}
        save_strategy(path, dataclasses.replace(strategy_file, settings=settings), tree)

    @property
    @abc.abstractmethod
    def game(self) -> Game:
        """The real game solved (its unit is the unit of every figure printed)."""

    @property
    def unit(self) -> Unit:
        return unit_of(self.game)

    def describe(self, value: float) -> str:
        return self.unit.format(value)

    def finish(self, path: Path, measured: float | None) -> str:
        """Write the final file; the text of its exploitability figures."""
        self.save(path, measured)
        return "not measured (the game's public tree is too big)" if measured is None else self.describe(measured)


class PCSRun(SolveRun):
    """A PCS solver, with its real-game tree when that can be built (for exploitability)."""

    algorithm = PCS
    solver: pcs.PCSSolver

    def __init__(self, solver: pcs.PCSSolver) -> None:
        self.solver = solver
        self.details = f" (board seed {solver.seed})"
        self.tree = buildable_tree(solver.game, solver.tree.abstraction)
        self.checkpoints = self.tree is None  # nothing measured: checkpoint instead

    def exploitability(self) -> float | None:
        if self.tree is None:
            return None
        return exploitability(self.tree, self.solver.strategy().tree_strategy(self.tree))

    def strategy_file(self, measured: float | None) -> tuple[StrategyFile, AnyTree]:
        return pcs.strategy_file(self.solver, measured), self.solver.tree

    @property
    def game(self) -> Game:
        return self.solver.game


class AbstractRun(SolveRun):
    """CFR+ on an abstract game: the figure every ``--every`` iterations is the
    abstract game's exploitability, saved with a checkpoint; at the end the real
    game's too where its public tree can be built."""

    algorithm = ABSTRACT
    checkpoints = True
    solver: abstract_game.AbstractCFR

    def __init__(self, solve: AbstractSolve, solver: abstract_game.AbstractCFR) -> None:
        self.solve = solve
        self.solver = solver
        self.tree = buildable_tree(solve.game.game, solve.game.tree.abstraction)

    def exploitability(self) -> float:
        return self.solver.exploitability()

    def strategy_file(
        self, measured: float | None, real: float | None = None
    ) -> tuple[StrategyFile, AnyTree]:
        """``measured`` is the abstract game's figure, ``real`` the real game's."""
        written = self.solve.strategy_file(self.solver, exploitability=real, abstract_exploitability=measured)
        return written, self.solve.game.tree

    @property
    def game(self) -> Game:
        return self.solve.game.game

    def describe(self, value: float) -> str:
        return f"{self.unit.format(value)} in the abstract game"

    def finish(self, path: Path, measured: float | None) -> str:
        abstract = self.exploitability() if measured is None else measured
        real = None
        if self.tree is not None:
            real = exploitability(self.tree, self.solve.strategy(self.solver).tree_strategy(self.tree))
        self.write(path, *self.strategy_file(abstract, real))
        if real is None:
            return f"{self.describe(abstract)}, not measured in the real game (its public tree is too big)"
        return f"{self.describe(abstract)}, {self.unit.format(real)} in the real game"


class MultiRun(SolveRun):
    """Three-player CFR / CFR+ (:class:`MultiCFR`): the figure is Abou Risk &
    Szafron's seven-step epsilon; every file written carries it and each position's gain
    (two tree walks a position: cheap next to an iteration's three)."""

    solver: MultiCFR

    def __init__(self, solver: MultiCFR) -> None:
        self.solver = solver
        self.algorithm = Algorithm.CFR_PLUS.value if solver.plus else Algorithm.CFR.value
        self._check: tuple[int, EpsilonCheck] | None = None

    def check(self) -> EpsilonCheck:
        """The seven-step check of the current average profile (kept per iteration)."""
        if self._check is None or self._check[0] != self.solver.iteration:
            self._check = self.solver.iteration, seven_step_epsilon(self.solver)
        return self._check[1]

    def exploitability(self) -> float:
        return self.check().epsilon

    def describe(self, value: float) -> str:
        return f"{self.unit.format(value)} (seven-step epsilon)"

    def strategy_file(self, measured: float | None) -> tuple[StrategyFile, AnyTree]:
        solver, check = self.solver, self.check()
        written = StrategyFile(
            game=solver.tree.game,
            abstraction=None,
            algorithm=self.algorithm,
            iterations=solver.iteration,
            exploitability=check.epsilon,
            arrays={"strategy": solver.average_strategy(), "regret": solver.regret, "cumulative": solver.cumulative},
            settings={"plus": solver.plus, "alternating": False, "linear_average": solver.plus},
            layout=THREE_PLAYER,
            gains=check.gains,
        )
        return written, solver.tree

    def finish(self, path: Path, measured: float | None) -> str:
        self.save(path, measured)
        gains = ", ".join(self.unit.format(g) for g in self.check().gains)
        return f"{self.describe(self.check().epsilon)}; best-response gains by position: {gains}"

    @property
    def game(self) -> Game:
        return self.solver.tree.game


class SampledRun(SolveRun):
    """External-sampling MCCFR over card buckets (:mod:`strategies.cfr.solvers.sampled_files`):
    checkpoints at every ``--every``; the figure is the seven-step epsilon where
    the game's full tree can be walked, else none."""

    algorithm = SAMPLED
    checkpoints = True
    solver: SampledCFR

    def __init__(self, solver: SampledCFR) -> None:
        self.solver = solver
        self.details = f" (seed {solver.seed})"
        self.epsilon = sampled_files.Epsilon(solver)

    def exploitability(self) -> float | None:
        check = self.epsilon.check()
        return None if check is None else check.epsilon

    def describe(self, value: float) -> str:
        return f"{self.unit.format(value)} (seven-step epsilon)"

    def strategy_file(self, measured: float | None) -> tuple[StrategyFile, AnyTree]:
        return sampled_files.sampled_file(self.solver, self.epsilon.check(), final=False), self.solver.table.graph

    def finish(self, path: Path, measured: float | None) -> str:
        check = self.epsilon.check()
        self.write(path, sampled_files.sampled_file(self.solver, check, final=True), self.solver.table.graph)
        if check is None:
            return "not measured (the game's full three-player tree is too big)"
        gains = ", ".join(self.unit.format(g) for g in check.gains)
        return f"{self.describe(check.epsilon)}; best-response gains by position: {gains}"

    @property
    def game(self) -> Game:
        return self.solver.game


class TreeRun(SolveRun):
    """The public-tree CFR / CFR+ solver."""

    solver: Solver

    def __init__(self, tree: Tree, solver: Solver, algorithm: str) -> None:
        self.tree = tree
        self.solver = solver
        self.algorithm = algorithm

    def exploitability(self) -> float | None:
        return exploitability(self.tree, self.solver.average_strategy())

    def strategy_file(self, measured: float | None) -> tuple[StrategyFile, AnyTree]:
        solver, tree = self.solver, self.tree
        written = StrategyFile(
            game=tree.game,
            abstraction=tree.abstraction,
            algorithm=self.algorithm,
            iterations=solver.iteration,
            exploitability=measured,
            arrays={"strategy": solver.average_strategy(), "regret": solver.regret, "cumulative": solver.cumulative},
            settings={"alternating": solver.alternating, "linear_average": solver.linear_average, "delay": solver.delay},
            isomorphism=tree.isomorphism,
        )
        return written, tree

    @property
    def game(self) -> Game:
        return self.tree.game


def _betting(settings: SolveSettings, game: Game) -> BettingAbstraction | None:
    """The betting abstraction of ``--bet-sizes`` (None for a limit game)."""
    if game.is_limit and settings.bet_sizes is not None:
        raise SettingsError(f"{settings.game} is a limit game: --bet-sizes applies only to no-limit games")
    return None if game.is_limit else parse_bet_sizes(settings.bet_sizes)


def _multi_setup(settings: SolveSettings, algorithm: str, game: Game) -> MultiRun:
    if algorithm not in (Algorithm.CFR.value, Algorithm.CFR_PLUS.value):
        raise SettingsError(f"a three-player game is solved by --algorithm cfr+ or cfr, not {algorithm}")
    if settings.suit_isomorphism or settings.delay or settings.abstraction is not None:
        raise SettingsError("--suit-isomorphism, --delay and --abstraction do not apply to three-player games")
    if settings.bet_sizes is not None:
        raise SettingsError("three-player games are solved in limit games only (no --bet-sizes)")
    return MultiRun(MultiCFR(build_multi_tree(game), plus=algorithm == Algorithm.CFR_PLUS.value))


def _pcs_setup(settings: SolveSettings, game: Game) -> PCSRun:
    betting = _betting(settings, game)
    abstraction = load_abstraction(settings.abstraction or "none", game)
    solver = pcs.PCSSolver(
        game,
        abstraction,
        betting=betting,
        seed=settings.seed,
        plus=settings.plus,
        linear=settings.linear,
        delay=settings.delay,
    )
    return PCSRun(solver)


def _sampled_setup(settings: SolveSettings, game: Game, progress: Progress | None) -> SampledRun:
    if settings.abstraction is None:
        raise SettingsError(f"--algorithm {SAMPLED} needs --abstraction SPEC (e.g. ehs2:16:imperfect, or none)")
    if (
        settings.suit_isomorphism
        or settings.simultaneous
        or settings.delay
        or settings.float32
        or settings.bet_sizes is not None
    ):
        raise SettingsError(
            f"--suit-isomorphism, --simultaneous, --delay, --float32 and --bet-sizes do not apply to {SAMPLED}"
        )
    solver = sampled_files.setup_solver(
        game, settings.abstraction, settings.max_raises, seed=settings.seed, progress=progress
    )
    return SampledRun(solver)


def _abstract_setup(settings: SolveSettings, game: Game, progress: Progress | None) -> AbstractRun:
    if settings.suit_isomorphism or settings.simultaneous:
        raise SettingsError("--suit-isomorphism and --simultaneous apply to --algorithm cfr+ and cfr only")
    if settings.abstraction is None:
        raise SettingsError(ABSTRACT_NEEDS_SPEC)
    betting = _betting(settings, game)
    abstraction = load_abstraction(settings.abstraction, game, progress=progress)
    solve = AbstractSolve.build(abstraction, betting=betting, progress=_tables(progress), single=settings.float32)
    return AbstractRun(solve, abstract_game.AbstractCFR(solve.game, delay=settings.delay))


def _tables(progress: Progress | None) -> abstract_game.Progress | None:
    """``progress`` as the joint bucket tables' build reports it (one stage, no name)."""
    if progress is None:
        return None
    stage = progress
    return lambda done, total: stage(_TABLES, done, total)


def start_run(settings: SolveSettings, progress: Progress | None = None) -> SolveRun:
    """A fresh run of what ``settings`` ask for; ``progress(stage, done, total)``
    follows the table builds before it (called only when something is built, not
    when read from the cache).

    Raises:
        SettingsError: settings that do not go together.
        GameDefError, TreeError, AbstractionError, OSError...: from loading the
            game and building the trees and tables.
    """
    if settings.game is None:
        raise SettingsError("name a GAME to solve (or --resume a file)")
    game = load_game(settings.game)
    algorithm = settings.algorithm or Algorithm.CFR_PLUS.value
    compile_notice.expect(*compile_notice.solve_kernels(algorithm, game.num_players))  # one line if they are cold
    run = _fresh(settings, algorithm, game, progress)
    run.every = settings.every or 0
    return run


def _fresh(settings: SolveSettings, algorithm: str, game: Game, progress: Progress | None) -> SolveRun:
    if settings.float32 and algorithm != ABSTRACT:
        raise SettingsError("--float32 applies to --algorithm abstract only")
    if (settings.plus or settings.linear) and algorithm != PCS:
        raise SettingsError("--plus and --linear apply to --algorithm pcs only (cfr+ is always both)")
    if settings.max_raises is not None and algorithm != SAMPLED:
        raise SettingsError(f"--max-raises applies to --algorithm {SAMPLED} only")
    if game.num_players == 3 and algorithm == SAMPLED:
        return _sampled_setup(settings, game, progress)
    if algorithm == SAMPLED:
        raise SettingsError(f"--algorithm {SAMPLED} solves three-player limit games")
    if game.num_players == 3:
        return _multi_setup(settings, algorithm, game)
    if algorithm == PCS:
        return _pcs_setup(settings, game)
    if algorithm == ABSTRACT:
        return _abstract_setup(settings, game, progress)
    if settings.abstraction is not None:
        raise SettingsError("--abstraction applies to --algorithm pcs and abstract only")
    tree = build_tree(game, _betting(settings, game), isomorphism=settings.suit_isomorphism)
    solver = Solver(tree, algorithm, alternating=not settings.simultaneous, delay=settings.delay)
    return TreeRun(tree, solver, algorithm)


def resume_run(path: Path, settings: SolveSettings, progress: Progress | None = None) -> SolveRun:
    """The run a checkpoint written by a :class:`SolveRun` holds, to continue;
    ``settings`` may name the solve (and must then match the file: its settings
    win) and set ``every`` (None: the file's). ``progress`` as in :func:`start_run`.

    Raises:
        SettingsError: ``settings`` name another solve than the file holds.
        StrategyFileError: the file holds no regrets and cumulative strategy.
    """
    saved = load_strategy(path)
    _check_resume(path, settings, saved)
    compile_notice.expect(*compile_notice.solve_kernels(saved.algorithm, saved.game.num_players))
    run = _resumed(path, saved, progress)
    run.every = (int(saved.settings.get(EVERY, 0)) if settings.every is None else settings.every) or 0
    return run


def _resumed(path: Path, saved: StrategyFile, progress: Progress | None) -> SolveRun:
    if saved.layout == BUCKETS and saved.algorithm == ABSTRACT:
        return AbstractRun(*AbstractSolve.resume(saved, build_progress=progress, progress=_tables(progress)))
    if saved.layout == BUCKETS:
        return PCSRun(pcs.resume_solver(saved))
    if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
        raise StrategyFileError(f"{path}: holds no regrets and cumulative strategy to resume from")
    if saved.layout == THREE_PLAYER_BUCKETS:
        return SampledRun(sampled_files.resume_solver(saved, progress))
    if saved.layout == THREE_PLAYER:
        multi = MultiCFR(saved.build_multi_tree(), plus=bool(saved.settings.get("plus", False)))
        multi.load_arrays(
            iteration=saved.iterations, regret=saved.arrays["regret"], cumulative=saved.arrays["cumulative"]
        )
        return MultiRun(multi)
    tree = saved.build_tree()
    settings = saved.settings
    solver = Solver(
        tree,
        saved.algorithm,
        alternating=bool(settings.get("alternating", True)),
        linear_average=bool(settings.get("linear_average", saved.algorithm == Algorithm.CFR_PLUS.value)),
        delay=int(settings.get("delay", 0)),
    )
    solver.load_arrays(
        iteration=saved.iterations, regret=saved.arrays["regret"], cumulative=saved.arrays["cumulative"]
    )
    return TreeRun(tree, solver, saved.algorithm)


def _check_resume(path: Path, settings: SolveSettings, saved: StrategyFile) -> None:
    """Refuse a --resume whose command line names a different solve than the file
    holds: the file's settings win, so a silent mismatch would solve the wrong thing.

    Raises:
        SettingsError: naming the first difference.
    """
    given: list[tuple[str, object, object]] = []
    if settings.game is not None:
        given.append((f"game {settings.game}", load_game(settings.game), saved.game))
    if settings.algorithm is not None:
        given.append((f"--algorithm {settings.algorithm}", settings.algorithm, saved.algorithm))
    if settings.abstraction is not None:
        given.append((f"--abstraction {settings.abstraction}", settings.abstraction, saved.card_abstraction))
    if settings.bet_sizes is not None:
        given.append((f"--bet-sizes {settings.bet_sizes}", parse_bet_sizes(settings.bet_sizes), saved.abstraction))
    for option, wanted, stored in given:
        if wanted != stored:
            raise SettingsError(
                f"--resume {path} holds a {saved.algorithm} solve of {_describe_saved(saved)};"
                f" it does not match {option} (leave it out to continue the file's solve)"
            )


def _describe_saved(saved: StrategyFile) -> str:
    betting = "" if saved.abstraction is None else f", betting {saved.abstraction.describe()}"
    return f"{shipped_name(saved.game) or 'a game from a file'}{betting}, card abstraction {saved.card_abstraction}"


class LoopProgress(Protocol):
    """What :func:`solve` reports as it goes (a command's iteration bar and lines)."""

    def start(self, done: int, total: int) -> None:
        """The loop starts with ``done`` of ``total`` iterations behind it."""

    def advanced(self, iterations: int) -> None:
        """``iterations`` more are done."""

    def measured(self, iteration: int, text: str) -> None:
        """The exploitability measured at ``iteration``, as the game's unit writes it."""

    def close(self) -> None:
        """No more iterations (called again, harmlessly, when an interrupt follows)."""


class _Silent:
    """The progress of a solve nobody watches (``arena warmup``)."""

    def start(self, done: int, total: int) -> None:
        pass

    def advanced(self, iterations: int) -> None:
        pass

    def measured(self, iteration: int, text: str) -> None:
        pass

    def close(self) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class Solved:
    """How :func:`solve` ended: ``exploitability`` is the text of the final file's
    figures, None when an interrupt stopped it (a checkpoint of
    :attr:`SolveRun.iteration` iterations was written instead)."""

    exploitability: str | None

    @property
    def interrupted(self) -> bool:
        return self.exploitability is None


def solve(
    run: SolveRun,
    *,
    iterations: int,
    output: Path,
    target: float | None = None,
    interrupts: Interrupts | None = None,
    progress: LoopProgress | None = None,
) -> Solved:
    """Iterate ``run`` until it counts ``iterations`` and write ``output``.

    The iterations run in batches sized to take about :data:`BATCH_SECONDS`
    (doubled or halved after each), so that progress is reported and an
    interrupt is noticed that often; each batch runs under
    ``interrupts.deferred()``, so the arrays and the count advance together.
    Every ``run.every`` iterations the exploitability is measured and reported
    (a checkpoint saved where :attr:`SolveRun.checkpoints`), and the loop stops
    early at the first measurement at or below ``target`` (in the game's unit:
    chips/hand, mbb/g for games with blinds). An interrupt (KeyboardInterrupt,
    or what :class:`strategies.cfr.interrupts.Interrupts` turns SIGTERM into)
    writes a checkpoint of the iterations counted, so a resume ends where a
    straight run would.

    Raises:
        SettingsError: ``target`` without ``run.every`` (nothing would measure it).
    """
    every = run.every
    if target is not None and not every:
        raise SettingsError("--target needs --every K (how often to measure)")
    shown: LoopProgress = progress or _Silent()
    measured: float | None = None
    measured_at = -1
    batch = 1
    shown.start(min(run.iteration, iterations), iterations)
    try:
        while run.iteration < iterations:
            todo = iterations - run.iteration
            if every:
                todo = min(todo, every - run.iteration % every)
            step = min(todo, batch)
            started = time.perf_counter()
            with interrupts.deferred() if interrupts is not None else contextlib.nullcontext():
                run.run(step)
            elapsed = time.perf_counter() - started
            if elapsed < BATCH_SECONDS / 2:
                batch *= 2
            elif elapsed > 2 * BATCH_SECONDS:
                batch = max(1, batch // 2)
            shown.advanced(step)
            if every and run.iteration % every == 0:
                measured = run.exploitability()
                measured_at = run.iteration
                if measured is not None:
                    shown.measured(run.iteration, run.describe(measured))
                if run.checkpoints:
                    run.save(output, measured)
                if target is not None and measured is not None and measured * run.unit.per_chip <= target:
                    break
        shown.close()
        if measured_at != run.iteration:
            measured = run.exploitability()
        return Solved(run.finish(output, measured))
    except KeyboardInterrupt:
        shown.close()
        run.save(output, None)
        return Solved(None)
