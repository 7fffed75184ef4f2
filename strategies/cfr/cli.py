"""``arena solve GAME --algorithm cfr+|cfr|pcs --iterations N -o FILE``: solve a game
on its public tree and write a strategy file.

``--algorithm pcs`` is public chance sampling (one board per iteration, seeded by
``--seed``) on the betting tree with tables per card bucket of ``--abstraction
SPEC`` (``ehs2:5:perfect``, ``none``...); its exploitability is measured in the
real game when the game's public tree can be built (small games), else not.

The solve runs in batches between progress-bar updates; every ``--every``
iterations it measures the exact exploitability of the average strategy (chips
per hand, and mbb/g) and prints it. Ctrl-C stops after the current batch and
writes the file (a checkpoint holding regrets and cumulative strategy) before
exiting with status 130; ``--resume FILE`` continues from any file this command
wrote, with the game, abstraction and settings stored in it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm

from poker.gamedef import Game, GameDefError, load_game
from strategies.cfr import pcs
from strategies.cfr.abstraction import AbstractionError, load_abstraction
from strategies.cfr.best_response import exploitability, to_mbb
from strategies.cfr.solver import Algorithm, Solver
from strategies.cfr.strategy_file import (
    BUCKETS,
    StrategyFile,
    StrategyFileError,
    load_strategy,
    save_strategy,
)
from strategies.cfr.tree import BettingAbstraction, Tree, TreeError, build_tree

__all__ = ["main"]

_BATCH_SECONDS = 0.25  # aim for progress updates (and Ctrl-C checks) about this often
PCS = "pcs"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena solve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", nargs="?", help="short game name or .game file (not needed with --resume)")
    parser.add_argument(
        "--algorithm", choices=[a.value for a in Algorithm] + [PCS], default=Algorithm.CFR_PLUS.value
    )
    parser.add_argument(
        "--abstraction", help="card abstraction spec for pcs, e.g. ehs2:5:perfect (default none: no abstraction)"
    )
    parser.add_argument("--seed", type=int, default=0, help="board sampler seed for pcs (default 0)")
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
    parser.add_argument("--delay", type=int, default=0, help="iterations the average leaves out (default 0)")
    parser.add_argument(
        "--every", type=int, default=0, help="measure exploitability every K iterations (0: only at the end)"
    )
    parser.add_argument("--resume", type=Path, help="continue from a strategy file written by this command")
    parser.add_argument("-o", "--output", type=Path, required=True, help="strategy file to write")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _abstraction(text: str | None) -> BettingAbstraction:
    if text is None:
        return BettingAbstraction()
    try:
        fractions = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise TreeError(f"--bet-sizes {text!r} is not a comma-separated list of numbers") from None
    return BettingAbstraction(fractions)


class _PCSRun:
    """A PCS solver with the interface the solve loop uses (``iteration``, ``run``),
    its real-game tree when that can be built (for exploitability), and saving."""

    def __init__(self, solver: pcs.PCSSolver) -> None:
        self.solver = solver
        try:
            self.tree: Tree | None = build_tree(solver.game, solver.tree.abstraction)
        except TreeError:
            self.tree = None

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def run(self, iterations: int) -> None:
        self.solver.run(iterations)

    def exploitability(self) -> float | None:
        if self.tree is None:
            return None
        return exploitability(self.tree, self.solver.strategy().tree_strategy(self.tree))

    def save(self, path: Path, measured: float | None) -> None:
        save_strategy(path, pcs.strategy_file(self.solver, measured), self.solver.tree)

    def describe(self, value: float) -> str:
        return f"{value:.6g} chips/hand ({1000.0 * value / self.solver.game.big_blind:.4g} mbb/g)"


def _pcs_setup(args: argparse.Namespace, game: Game) -> _PCSRun:
    if game.is_limit and args.bet_sizes is not None:
        raise TreeError(f"{args.game} is a limit game: --bet-sizes applies only to no-limit games")
    betting = None if game.is_limit else _abstraction(args.bet_sizes)
    abstraction = load_abstraction(args.abstraction or "none", game)
    return _PCSRun(pcs.PCSSolver(game, abstraction, betting=betting, seed=args.seed, delay=args.delay))


def _setup(args: argparse.Namespace) -> tuple[Tree, Solver, str] | _PCSRun:
    """The tree and solver, fresh or resumed, and the algorithm name (or a PCS run)."""
    if args.resume is not None:
        saved = load_strategy(args.resume)
        if saved.layout == BUCKETS:
            return _PCSRun(pcs.resume_solver(saved))
        tree = saved.build_tree()
        if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
            raise StrategyFileError(f"{args.resume}: holds no regrets and cumulative strategy to resume from")
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
        return tree, solver, saved.algorithm
    if args.game is None:
        raise TreeError("name a GAME to solve (or --resume a file)")
    game = load_game(args.game)
    if args.algorithm == PCS:
        return _pcs_setup(args, game)
    if args.abstraction is not None:
        raise TreeError("--abstraction applies to --algorithm pcs only")
    if game.is_limit and args.bet_sizes is not None:
        raise TreeError(f"{args.game} is a limit game: --bet-sizes applies only to no-limit games")
    tree = build_tree(game, None if game.is_limit else _abstraction(args.bet_sizes), isomorphism=args.suit_isomorphism)
    solver = Solver(tree, args.algorithm, alternating=not args.simultaneous, delay=args.delay)
    return tree, solver, args.algorithm


def _save(path: Path, tree: Tree, solver: Solver, algorithm: str, measured: float | None) -> None:
    strategy_file = StrategyFile(
        game=tree.game,
        abstraction=tree.abstraction,
        algorithm=algorithm,
        iterations=solver.iteration,
        exploitability=measured,
        arrays={"strategy": solver.average_strategy(), "regret": solver.regret, "cumulative": solver.cumulative},
        settings={"alternating": solver.alternating, "linear_average": solver.linear_average, "delay": solver.delay},
        isomorphism=tree.isomorphism,
    )
    save_strategy(path, strategy_file, tree)


def _describe(tree: Tree, value: float) -> str:
    return f"{value:.6g} chips/hand ({to_mbb(tree, value):.4g} mbb/g)"


class _TreeRun:
    """The public-tree CFR / CFR+ solver behind the same interface as :class:`_PCSRun`."""

    def __init__(self, tree: Tree, solver: Solver, algorithm: str) -> None:
        self.tree = tree
        self.solver = solver
        self.algorithm = algorithm

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def run(self, iterations: int) -> None:
        self.solver.run(iterations)

    def exploitability(self) -> float | None:
        return exploitability(self.tree, self.solver.average_strategy())

    def save(self, path: Path, measured: float | None) -> None:
        _save(path, self.tree, self.solver, self.algorithm, measured)

    def describe(self, value: float) -> str:
        return _describe(self.tree, value)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.iterations < 0 or args.every < 0 or args.delay < 0:
        print("arena solve: --iterations, --every and --delay must be non-negative", file=sys.stderr)
        return 2
    try:
        setup = _setup(args)
    except (OSError, GameDefError, TreeError, StrategyFileError, AbstractionError, ValueError) as error:
        print(f"arena solve: {error}", file=sys.stderr)
        return 1
    run: _TreeRun | _PCSRun = _TreeRun(*setup) if isinstance(setup, tuple) else setup
    algorithm = run.algorithm if isinstance(run, _TreeRun) else PCS
    measured: float | None = None
    measured_at = -1
    batch = 1
    bar = tqdm(total=args.iterations, initial=min(run.iteration, args.iterations), unit="it", disable=args.quiet)
    try:
        while run.iteration < args.iterations:
            todo = args.iterations - run.iteration
            if args.every:
                todo = min(todo, args.every - run.iteration % args.every)
            step = min(todo, batch)
            started = time.perf_counter()
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
                    bar.set_postfix_str(f"exploitability {measured:.4g}")
                    tqdm.write(f"iteration {run.iteration}: exploitability {run.describe(measured)}", file=sys.stdout)
                else:
                    run.save(args.output, None)  # a checkpoint every --every iterations
    except KeyboardInterrupt:
        bar.close()
        run.save(args.output, None)
        print(f"interrupted at iteration {run.iteration}; checkpoint written to {args.output}", file=sys.stderr)
        return 130
    bar.close()
    if measured_at != run.iteration:
        measured = run.exploitability()
    run.save(args.output, measured)
    result = "not measured (the game's public tree is too big)" if measured is None else run.describe(measured)
    print(f"{algorithm} {run.iteration} iterations: exploitability {result}; wrote {args.output}")
    return 0
