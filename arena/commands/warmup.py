"""``arena warmup``: compile the numba kernels ahead of the first run.

Every kernel is ``@njit(cache=True)``: numba compiles it on the first call with
new argument types and caches the machine code on disk (``__pycache__`` beside
the source, or ``$NUMBA_CACHE_DIR``). A fresh clone's first solve would spend
minutes compiling (:mod:`strategies.cfr.compile_notice` says so when it
happens); this runs every path a user typically takes once, on tiny games
(Kuhn, Leduc: numba specialises on argument types, not sizes, so hold'em
reuses the same machine code), so the compilation happens at set-up instead:

* the hand evaluator's batch ranking of hold'em showdowns (7-card hands, as
  public chance sampling ranks them; the dealer ranks in plain Python);
* CFR / CFR+ on the public tree (``arena solve``'s :func:`strategies.cfr.runs.solve`,
  ``Solver.solve_to``) and exact
  exploitability (``arena exploitability``);
* public chance sampling over a card abstraction (``--algorithm pcs``), which
  also builds perfect- and imperfect-recall abstractions (the bucketing kernels);
* the explicit abstract game (``--algorithm abstract``, float64 and ``--float32``);
* external-sampling MCCFR for three players (``--algorithm es-mccfr``);
* continual re-solving (the gadget on both streets, exact and with a value
  net) and ``arena train-values`` (situation solves, training, refinement);
* ``resolve`` and ``modicum`` in HUNL with their defaults (the equity
  evaluator's depth-limited re-solve on hold'em boards, modicum's continuation
  values): making them warms what a hand runs, as a match does before its clock;
* the estimators a no-limit hold'em match reports at its end (all-in adjusted
  run-outs) and ``arena analyze --strategy`` computes in hold'em (AIVAT with
  the equity value function), so the first HUNL match does not end compiling
  (8 kernels, about 9 s on 2 cores).

With a warm cache it takes a few seconds (loading, not compiling) and says
``cached``; after a numba upgrade or a kernel edit numba compiles again what
changed. Not covered (compiled on first use, with the notice): 3-player CFR on
the full tree, the blind best response and the rest of :mod:`poker.evaluate`'s API.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

import numpy as np

from arena.commands._kit import EXIT_OK, UsageParser, parse
from strategies.cfr import compile_notice
from strategies.bots import LIBRARY
from strategies.cfr.runs import SolveSettings, solve, start_run

__all__ = ["STEPS", "StepResult", "main", "warm_bot", "warm_up"]

PROG = "arena warmup"


@dataclass(frozen=True)
class StepResult:
    """One warm-up step: its name, seconds taken and the kernels numba compiled
    (empty: everything came from the cache)."""

    name: str
    seconds: float
    compiled: tuple[str, ...]


def _evaluator(tmp: Path) -> None:
    from poker.evaluate import rank_hands

    rank_hands(np.arange(7, dtype=np.int64).reshape(1, 7))


def _run(command: str, main: Callable[[list[str]], int], argv: list[str]) -> None:
    """``main(argv)`` with its output swallowed; a failure names ``command ARGV``."""
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    if status != 0:
        raise RuntimeError(f"warm-up: {command} {' '.join(argv)} failed with status {status}")


def _solve(settings: SolveSettings, iterations: int, path: Path) -> None:
    """The solve ``arena solve`` runs for ``settings``, written to ``path``."""
    solve(start_run(settings), iterations=iterations, output=path)


def _exploitability(path: Path) -> None:
    from arena.commands import exploitability as cli_exploitability

    _run("arena exploitability", cli_exploitability.main, [str(path)])


def _solver(tmp: Path) -> None:
    from poker.gamedef import load_game
    from strategies.cfr.solvers.solver import Solver
    from strategies.cfr.tree.public import build_tree

    for game in ("kuhn", "leduc"):
        path = tmp / f"{game}.strategy"
        _solve(SolveSettings(game=game, every=1), 2, path)
        _exploitability(path)
    Solver(build_tree(load_game("leduc"))).solve_to(0.0, check_every=1, max_iterations=2)


def _pcs(tmp: Path) -> None:
    path = tmp / "pcs.strategy"
    _solve(SolveSettings(game="leduc", algorithm="pcs", abstraction="ehs2:3:perfect"), 2, path)
    _exploitability(path)
    # Imperfect recall buckets the last round by one more kernel.
    _solve(SolveSettings(game="leduc", algorithm="pcs", abstraction="ehs:2:imperfect"), 1, path)


def _abstract(tmp: Path) -> None:
    for float32 in (False, True):
        path = tmp / "abstract.strategy"
        settings = SolveSettings(game="leduc", algorithm="abstract", abstraction="ehs2:3:perfect", every=1, float32=float32)
        _solve(settings, 2, path)
        _exploitability(path)


def _sampled(tmp: Path) -> None:
    # External-sampling MCCFR (3 players), lossless and through E[HS²] buckets.
    path = tmp / "sampled.strategy"
    for abstraction in ("none", "ehs2:2:imperfect"):
        _solve(SolveSettings(game="leduc.limit.3p", algorithm="es-mccfr", abstraction=abstraction), 20, path)


def _resolve(tmp: Path) -> None:
    from poker.deal import private_hands
    from poker.gamedef import load_game
    from poker.state import CALL, Action, State
    from strategies.resolve.agent import ResolvingStrategy
    from strategies.resolve.evaluators import NetEvaluator
    from strategies.resolve.train import agent_questions, generate, train
    from strategies.resolve.values import ValueNet

    game = load_game("leduc.nolimit")
    # Value-net training, and its refinement's walk (the depth-limited
    # lookahead, run-outs, plain-loop inference).
    rng = np.random.default_rng(0)
    params, _ = train(generate(game, 10, iterations=2, rng=rng), hidden=4, epochs=1, rng=rng)
    net = ValueNet(game, game.num_rounds - 1, params[0::2], params[1::2])
    agent_questions(game, net, iterations=2)
    # Re-solving with the gadget on the engine's lookahead, both streets,
    # with the exact evaluator and with the network (which carries values across the board).
    bet = State(game).apply(Action.raise_to(300))
    board = (int(private_hands(game)[0, 0]),)
    for evaluator in (None, NetEvaluator(game, net)):
        agent = ResolvingStrategy(game, iterations=2, seed=0, evaluator=evaluator)
        agent.resolution(bet, ())
        agent.resolution(bet.apply(CALL), board)


def _estimators(tmp: Path) -> None:
    # What a no-limit hold'em match computes at its end (all-in adjusted: the
    # run-outs of hands all in before the river) and ``arena analyze --strategy``
    # in hold'em (AIVAT with the equity value function: equities on every board).
    from analysis.aivat import EquityValues, aivat
    from analysis.allin import adjusted_hands
    from analysis.importance import simulate_hands
    from poker.gamedef import load_game
    from strategies import make_strategy

    game = load_game("hunl")
    raiser, caller = make_strategy("always-raise:size=max", game, seed=0), make_strategy("always-call", game, seed=0)
    hands = simulate_hands(game, [raiser, caller], 2, seed=0, names=("raiser", "caller"))
    adjusted_hands(hands)
    aivat(hands, "caller", caller, EquityValues(game))


def _holdem_resolve(tmp: Path) -> None:
    # The HUNL bots with their defaults: making them compiles what a hand runs
    # (the equity evaluator's depth-limited re-solve on hold'em boards,
    # modicum's continuation values at the depth limit and its blueprint's buckets).
    from poker.gamedef import load_game
    from strategies import make_strategy

    game = load_game("hunl")
    for spec in ("resolve", "modicum"):
        make_strategy(spec, game, seed=0)


def _preflop_table(tmp: Path) -> None:
    # Hold'em AIVAT with hulhe-ir50's own values: its pre-flop equity table
    # (data, not a kernel: about a minute to build, then read), which the first
    # scoring of a hulhe-ir50 match would build otherwise. Into the user's cache
    # (_KEPT), not the scratch one.
    from analysis.policy_values import preflop_equities
    from poker.gamedef import load_game

    preflop_equities(load_game("hulhe"))


#: The warm-up steps in order: (name, function of a scratch folder).
STEPS: tuple[tuple[str, Callable[[Path], None]], ...] = (
    ("hand evaluator", _evaluator),
    ("CFR solver and exploitability", _solver),
    ("card abstraction and public chance sampling", _pcs),
    ("abstract game", _abstract),
    ("sampled 3-player CFR", _sampled),
    ("continual re-solving and value-net training", _resolve),
    ("hold'em re-solving (resolve and modicum in HUNL)", _holdem_resolve),
    ("match estimators in hold'em (all-in adjusted, AIVAT)", _estimators),
    ("hulhe-ir50's own values for AIVAT (a pre-flop equity table, built once)", _preflop_table),
)
#: The steps whose result is kept in the user's cache (``$ACPC_ARENA_CACHE``), not the scratch one.
_KEPT: Final = frozenset({_preflop_table})


@contextlib.contextmanager
def _cache_set(value: str | None) -> Iterator[None]:
    """``$ACPC_ARENA_CACHE`` set to ``value`` (None: unset) meanwhile."""
    saved = os.environ.get("ACPC_ARENA_CACHE")
    try:
        if value is None:
            os.environ.pop("ACPC_ARENA_CACHE", None)
        else:
            os.environ["ACPC_ARENA_CACHE"] = value
        yield
    finally:
        if saved is None:
            os.environ.pop("ACPC_ARENA_CACHE", None)
        else:
            os.environ["ACPC_ARENA_CACHE"] = saved


@contextlib.contextmanager
def _scratch_cache() -> Iterator[Path]:
    """A scratch folder, also the abstraction cache (``$ACPC_ARENA_CACHE``) meanwhile:
    the Leduc abstraction built here is not left in the user's cache."""
    with tempfile.TemporaryDirectory(prefix="acpc-arena-warmup-") as name, _cache_set(str(Path(name) / "cache")):
        yield Path(name)


