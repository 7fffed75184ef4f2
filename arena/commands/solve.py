"""``arena solve GAME --algorithm cfr+|cfr|pcs|abstract --iterations N -o FILE``: solve
a game and write a strategy file.

``cfr+`` and ``cfr`` solve the game's public tree. ``--algorithm pcs`` is public
chance sampling (one board per iteration, seeded by ``--seed``) on the betting
tree with tables per card bucket of ``--abstraction SPEC`` (``ehs2:5:perfect``,
``none``...); its exploitability is measured in the real game when the game's
public tree can be built (small games), else not.

Three-player limit games (``kuhn3p``, ``leduc.limit.3p``): ``cfr+`` and ``cfr``
solve the three-player public tree (:mod:`strategies.cfr.solvers.multiplayer`,
simultaneous updates) and write a ``three-player`` strategy file; the figure
measured is Abou Risk & Szafron's (2010) seven-step epsilon (the mean over
positions of a best response's gain against the other two, each found by an
exact tree walk),
stored with each position's gain. ``--algorithm es-mccfr --abstraction SPEC``
(``--max-raises`` the raise caps of a cut betting tree, ``--seed``) is sampled
three-player CFR over card buckets for games too big for that, 3p limit
hold'em (:mod:`strategies.cfr.solvers.sampled_files`).

``--algorithm abstract --abstraction SPEC`` (required) solves the abstract game
of a perfect-recall card abstraction with CFR+ (:mod:`strategies.cfr.solvers.abstract_game`;
``none``: no abstraction, small games); the card abstraction and the joint
bucket tables are read from the cache or built first (minutes for hold'em, with
progress bars). What it measures every ``--every`` iterations is the
*abstract-game* exploitability (in the game's unit: chips/hand for games with
antes, mbb/g for games with blinds), saved with a checkpoint each time; at the end
the real-game exploitability too where the public tree can be built. Its file
has the bucket layout of ``pcs`` files and plays the same way.

The solve runs in batches between progress-bar updates; every ``--every``
iterations it measures the exact exploitability of the average strategy (in the
game's unit, :func:`poker.stats.unit_of`) and prints it. Ctrl-C or SIGTERM
stops after the current batch (at once during a measurement) and writes the file
(a checkpoint holding regrets and cumulative strategy, always of the iterations
it counts, so a resume ends where a straight run would; a second Ctrl-C does not
cut it short) before exiting with status 130; the output path is checked before
any work; ``--resume FILE`` continues from any file this command wrote, with the
game, abstraction and settings stored in it.
"""

from __future__ import annotations

import abc
import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Never, Protocol

from tqdm import tqdm

from poker.stats import Unit, unit_of
from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    UsageParser,
    bet_sizes,
    fail,
    output_problem,
    parse,
)
from poker.gamedef import Game, GameDefError, load_game, shipped_name
from poker.stats import Unit, unit_of
from strategies.cfr.abstraction.card_abstraction import load_abstraction
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr import compile_notice
from strategies.cfr.best_response.exact import exploitability
from strategies.cfr.interrupts import Interrupts
from strategies.cfr.solvers import abstract_game, pcs, sampled_files
from strategies.cfr.solvers.abstract_solve import ALGORITHM as ABSTRACT
from strategies.cfr.solvers.abstract_solve import AbstractSolve
from strategies.cfr.solvers.multiplayer import EpsilonCheck, MultiCFR, MultiTree, build_multi_tree, seven_step_epsilon
from strategies.cfr.solvers.sampled_multiplayer import ALGORITHM as SAMPLED
from strategies.cfr.solvers.sampled_multiplayer import BettingGraph, SampledCFR
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
from strategies.cfr.tree.public import BettingAbstraction, Tree, TreeError, build_tree, buildable_tree

__all__ = ["main"]

PROG = "arena solve"

