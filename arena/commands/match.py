"""``arena match GAME [--hands N] [--seed S] BOT BOT [BOT]``: a whole local match in one command.

Starts the dealer (in this process, :func:`dealer.server.serve_match`) and one
agent per seat (``python -m agent …`` processes by default, trio tasks with
``--in-process``), shows a progress bar, and leaves in the run directory what
the reference's ``play_match.pl`` script leaves: ``<match>.log``, the dealer's
``<match>.err`` and stdout ``<match>.out``, and each agent's
``<match>.player<N>.std/.err``; plus the dealer's transaction log
``<match>.tlog``, its hand records, ``plan.json`` (what was asked for, written
before the first hand) and ``results.json``. It then prints one row per agent:
the mean result per hand in the game's unit with its 95% interval
(:mod:`poker.stats`). The dealer runs quiet (``-q``), so its ``.err`` holds
only the header, warnings and errors; the table is followed by the number of
WARNING lines, if any. When the match allows an unbiased estimator with less
variance than the money (:mod:`analysis.match_score`, which scores every match:
all-in adjusted in no-limit games; AIVAT in Kuhn and Leduc when an agent's
strategy states its policy),
each agent's best one follows with its 95% interval (also in ``results.json``,
``"best_estimates"``). The progress bar follows the STATE lines the dealer
appends to its ``.log``.

Duplicate (``--duplicate``; docs/protocol.md, The dealer's rules): the same seed is played once per
seating, with fresh agents each time: seats reversed heads-up, all six
permutations three-handed. Cards go to positions, so every agent is dealt every
other agent's cards in the same spots. An agent's duplicate value for hand *h*
is its result in hand *h* averaged over the seatings, and the interval is over
those per-hand averages.

Seat names are the strategy names, numbered when they repeat
(``always-call-1``, ``always-call-2``); each agent keeps its name and its seed
(derived from the match seed and its place on the command line) in every
seating, so a seeded random agent plays the same stream each time.

Interrupting and resuming. Agent processes run in a session of their own, so
a terminal's Ctrl-C reaches only ``arena match``. SIGINT or SIGTERM terminates
the agent processes (SIGTERM, silently) and stops the dealer at its next wait
(in-process agents see their connections end); a second signal cancels what is
left at once. The dealer's ``.log``/``.tlog`` hold every finished hand and
every action of the unfinished one. ``results.json`` is then written with ``"partial": true`` and
the hands played per seating, the table is printed if at least two hands were
played, and the exit status is 130. ``arena match --resume RUN_DIR`` plays the
rest from ``plan.json``: seatings with a SCORE line are read from their logs,
the others are handed to the dealer with ``-a -T`` (append, transaction log),
which replays the ``.tlog``, so the cards and the unfinished hand continue
exactly where they stopped. Agents keep no state between hands, so fresh ones
are started; an agent that joins a seating after hand *h* > 0 gets the seed
:func:`resumed_seed` (match seed, its place, *h*), so a resume is reproducible.

In a partial result of a duplicate match the table's mean is over the hands
every seating finished (:mod:`analysis.match_score`), or, under two such hands,
over every hand played.

Exit statuses: 0 done; 1 the dealer aborted or an agent failed (one line,
causes first: an agent's own fault, then the dealer's reason, then agents that
lost their connection because the dealer aborted; it names the files to read);
2 usage (bad options, a run directory that holds a run, a ``--resume`` that
contradicts the plan); 130 interrupted (docs/exit-statuses.md).

Without ``--hands`` a match is :data:`DEFAULT_HANDS` hands; without ``--seed``
the seed comes from the clock and is printed on stderr, so the run can be
repeated (it is in ``plan.json`` too).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import trio
from tqdm import tqdm

from analysis.match_score import MatchScore
from analysis.tables import plural
from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    UsageParser,
    fail,
    parse,
)
from arena.match import (
    AGENT_LIMITS,
    NO_START_TIMEOUT,
    PLAN_FORMAT,
    Bot,
    SeatingResult,
    MatchError,
    MatchPlan,
    agent_seed,
    format_best,
    format_table,
    read_seating,
    run_plan_with_signals,
    score_seatings,
    sigterm_as_interrupt,
    seat_names,
    write_json,
    write_results,
)
from dealer.budget import TimeLimits
from dealer.lock import MatchInUseError, MatchLock
from poker.gamedef import Game, GameDefError, format_game, load_game, parse_game
from strategies.base import Spec, StrategyError, make_strategy

__all__ = ["main", "plan_from_args", "plan_from_resume"]

PROG = "arena match"
#: Hands per match without ``--hands``: enough for a first interval, a few seconds with simple bots.
DEFAULT_HANDS: Final = 1000
#: Files of a run (what ``--force`` removes): ours, the dealer's and the agents'.
_RUN_FILE = re.compile(
    r"(plan\.json|results\.json"
    r"|match(\.\d+)?\.(log|tlog|err|out|hands\.msgpack|events\.jsonl|player\d+\.(std|err)|[^/]+\.components\.csv|[^/]+\.values\.msgpack))"
)
_RUN_LOCK = "run.lock"


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _milliseconds(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of milliseconds, got {value}")
    return value


def _start_timeout(text: str) -> int:
    value = _int(text)
    if value < 1 and value != NO_START_TIMEOUT:
        raise argparse.ArgumentTypeError(f"must be a positive number of milliseconds or -1 (no limit), got {value}")
    return value


def _hands(text: str) -> int:
    value = _int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2 (a confidence interval needs two hands), got {value}")
    if value >= 2**32:
        raise argparse.ArgumentTypeError(f"must be below 4294967296 (the dealer's limit), got {value}")
    return value


def _seed(text: str) -> int:
    value = _int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be in 0..4294967295, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        PROG,
        "Play a local match: our dealer plus one agent per BOT, then a results table.",
        epilog=(
            "BOT is a strategy spec NAME[:option=value,...] as for `arena agent --strategy`.\n"
            "With --resume RUN_DIR, GAME, BOTs and the options of the plan may be left out;\n"
            "those given must agree with the run's plan.json.\n\n"
            "exit status: 0 done, 1 the dealer aborted or an agent failed, 2 usage,\n"
            "130 interrupted (SIGINT/SIGTERM; results.json then says \"partial\": true)"
        ),
    )
    parser.add_argument("game", metavar="GAME", nargs="?", help="game file or short game name (kuhn, leduc, hulhe, ...)")
    parser.add_argument("bots", metavar="BOT", nargs="*", help="one strategy per seat, in seat order")
    parser.add_argument(
        "--hands", type=_hands, metavar="N", help=f"hands per match (at least 2; default {DEFAULT_HANDS})"
    )
    parser.add_argument(
        "--seed", type=_seed, metavar="S", help="card seed (0..2^32-1; default: from the clock, printed)"
    )
    parser.add_argument(
        "--duplicate", action="store_true", default=None, help="also play the other seatings with the same cards"
    )
    parser.add_argument("--in-process", action="store_true", help="agents as tasks in this process, not processes")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--run-dir", type=Path, metavar="DIR", help="default: runs/<time>-<game>-<seed>/")
    where.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="play the rest of an interrupted or failed run, same cards"
    )
    parser.add_argument("--force", action="store_true", help="with --run-dir: replace the run that directory holds")
    parser.add_argument("--t-response", type=_milliseconds, metavar="MS", help="per response (default 600000)")
    parser.add_argument("--t-hand", type=_milliseconds, metavar="MS", help="per seat and hand (default 600000)")
    parser.add_argument("--t-per-hand", type=_milliseconds, metavar="MS", help="average per hand (default 7000)")
    parser.add_argument(
        "--start-timeout", type=_start_timeout, metavar="MS", help="for all agents to connect (default -1: no limit)"
    )
    return parser


#: plan.json key -> (option as the user writes it, argparse attribute, default)
_OPTIONS: Final = (
    ("hands", "--hands", "hands", DEFAULT_HANDS),
    ("seed", "--seed", "seed", None),
    ("duplicate", "--duplicate", "duplicate", False),
    ("t_response_ms", "--t-response", "t_response", AGENT_LIMITS.response_ms),
    ("t_hand_ms", "--t-hand", "t_hand", AGENT_LIMITS.hand_ms),
    ("t_per_hand_ms", "--t-per-hand", "t_per_hand", AGENT_LIMITS.per_hand_ms),
    ("start_timeout_ms", "--start-timeout", "start_timeout", NO_START_TIMEOUT),
)


def _default_run_dir(game_arg: str, seed: int) -> Path:
    stem = Path(game_arg).name.removesuffix(".game")
    base = Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-{stem}-{seed}"
    candidates = (base if n == 0 else base.with_name(f"{base.name}.{n}") for n in itertools.count())
    return next(path for path in candidates if not path.exists())


def _build_plan(
    game: Game,
    game_arg: str,
    game_file: str | None,
    specs: Sequence[str],
    options: dict[str, Any],
    run_dir: Path,
    in_process: bool,
) -> MatchPlan:
    if len(specs) != game.num_players:
        n = game.num_players
        raise UsageError(f"{game_arg} is a {n}-player game: give {plural(n, 'bot')}, not {len(specs)}")
    seed = options["seed"]
    parsed = [Spec.parse(text) for text in specs]  # once: the plan carries the values to the seats
    names = seat_names(parsed)
    bots = tuple(Bot(spec, name, agent_seed(seed, i)) for i, (spec, name) in enumerate(zip(parsed, names)))
    for spec, bot in zip(parsed, bots):
        make_strategy(spec, game, seed=bot.seed)  # fail now, not in a seat
    seats = range(game.num_players)
    seatings = tuple(itertools.permutations(seats)) if options["duplicate"] else (tuple(seats),)
    return MatchPlan(
        game=game,
        game_arg=game_arg,
        hands=options["hands"],
        seed=seed,
        bots=bots,
        seatings=seatings,
        run_dir=run_dir,
        in_process=in_process,
        limits=TimeLimits(options["t_response_ms"], options["t_hand_ms"], options["t_per_hand_ms"], options["start_timeout_ms"]),
        game_file=game_file,
    )


def plan_from_args(args: argparse.Namespace) -> MatchPlan:
    """Check the arguments of a new run and build its plan. Without ``--seed`` the
    seed comes from the clock and is printed, so that the run can be repeated.

    Raises:
        GameDefError, StrategyError: a bad game or strategy.
        UsageError: a missing argument or a bad combination (count of bots).
    """
    if args.game is None or not args.bots:
        needed = ", ".join(what for what, given in (("GAME", args.game), ("BOT", args.bots)) if not given)
        raise UsageError(f"missing {needed} (both are needed unless --resume RUN_DIR)")
    game = load_game(args.game)
    if args.seed is None:
        args.seed = int(time.time()) % 2**32
        print(f"{PROG}: seed {args.seed} (--seed {args.seed} deals the same cards)", file=sys.stderr)
    options = {key: default if getattr(args, attr) is None else getattr(args, attr) for key, _, attr, default in _OPTIONS}
    game_file = str(Path(args.game).resolve()) if Path(args.game).is_file() else None
    run_dir = args.run_dir if args.run_dir is not None else _default_run_dir(args.game, args.seed)
    return _build_plan(game, args.game, game_file, args.bots, options, run_dir, args.in_process)


def _plan_document(plan: MatchPlan) -> dict[str, Any]:
    return {
        "format": PLAN_FORMAT,
        "game": plan.game_arg,
        "game_file": plan.game_file,
        "game_definition": format_game(plan.game),
        "bots": [str(bot.spec) for bot in plan.bots],
        "hands": plan.hands,
        "seed": plan.seed,
        "duplicate": plan.duplicate,
        "t_response_ms": plan.limits.response_ms,
        "t_hand_ms": plan.limits.hand_ms,
        "t_per_hand_ms": plan.limits.per_hand_ms,
        "start_timeout_ms": plan.limits.start_timeout_ms,
        "names": [bot.name for bot in plan.bots],
        "agent_seeds": [bot.seed for bot in plan.bots],
    }


def _show(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value).lower() if isinstance(value, bool) else str(value)


def plan_from_resume(args: argparse.Namespace) -> MatchPlan:
    """The plan of ``--resume RUN_DIR``, checked against whatever the command
    line repeats of it.

    Raises:
        UsageError: no readable plan.json, or the command line contradicts it.
    """
    run_dir: Path = args.resume
    where = f"--resume {run_dir}"
    if args.force:
        raise UsageError("--force does not go with --resume (a resume never replaces a run)")
    try:
        document = json.loads((run_dir / "plan.json").read_text())
        if document.get("format") != PLAN_FORMAT:
            raise ValueError(f"format {document.get('format')!r}, not {PLAN_FORMAT}")
        game = parse_game(document["game_definition"], source=f"{run_dir / 'plan.json'}")
        options = {key: document[key] for key, _, _, _ in _OPTIONS}
        specs = [str(spec) for spec in document["bots"]]
        game_arg = str(document["game"])
    except FileNotFoundError:
        raise UsageError(f"{where}: no plan.json there: not a run of arena match, or one that never started") from None
    except (OSError, ValueError, KeyError, TypeError, GameDefError) as error:
        raise UsageError(f"{where}: unreadable plan.json: {error}") from None
    if args.game is not None and not _same_game(args.game, game):
        changed = " (that game file has changed since)" if args.game == game_arg else ""
        raise UsageError(f"{where} was played with game {game_arg}, not {args.game}{changed}")
    game_file = document.get("game_file")
    if game_file is not None and not _same_game(game_file, game):
        raise UsageError(f"{where}: the game file {game_file} has changed or gone since the run started")
    if args.bots and list(args.bots) != specs:
        raise UsageError(f"{where} was played with bots {_show(specs)}, not {_show(list(args.bots))}")
    for key, option, attr, _ in _OPTIONS:
        given = getattr(args, attr)
        if given is not None and given != options[key]:
            raise UsageError(f"{where} was played with {option} {_show(options[key])}, not {_show(given)}")
    return _build_plan(game, game_arg, game_file, specs, options, run_dir, args.in_process)


def _same_game(name_or_path: str, game: Game) -> bool:
    try:
        return load_game(name_or_path) == game
    except GameDefError:
        return False


@contextmanager
def _run_lock(run_dir: Path) -> Iterator[None]:
    """One ``arena match`` per run directory at a time."""
    try:
        lock = MatchLock(run_dir / _RUN_LOCK)
    except MatchInUseError as error:
        raise UsageError(f"{run_dir} is in use by another arena match (process {error.holder or '?'})") from None
    try:
        yield
    finally:
        lock.release()


def _prepare_new_run(plan: MatchPlan, force: bool) -> None:
    """Refuse a directory that holds a run unless ``force``, which removes its files."""
    files = sorted(
        (path for path in plan.run_dir.iterdir() if _RUN_FILE.fullmatch(path.name)),
        key=lambda path: (not path.name.endswith(".json"), path.name),  # results.json, plan.json first
    )
    if files and not force:
        finished = _finished(plan.run_dir)
        kind = "a finished run" if finished else "a run"
        hint = "" if finished else f", --resume {plan.run_dir} to finish it"
        raise UsageError(
            f"--run-dir {plan.run_dir} holds {kind} ({files[0].name}, ...): "
            f"use --force to replace it{hint}, or another directory"
        )
    for path in files:
        path.unlink()


def _finished(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds the results of a whole run."""
    try:
        return json.loads((run_dir / "results.json").read_text()).get("partial") is False
    except (OSError, ValueError, AttributeError):
        return False


