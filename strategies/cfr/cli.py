"""``arena solve GAME --algorithm cfr+|cfr --iterations N -o FILE``: solve a game
on its public tree and write a strategy file.

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

from poker.gamedef import GameDefError, load_game
from strategies.cfr.best_response import exploitability, to_mbb
from strategies.cfr.solver import Algorithm, Solver
from strategies.cfr.strategy_file import StrategyFile, StrategyFileError, load_strategy, save_strategy
from strategies.cfr.tree import BettingAbstraction, Tree, TreeError, build_tree

__all__ = ["main"]

_BATCH_SECONDS = 0.25  # aim for progress updates (and Ctrl-C checks) about this often


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena solve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", nargs="?", help="short game name or .game file (not needed with --resume)")
    parser.add_argument("--algorithm", choices=[a.value for a in Algorithm], default=Algorithm.CFR_PLUS.value)
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


def _setup(args: argparse.Namespace) -> tuple[Tree, Solver, str]:
    """The tree and solver, fresh or resumed, and the algorithm name."""
    if args.resume is not None:
        saved = load_strategy(args.resume)
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


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.iterations < 0 or args.every < 0 or args.delay < 0:
        print("arena solve: --iterations, --every and --delay must be non-negative", file=sys.stderr)
        return 2
    try:
        tree, solver, algorithm = _setup(args)
    except (OSError, GameDefError, TreeError, StrategyFileError, ValueError) as error:
        print(f"arena solve: {error}", file=sys.stderr)
        return 1
    measured: float | None = None
    measured_at = -1
    batch = 1
    bar = tqdm(total=args.iterations, initial=min(solver.iteration, args.iterations), unit="it", disable=args.quiet)
    try:
        while solver.iteration < args.iterations:
            todo = args.iterations - solver.iteration
            if args.every:
                todo = min(todo, args.every - solver.iteration % args.every)
            step = min(todo, batch)
            started = time.perf_counter()
            solver.run(step)
            elapsed = time.perf_counter() - started
            if elapsed < _BATCH_SECONDS / 2:
                batch *= 2
            elif elapsed > 2 * _BATCH_SECONDS:
                batch = max(1, batch // 2)
            bar.update(step)
            if args.every and solver.iteration % args.every == 0:
                measured = exploitability(tree, solver.average_strategy())
                measured_at = solver.iteration
                bar.set_postfix_str(f"exploitability {measured:.4g}")
                tqdm.write(f"iteration {solver.iteration}: exploitability {_describe(tree, measured)}", file=sys.stdout)
    except KeyboardInterrupt:
        bar.close()
        _save(args.output, tree, solver, algorithm, None)
        print(f"interrupted at iteration {solver.iteration}; checkpoint written to {args.output}", file=sys.stderr)
        return 130
    bar.close()
    if measured is None or measured_at != solver.iteration:
        measured = exploitability(tree, solver.average_strategy())
    _save(args.output, tree, solver, algorithm, measured)
    print(f"{algorithm} {solver.iteration} iterations: exploitability {_describe(tree, measured)}; wrote {args.output}")
    return 0