_BATCH_SECONDS = 0.25  # aim for progress updates (and Ctrl-C checks) about this often
PCS = "pcs"
#: The settings key of ``--every`` in the files this command writes.
EVERY = "every"
#: Every kind of tree a strategy file's arrays are on.
AnyTree = Tree | BettingTree | MultiTree | BettingGraph


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("game", nargs="?", help="short game name or .game file (not needed with --resume)")
    parser.add_argument(
        "--algorithm",
        choices=[a.value for a in Algorithm] + [PCS, ABSTRACT, SAMPLED],
        help=f"default {Algorithm.CFR_PLUS.value} (with --resume: the file's)",
    )
    parser.add_argument(
        "--abstraction",
        help="card abstraction spec for pcs (default none: no abstraction) and abstract (required),"
        " e.g. ehs2:5:perfect",
    )
    parser.add_argument("--seed", type=int, default=0, help="board sampler seed for pcs and es-mccfr (default 0)")
    parser.add_argument(
        "--max-raises",
        help="es-mccfr: raise caps per round of the solved betting tree, comma separated (default the game's;"
        " PR2's river cut in 3p hold'em: 3,4,4,3); the agent calls where the real game goes past them",
    )
    parser.add_argument(
        "--iterations", type=int, required=True, help="total iterations to reach (counting resumed ones)"
    )
    parser.add_argument(
        "--bet-sizes",
        help="no-limit raises as pot fractions, comma separated (default 1: pot); all-in is always kept",
    )
    parser.add_argument(
        "--suit-isomorphism",
        action="store_true",
        help="keep one board per suit-isomorphism class of the first board round (exact, smaller, faster)",
    )
    parser.add_argument("--simultaneous", action="store_true", help="simultaneous instead of alternating updates")
    parser.add_argument(
        "--float32",
        action="store_true",
        help="--algorithm abstract: terminal matrix products in float32 (about twice as fast for hold'em;"
        " the measured exploitability is then float32-accurate)",
    )
    parser.add_argument(
        "--plus",
        action="store_true",
        help="--algorithm pcs: regret-matching+ (regrets clipped at zero) instead of vanilla regret matching",
    )
    parser.add_argument(
        "--linear", action="store_true", help="--algorithm pcs: average weight max(t - delay, 0) instead of 1"
    )
    parser.add_argument("--delay", type=int, default=0, help="iterations the average leaves out (default 0)")
    parser.add_argument(
        "--every",
        type=int,
        help="measure exploitability every K iterations (default 0: only at the end; with --resume: the file's)",
    )
    parser.add_argument(
        "--target",
        type=float,
        help="stop at the first --every measurement at or below this exploitability, in the game's unit"
        " (chips/hand; mbb/g for games with blinds)",
    )
    parser.add_argument("--resume", type=Path, help="continue from a strategy file written by this command")
    parser.add_argument("-o", "--output", type=Path, required=True, help="strategy file to write")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _betting(args: argparse.Namespace, game: Game) -> BettingAbstraction | None:
    """The betting abstraction of ``--bet-sizes`` (None for a limit game)."""
    if game.is_limit and args.bet_sizes is not None:
        raise UsageError(f"{args.game} is a limit game: --bet-sizes applies only to no-limit games")
    return None if game.is_limit else bet_sizes(args.bet_sizes)


class _Iterative(Protocol):
    """A solver as the solve loop advances it."""

    @property
    def iteration(self) -> int: ...

    def run(self, iterations: int) -> None: ...


class _Run(abc.ABC):
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


class _PCSRun(_Run):
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


class _AbstractRun(_Run):
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


class _MultiRun(_Run):
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


class _SampledRun(_Run):
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


def _multi_setup(args: argparse.Namespace, game: Game) -> _MultiRun:
    if args.algorithm not in (Algorithm.CFR.value, Algorithm.CFR_PLUS.value):
        raise UsageError(f"a three-player game is solved by --algorithm cfr+ or cfr, not {args.algorithm}")
    if args.suit_isomorphism or args.delay or args.abstraction is not None:
        raise UsageError("--suit-isomorphism, --delay and --abstraction do not apply to three-player games")
    if args.bet_sizes is not None:
        raise UsageError("three-player games are solved in limit games only (no --bet-sizes)")
    return _MultiRun(MultiCFR(build_multi_tree(game), plus=args.algorithm == Algorithm.CFR_PLUS.value))