def main(argv: list[str]) -> int:
    with sigterm_as_interrupt():
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print("arena match: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


def _main(argv: list[str]) -> int:
    args = parse(_parser(), argv, intermixed=True)
    if isinstance(args, int):
        return args
    try:
        if args.resume is not None:
            plan = plan_from_resume(args)
        else:
            plan = plan_from_args(args)
    except (GameDefError, StrategyError, UsageError) as error:
        return fail(PROG, error, EXIT_USAGE)

    if args.resume is None:
        try:
            plan.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return fail(PROG, f"cannot create the run directory: {error}", EXIT_FAILED)

    try:
        with _run_lock(plan.run_dir):
            if args.resume is None:
                _prepare_new_run(plan, args.force)
                write_json(plan.run_dir / "plan.json", _plan_document(plan))
            return _play(plan)
    except UsageError as error:
        return fail(PROG, error, EXIT_USAGE)

    except MatchError as error:  # a run directory whose logs cannot be read
        return fail(PROG, error, EXIT_FAILED)

    except OSError as error:
        return fail(PROG, f"{plan.run_dir}: {error}", EXIT_FAILED)



def _print_score(plan: MatchPlan, score: MatchScore, results: Sequence[SeatingResult]) -> None:
    """The results table and, where one applies, the best lower-variance estimates below it."""
    print(format_table(plan, score, results))
    best = format_best(plan, score)
    if best:
        print(best)


def _play(plan: MatchPlan) -> int:
    total = plan.hands * len(plan.seatings)
    done = [read_seating(plan, index) for index in range(len(plan.seatings))]
    if all(r.complete for r in done):  # a --resume of a finished run: show it, change nothing
        print(f"arena match: {plan.run_dir} is complete; nothing left to play", file=sys.stderr)
        _print_score(plan, score_seatings(plan, done), done)
        return EXIT_OK
    with tqdm(total=total, unit="hand", file=sys.stderr, disable=None, dynamic_ncols=True) as progress:
        try:
            outcome = trio.run(run_plan_with_signals, plan, progress)
        except MatchError as error:
            progress.close()
            return fail(PROG, error, EXIT_FAILED)

    results = outcome.results
    score = score_seatings(plan, results)
    write_results(plan, outcome, score)
    if outcome.interrupted:
        print(
            f"arena match: interrupted after {outcome.hands_played} of {total} hands;"
            f" finish with: arena match --resume {plan.run_dir}",
            file=sys.stderr,
        )
        print(format_table(plan, score, results))
        return EXIT_INTERRUPTED
    _print_score(plan, score, results)
    warnings = sum(r.warnings for r in results)
    if warnings:
        print(f"dealer warnings: {warnings} (see the .err files in {plan.run_dir})")
    return EXIT_OK

