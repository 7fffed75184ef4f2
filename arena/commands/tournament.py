"""``arena tournament CONFIG.toml [--workers K] [--dask ADDRESS] [--resume] [--bootstrap N]``:
every pairing (triple) of the configured bots in duplicate series
(:mod:`arena.tournament`), then the rankings, ``results.csv`` and ``report.html``.

Exit statuses: 0 done (forfeits by external bots included); 1 some matches
failed (``--resume`` retries them) or the output cannot be written; 2 usage, a
bad or missing config, or an output directory that cannot be made, holds
another tournament, or holds files that are not a tournament's; 130 interrupted (Ctrl-C or SIGTERM: ``--resume`` plays the unfinished matches).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys

from analysis.tables import plural
from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageParser,
    existing_path,
    fail,
    parse,
    whole,
)
from arena.match import sigterm_as_interrupt
from arena.tournament.runner import DEFAULT_BOOTSTRAP, TournamentError, report, run_tournament, schedule
from arena.tournament.config import ConfigError, load_config

__all__ = ["main"]

PROG = "arena tournament"


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        PROG,
        "Every pairing (triple) of the configured bots (strategy specs or ACPC startme.sh commands) in duplicate "
        "series; results in SQLite and CSV, then both rankings, the crosstable and OUTPUT/report.html.",
        epilog="exit status: 0 done (forfeits by external bots included), 1 some matches failed (--resume retries them), "
        "2 usage or config, 130 interrupted",
    )
    parser.add_argument("config", metavar="CONFIG", type=existing_path, help="tournament configuration (TOML)")
    parser.add_argument("--workers", type=whole(1), metavar="K", help="local worker processes (default: the config's)")
    parser.add_argument("--dask", metavar="ADDRESS", help="run the matches on a Dask scheduler, e.g. tcp://HOST:8786")
    parser.add_argument("--resume", action="store_true", help="finish the tournament the output directory holds")
    parser.add_argument(
        "--bootstrap",
        type=whole(0),
        default=DEFAULT_BOOTSTRAP,
        metavar="N",
        help=f"bootstrap samples over matches for P(beats) and ranking stability (default {DEFAULT_BOOTSTRAP}; 0: none)",
    )
    return parser


def main(argv: list[str]) -> int:
    with sigterm_as_interrupt():  # kill, timeout, a batch scheduler: as Ctrl-C, the resume hint
        return _main(argv)


def _main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        config = load_config(args.config)
    except ConfigError as error:
        return fail(PROG, error, EXIT_USAGE)
    try:
        stored, failures = run_tournament(config, workers=args.workers, dask=args.dask, resume=args.resume)
    except TournamentError as error:
        return fail(PROG, error, EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; finish with: arena tournament {args.config} --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (OSError, sqlite3.Error) as error:
        return fail(PROG, f"{config.output}: {error}", EXIT_FAILED)
    total = len(schedule(config))
    print(
        f"{config.game_arg}: {len(stored)} of {plural(total, 'duplicate match', 'duplicate matches')},"
        f" {plural(config.hands, 'hand')} a seating, {config.series} series from seed {config.seed}, output {config.output}"
    )
    report(config, stored, args.bootstrap)
    for line in failures:
        print(f"{PROG}: error: {line}", file=sys.stderr)
    if failures:
        print(f"{PROG}: {plural(len(failures), 'match', 'matches')} failed; retry them with --resume", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK

