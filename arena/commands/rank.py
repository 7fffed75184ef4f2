"""``arena rank RESULTS [--game GAME] [--format table|json] [--bootstrap N [--seed S]] [--report PATH.html]``.

Ranks the players of a tournament's results (:mod:`analysis.scoring`): total
bankroll, bankroll instant run-off, series instant run-off, and the crosstable
with 95% intervals over each pairing's matches. RESULTS is a CSV with the header
``match,player,value,hands`` (one row per player per match: chips won in that
match and its hand count; a match has 2 or 3 players), or a tournament database
(``arena tournament``'s ``OUTPUT/tournament.db``, or OUTPUT itself). ``--game``
gives the unit (:func:`poker.stats.unit_of`: mbb/g for games with blinds,
chips/hand otherwise); a tournament database names its game, a CSV does not, so
without it a CSV's values are raw chips per hand. ``--bootstrap N`` resamples
the matches N times (seeded) for P(row beats column) and how stable each
ranking is. ``--report`` also writes the self-contained HTML report
(:func:`analysis.report.write_rank_report`).

``arena tournament`` prints and writes the same (:mod:`analysis.ranking`), so a
tournament and ``arena rank`` of its database agree.

Exit statuses: 0 done; 1 results that cannot be read or ranked (one line on
stderr naming file and line), or a report that cannot be written; 2 usage (or a
game that does not load, or RESULTS that are not there).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.ranking import format_report, ranking_document
from analysis.report import write_rank_report
from analysis.scoring import ResultsError, ScoringError, load_results
from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, existing_path, fail, parse, whole
from poker.gamedef import Game, GameDefError, load_game, parse_game

__all__ = ["main"]

PROG = "arena rank"


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        PROG,
        "Rank a tournament's players: total bankroll, bankroll and series instant run-off "
        "(ACPC rules), and the crosstable with 95% intervals. RESULTS is a CSV with the header "
        "match,player,value,hands (one row per player per match; value: chips won in the match), "
        "or an arena tournament's database (OUTPUT/tournament.db, or OUTPUT).",
        epilog="exit status: 0 done, 1 results that cannot be read or ranked, 2 usage (see docs/exit-statuses.md)",
    )
    parser.add_argument("results", metavar="RESULTS", type=existing_path, help="CSV of per-match results, or a tournament database or output directory")
    parser.add_argument("--game", help="game name or file, for the unit (default: the database's game; a CSV's: raw chips per hand)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    parser.add_argument("--bootstrap", type=whole(0), default=0, metavar="N", help="bootstrap samples over matches (default 0: none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--report", type=Path, metavar="PATH.html", help="also write a self-contained HTML report")
    return parser


def main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    game: Game | None = None
    if args.game is not None:
        try:
            game = load_game(args.game)
        except GameDefError as error:
            return fail(PROG, error, EXIT_USAGE)
    try:
        results = load_results(args.results)
        if game is None and results.game is not None:
            try:
                game = parse_game(results.game, source=results.source)
            except GameDefError as error:
                raise ResultsError(f"{results.source}: its game does not load: {str(error).splitlines()[0]}") from None
        doc = ranking_document(results, game, args.game, args.bootstrap, args.seed)
    except (ResultsError, ScoringError) as error:
        return fail(PROG, error, EXIT_FAILED)
    print(json.dumps(doc, indent=2) if args.format == "json" else format_report(doc))
    if args.report is not None:
        try:
            write_rank_report(args.report, doc)
        except OSError as error:
            return fail(PROG, f"{args.report}: {error.strerror or error}", EXIT_FAILED)
        print(f"report: {args.report}", file=sys.stderr if args.format == "json" else sys.stdout)
    return EXIT_OK

