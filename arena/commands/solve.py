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

The solve (:func:`strategies.cfr.runs.solve`) runs in batches between
progress-bar updates; every ``--every`` iterations it measures the exact exploitability of the average strategy (in the
game's unit, :func:`poker.stats.unit_of`) and prints it. Ctrl-C or SIGTERM
stops after the current batch (at once during a measurement) and writes the file
(a checkpoint holding regrets and cumulative strategy, always of the iterations
it counts, so a resume ends where a straight run would; a second Ctrl-C does not
cut it short) before exiting with status 130; the output path is checked before
any work; ``--resume FILE`` continues from any file this command wrote, with the
game, abstraction and settings stored in it.
"""


from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Never

from tqdm import tqdm

from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageParser,
    fail,
    output_problem,
    parse,
)
from poker.gamedef import GameDefError
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.interrupts import Interrupts
from strategies.cfr.runs import (
    ABSTRACT_NEEDS_SPEC,
    PCS,
    SettingsError,
    SolveRun,
    SolveSettings,
    resume_run,
    solve,
    start_run,
)
from strategies.cfr.solvers.abstract_solve import ALGORITHM as ABSTRACT
from strategies.cfr.solvers.sampled_multiplayer import ALGORITHM as SAMPLED
from strategies.cfr.solvers.solver import Algorithm
from strategies.cfr.strategy_file import StrategyFileError
from strategies.cfr.tree.public import TreeError

__all__ = ["main", "run_solve"]

PROG = "arena solve"


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

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class _IterationBar:
    """The iteration bar and the exploitability lines of :func:`strategies.cfr.runs.solve`.
    No bar with ``quiet``, nor when stderr is not a terminal (tqdm's None): a
    redirected run gets the iteration lines alone, not interleaved with bar updates."""

    def __init__(self, quiet: bool) -> None:
        self.hide = True if quiet else None
        self.bar: tqdm[Never] | None = None

    def start(self, done: int, total: int) -> None:
        self.bar = tqdm(total=total, initial=done, unit="it", disable=self.hide)

    def advanced(self, iterations: int) -> None:
        if self.bar is not None:
            self.bar.update(iterations)

    def measured(self, iteration: int, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"exploitability {text}")
        tqdm.write(f"iteration {iteration}: exploitability {text}", file=sys.stdout)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    return run_solve(
        _settings(args),
        iterations=args.iterations,
        output=args.output,
        resume=args.resume,
        target=args.target,
        quiet=args.quiet,
    )


def run_solve(
    settings: SolveSettings,
    *,
    iterations: int,
    output: Path,
    resume: Path | None = None,
    target: float | None = None,
    quiet: bool = False,
) -> int:
    """``arena solve`` with its options as values (``arena bots build`` builds a
    bot's recipe this way): the checks of the options, the set-up with its
    progress bars, :func:`strategies.cfr.runs.solve` with the iteration bar and
    lines, and the final line; the exit status."""
    if iterations < 0 or (settings.every or 0) < 0 or settings.delay < 0:
        return fail(PROG, "--iterations, --every and --delay must be non-negative", EXIT_USAGE)
    if target is not None and not settings.every and resume is None:
        return fail(PROG, "--target needs --every K (how often to measure)", EXIT_USAGE)
    if settings.algorithm == ABSTRACT and resume is None and settings.abstraction is None:
        return fail(PROG, ABSTRACT_NEEDS_SPEC, EXIT_USAGE)
    problem = output_problem(output)
    if problem is not None:
        return fail(PROG, f"-o {output}: {problem}", EXIT_USAGE)
    with Interrupts() as interrupts:
        bars = _Bars(disable=quiet)
        try:
            run = _setup(settings, resume, bars)
        except (GameDefError, SettingsError, FileNotFoundError) as error:
            return fail(PROG, error, EXIT_USAGE)
        except (OSError, TreeError, StrategyFileError, AbstractionError, ValueError) as error:
            return fail(PROG, error, EXIT_FAILED)
        except KeyboardInterrupt:
            return fail(PROG, "interrupted before the first iteration; nothing written", EXIT_INTERRUPTED)
        finally:
            bars.close()
        try:
            solved = solve(
                run, iterations=iterations, output=output, target=target, interrupts=interrupts,
                progress=_IterationBar(quiet),
            )
        except SettingsError as error:
            return fail(PROG, error, EXIT_USAGE)
    if solved.interrupted:
        print(f"interrupted at iteration {run.iteration}; checkpoint written to {output}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"{run.algorithm} {run.iteration} iterations{run.details}: exploitability {solved.exploitability}; wrote {output}")
    return EXIT_OK


def _settings(args: argparse.Namespace) -> SolveSettings:
    """What the command line asks to solve, for :mod:`strategies.cfr.runs`: each
    setting is the option of its name, so a new one needs no line here."""
    return SolveSettings(**{field.name: getattr(args, field.name) for field in dataclasses.fields(SolveSettings)})


def _setup(settings: SolveSettings, resume: Path | None, bars: _Bars) -> SolveRun:
    """The run the settings ask for, fresh or resumed."""
    if resume is not None:
        return resume_run(resume, settings, progress=bars.stage)
    return start_run(settings, progress=bars.stage)