def warm_up(stream: TextIO | None = None) -> list[StepResult]:
    """Run :data:`STEPS`, writing one line per step to ``stream`` (None: silent)."""
    results = []
    users = os.environ.get("ACPC_ARENA_CACHE")
    with _scratch_cache() as tmp:
        for name, step in STEPS:
            started = time.perf_counter()
            kept = _cache_set(users) if step in _KEPT else contextlib.nullcontext()
            with compile_notice.recording() as compiled, kept:
                step(tmp)
            seconds = time.perf_counter() - started
            result = StepResult(name, seconds, tuple(compiled))
            results.append(result)
            if stream is not None:
                what = f"compiled {len(compiled)} kernels" if compiled else "cached"
                print(f"  {name}: {seconds:.1f} s ({what})", file=stream, flush=True)
    return results


def warm_bot(name: str) -> StepResult:
    """Build the library bot ``name`` in its game, as a match's seat builds it:
    what its play compiles (the card abstraction's buckets, a re-solver's
    kernels) is then in the cache. ``arena serve`` runs this in a process of
    its own for each hosted bot that compiles kernels before its first match
    (:mod:`arena.serve.warming`), so that no match waits on a compile inside
    its start timeout.

    Raises:
        KeyError: no library bot ``name``.
    """
    from poker.gamedef import load_game
    from strategies import make_strategy
    from strategies.bots import LIBRARY

    bot = LIBRARY[name]
    started = time.perf_counter()
    with compile_notice.recording() as compiled:
        make_strategy(name, load_game(bot.game), seed=0)
    return StepResult(name, time.perf_counter() - started, tuple(compiled))


def main(argv: list[str]) -> int:
    parser = UsageParser(
        PROG,
        "Compile (and cache) the numba kernels that arena solve, arena exploitability, re-solving and the"
        " hand evaluator use, so the first real run does not wait minutes for them.",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    parser.add_argument(
        "--bot", action="append", default=[], metavar="NAME", choices=sorted(LIBRARY),
        help="warm only this library bot (what its play compiles), one line when it is ready; repeatable",
    )
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    stream = None if args.quiet else sys.stderr
    if args.bot:
        for name in args.bot:
            result = warm_bot(name)
            what = f"compiled {len(result.compiled)} kernels" if result.compiled else "cached"
            if stream is not None:
                print(f"{name}: ready in {result.seconds:.1f} s ({what})", file=stream, flush=True)
        return EXIT_OK
    if stream is not None:
        print("numba kernels: compiling once (cached on disk; a few seconds when already cached)", file=stream)
    started = time.perf_counter()
    results = warm_up(stream)
    if stream is not None:
        compiled = sum(len(r.compiled) for r in results)
        print(f"numba kernels ready in {time.perf_counter() - started:.1f} s ({compiled} compiled)", file=stream)
    return EXIT_OK