class _Bars:
    """Progress bars of the table builds before a solve, one per stage (the
    callbacks run only when something is built, not when read from the cache)."""

    def __init__(self, disable: bool) -> None:
        self.disable = disable
        self.bar: tqdm[Never] | None = None
        self.name = ""  # the stage of ``bar`` (a disabled tqdm, --quiet, keeps no desc)

    def stage(self, stage: str, done: int, total: int) -> None:
        bar = self.bar
        if bar is None or self.name != stage:
            self.close()
            bar = self.bar = tqdm(total=total, desc=stage, unit="chunk", disable=self.disable)
            self.name = stage
        bar.update(done - bar.n)
        if done == total:
            self.close()

    def tables(self, done: int, total: int) -> None:
        self.stage("joint bucket tables", done, total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _pcs_setup(args: argparse.Namespace, game: Game) -> _PCSRun:
    betting = _betting(args, game)
    abstraction = load_abstraction(args.abstraction or "none", game)
    solver = pcs.PCSSolver(
        game, abstraction, betting=betting, seed=args.seed, plus=args.plus, linear=args.linear, delay=args.delay
    )
    return _PCSRun(solver)


def _sampled_setup(args: argparse.Namespace, game: Game, bars: _Bars) -> _SampledRun:
    if args.abstraction is None:
        raise UsageError(f"--algorithm {SAMPLED} needs --abstraction SPEC (e.g. ehs2:16:imperfect, or none)")
    if args.suit_isomorphism or args.simultaneous or args.delay or args.float32 or args.bet_sizes is not None:
        raise UsageError(
            f"--suit-isomorphism, --simultaneous, --delay, --float32 and --bet-sizes do not apply to {SAMPLED}"
        )
    solver = sampled_files.setup_solver(game, args.abstraction, args.max_raises, seed=args.seed, progress=bars.stage)
    return _SampledRun(solver)


def _abstract_setup(args: argparse.Namespace, game: Game, bars: _Bars) -> _AbstractRun:
    if args.suit_isomorphism or args.simultaneous:
        raise UsageError("--suit-isomorphism and --simultaneous apply to --algorithm cfr+ and cfr only")
    betting = _betting(args, game)
    abstraction = load_abstraction(args.abstraction, game, progress=bars.stage)
    solve = AbstractSolve.build(abstraction, betting=betting, progress=bars.tables, single=args.float32)
    return _AbstractRun(solve, abstract_game.AbstractCFR(solve.game, delay=args.delay))


def _setup(args: argparse.Namespace, bars: _Bars) -> _Run:
    """The run the arguments ask for, fresh or resumed."""
    if args.resume is not None:
        saved = load_strategy(args.resume)
        _check_resume(args, saved)
        compile_notice.expect(*compile_notice.solve_kernels(saved.algorithm, saved.game.num_players))
        if args.every is None:
            args.every = int(saved.settings.get(EVERY, 0))
        if saved.layout == BUCKETS and saved.algorithm == ABSTRACT:
            return _AbstractRun(*AbstractSolve.resume(saved, build_progress=bars.stage, progress=bars.tables))
        if saved.layout == BUCKETS:
            return _PCSRun(pcs.resume_solver(saved))
        if saved.layout == THREE_PLAYER_BUCKETS:
            if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
                raise StrategyFileError(f"{args.resume}: holds no regrets and cumulative strategy to resume from")
            return _SampledRun(sampled_files.resume_solver(saved, bars.stage))
        if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
            raise StrategyFileError(f"{args.resume}: holds no regrets and cumulative strategy to resume from")
        if saved.layout == THREE_PLAYER:
            multi = MultiCFR(saved.build_multi_tree(), plus=bool(saved.settings.get("plus", False)))
            multi.load_arrays(
                iteration=saved.iterations, regret=saved.arrays["regret"], cumulative=saved.arrays["cumulative"]
            )
            return _MultiRun(multi)
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
        return _TreeRun(tree, solver, saved.algorithm)
    if args.game is None:
        raise UsageError("name a GAME to solve (or --resume a file)")
    game = load_game(args.game)
    args.algorithm = args.algorithm or Algorithm.CFR_PLUS.value
    compile_notice.expect(*compile_notice.solve_kernels(args.algorithm, game.num_players))  # one line if they are cold
    if args.float32 and args.algorithm != ABSTRACT:
        raise UsageError("--float32 applies to --algorithm abstract only")
    if (args.plus or args.linear) and args.algorithm != PCS:
        raise UsageError("--plus and --linear apply to --algorithm pcs only (cfr+ is always both)")
    if args.max_raises is not None and args.algorithm != SAMPLED:
        raise UsageError(f"--max-raises applies to --algorithm {SAMPLED} only")
    if game.num_players == 3 and args.algorithm == SAMPLED:
        return _sampled_setup(args, game, bars)
    if args.algorithm == SAMPLED:
        raise UsageError(f"--algorithm {SAMPLED} solves three-player limit games")
    if game.num_players == 3:
        return _multi_setup(args, game)
    if args.algorithm == PCS:
        return _pcs_setup(args, game)
    if args.algorithm == ABSTRACT:
        return _abstract_setup(args, game, bars)
    if args.abstraction is not None:
        raise UsageError("--abstraction applies to --algorithm pcs and abstract only")
    tree = build_tree(game, _betting(args, game), isomorphism=args.suit_isomorphism)
    solver = Solver(tree, args.algorithm, alternating=not args.simultaneous, delay=args.delay)
    return _TreeRun(tree, solver, args.algorithm)


def _check_resume(args: argparse.Namespace, saved: StrategyFile) -> None:
    """Refuse a --resume whose command line names a different solve than the file
    holds: the file's settings win, so a silent mismatch would solve the wrong thing.

    Raises:
        UsageError: naming the first difference.
    """
    given: list[tuple[str, object, object]] = []
    if args.game is not None:
        given.append((f"game {args.game}", load_game(args.game), saved.game))
    if args.algorithm is not None:
        given.append((f"--algorithm {args.algorithm}", args.algorithm, saved.algorithm))
    if args.abstraction is not None:
        given.append((f"--abstraction {args.abstraction}", args.abstraction, saved.card_abstraction))
    if args.bet_sizes is not None:
        given.append((f"--bet-sizes {args.bet_sizes}", bet_sizes(args.bet_sizes), saved.abstraction))
    for option, wanted, stored in given:
        if wanted != stored:
            raise UsageError(
                f"--resume {args.resume} holds a {saved.algorithm} solve of {_describe_saved(saved)};"
                f" it does not match {option} (leave it out to continue the file's solve)"
            )


def _describe_saved(saved: StrategyFile) -> str:
    betting = "" if saved.abstraction is None else f", betting {saved.abstraction.describe()}"
    return f"{shipped_name(saved.game) or 'a game from a file'}{betting}, card abstraction {saved.card_abstraction}"


class _TreeRun(_Run):
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




def main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    if args.iterations < 0 or (args.every or 0) < 0 or args.delay < 0:
        return fail(PROG, "--iterations, --every and --delay must be non-negative", EXIT_USAGE)
    if args.target is not None and not args.every and args.resume is None:
        return fail(PROG, "--target needs --every K (how often to measure)", EXIT_USAGE)
    if args.algorithm == ABSTRACT and args.resume is None and args.abstraction is None:
        return fail(
            PROG,
            "--algorithm abstract needs --abstraction SPEC: a perfect-recall card abstraction"
            " (e.g. ehs2:5:perfect) or none (no abstraction; small games only)",
            EXIT_USAGE,
        )
    problem = output_problem(args.output)
    if problem is not None:
        return fail(PROG, f"-o {args.output}: {problem}", EXIT_USAGE)
    with Interrupts() as interrupts:
        return _solve(args, interrupts)


def _solve(args: argparse.Namespace, interrupts: Interrupts) -> int:
    """Set up, iterate, measure and write; 130 when interrupted (a checkpoint is written)."""
    bars = _Bars(disable=args.quiet)
    try:
        run = _setup(args, bars)
    except (GameDefError, UsageError, FileNotFoundError) as error:
        return fail(PROG, error, EXIT_USAGE)
    except (OSError, TreeError, StrategyFileError, AbstractionError, ValueError) as error:
        return fail(PROG, error, EXIT_FAILED)
    except KeyboardInterrupt:
        return fail(PROG, "interrupted before the first iteration; nothing written", EXIT_INTERRUPTED)
    finally:
        bars.close()
    args.every = run.every = args.every or 0
    if args.target is not None and not args.every:
        return fail(PROG, "--target needs --every K (how often to measure)", EXIT_USAGE)
    measured: float | None = None
    measured_at = -1
    batch = 1
    # No iteration bar with --quiet, nor when stderr is not a terminal (tqdm's None):
    # a redirected run gets the iteration lines alone, not interleaved with bar updates.
    hide = True if args.quiet else None
    bar = tqdm(total=args.iterations, initial=min(run.iteration, args.iterations), unit="it", disable=hide)
    try:
        while run.iteration < args.iterations:
            todo = args.iterations - run.iteration
            if args.every:
                todo = min(todo, args.every - run.iteration % args.every)
            step = min(todo, batch)
            started = time.perf_counter()
            with interrupts.deferred():  # the arrays and the count advance together
                run.run(step)
            elapsed = time.perf_counter() - started
            if elapsed < _BATCH_SECONDS / 2:
                batch *= 2
            elif elapsed > 2 * _BATCH_SECONDS:
                batch = max(1, batch // 2)
            bar.update(step)
            if args.every and run.iteration % args.every == 0:
                measured = run.exploitability()
                measured_at = run.iteration
                if measured is not None:
                    bar.set_postfix_str(f"exploitability {run.describe(measured)}")
                    tqdm.write(f"iteration {run.iteration}: exploitability {run.describe(measured)}", file=sys.stdout)
                if run.checkpoints:
                    run.save(args.output, measured)
                if args.target is not None and measured is not None and measured * run.unit.per_chip <= args.target:
                    break
        bar.close()
        if measured_at != run.iteration:
            measured = run.exploitability()
        result = run.finish(args.output, measured)
    except KeyboardInterrupt:
        bar.close()
        run.save(args.output, None)
        print(f"interrupted at iteration {run.iteration}; checkpoint written to {args.output}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"{run.algorithm} {run.iteration} iterations{run.details}: exploitability {result}; wrote {args.output}")
    return EXIT_OK
