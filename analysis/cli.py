"""``arena analyze LOGS... [--format table|json]``: per player results of ACPC logs.

LOGS are ``.log`` files (ours or the reference dealer's), ``*.hands.msgpack``
hand records, or folders (their ``*.log`` files, else their records). For each
seat name it prints the hands played, the mean per hand in the game's unit
(:func:`analysis.stats.unit_of`: mbb/g for games with blinds, chips/hand
otherwise), the standard deviation per hand and the 95% interval of the mean.
When logs are the seatings of duplicate matches (:mod:`analysis.duplicate`),
the duplicate estimate follows: per hand, each player's result averaged over
the seatings, then mean and interval over hands. ``--format json`` prints the
same as one JSON document.

Exit statuses: 0 done; 1 a log that cannot be read, logs of different games,
or logs that look like one duplicate match but do not pair (one line on stderr
naming file, line or hand); 2 usage.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from analysis.breakdown import summarize
from analysis.duplicate import DuplicateError, combined_estimates, find_duplicates
from analysis.hands import Hands, HandsError, concat, read_hands
from analysis.stats import Estimate, Unit, unit_of
from poker.gamedef import Game, GameDefError, load_game, shipped_name

__all__ = ["main", "analyze", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
PROG = "arena analyze"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Per player results of ACPC match logs: raw means with 95%% intervals, and the "
        "duplicate estimate when the logs are the seatings of duplicate matches.",
        epilog="exit status: 0 done, 1 unreadable or mismatched logs, 2 usage",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help=".log files, *.hands.msgpack records, or folders of them")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    parser.add_argument("--game", help="game name or file, when a log's header does not name a game this machine has")
    parser.add_argument("--skip-damaged", action="store_true", help="leave damaged lines out (counted) instead of failing")
    parser.add_argument("--validate", action="store_true", help="replay every hand with the rules (slow)")
    return parser


def _paths(arguments: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            found = sorted(path.glob("*.log")) or sorted(path.glob("*.hands.msgpack"))
            if not found:
                raise HandsError(f"{path}: no .log or .hands.msgpack files in this folder")
            paths += found
        else:
            paths.append(path)
    return paths


def _json_estimate(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    scaled = estimate.scaled(unit.per_chip)
    return {"hands": estimate.n, "mean": scaled.mean, "ci95": None if math.isnan(scaled.half_width) else scaled.half_width}


def analyze(tables: Sequence[Hands]) -> dict[str, Any]:
    """The report as a JSON-ready document (means in the game's unit).

    Raises:
        HandsError: logs of different games.
        DuplicateError: logs that look like one duplicate match but do not pair.
    """
    every = concat(tables)
    game = every.game
    unit = unit_of(game)
    sets, _ = find_duplicates(tables)
    players = []
    for row in summarize(every):
        entry = {"name": row.name, "total_chips": row.total, **_json_estimate(row.estimate, unit)}
        entry["std"] = None if math.isnan(row.std) else row.std * unit.per_chip
        players.append(entry)
    document: dict[str, Any] = {
        "game": shipped_name(game) or "game",
        "unit": unit.name,
        "logs": [t.source for t in tables],
        "hands": len(every),
        "skipped_lines": {t.source: list(t.skipped) for t in tables if t.skipped},
        "players": players,
        "duplicate": None,
    }
    if sets:
        estimates = combined_estimates(sets)
        document["duplicate"] = {
            "sets": [[t.source for t in d.tables] for d in sets],
            "hands": sum(d.hand_id.size for d in sets),
            "players": [{"name": name, **_json_estimate(e, unit)} for name, e in estimates.items()],
        }
    return document


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(rows: list[list[str]], left: int = 1) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        "  ".join(text.ljust(w) if c < left else text.rjust(w) for c, (text, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]


def format_report(document: dict[str, Any]) -> str:
    """The table form of :func:`analyze`'s document."""
    unit = document["unit"]
    logs = document["logs"]
    lines = [f"{document['game']}: {document['hands']} hands in {len(logs)} log{'s' * (len(logs) != 1)}, {unit}"]
    rows = [["player", "hands", unit, "std-dev", "95% CI"]]
    for p in document["players"]:
        ci = "-" if p["ci95"] is None else f"±{p['ci95']:.3f}"
        rows.append([p["name"], str(p["hands"]), _number(p["mean"]), _number(p["std"]), ci])
    lines += _table(rows)
    for source, skipped in document["skipped_lines"].items():
        lines.append(f"skipped {len(skipped)} damaged line{'s' * (len(skipped) != 1)} of {source}: {', '.join(map(str, skipped[:10]))}{' …' if len(skipped) > 10 else ''}")
    duplicate = document["duplicate"]
    if duplicate is not None:
        sets = duplicate["sets"]
        lines.append(
            f"duplicate: {len(sets)} set{'s' * (len(sets) != 1)} of {len(sets[0])} seatings, "
            f"{duplicate['hands']} hands (each averaged over its seatings)"
        )
        rows = [["player", "hands", unit, "95% CI"]]
        for p in duplicate["players"]:
            ci = "-" if p["ci95"] is None else f"±{p['ci95']:.3f}"
            rows.append([p["name"], str(p["hands"]), _number(p["mean"]), ci])
        lines += _table(rows)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    game: Game | None = None
    try:
        if args.game is not None:
            game = load_game(args.game)
    except GameDefError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        tables = [
            read_hands(path, game, skip_damaged=args.skip_damaged, validate=args.validate) for path in _paths(args.logs)
        ]
        document = analyze(tables)
    except (HandsError, DuplicateError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.format == "json":
        print(json.dumps(document, indent=2))
    else:
        print(format_report(document))
    return EXIT_OK
