"""``arena bots``: the library of named bots (:mod:`strategies.bots`).

``arena bots`` lists every bot with its game, whether its strategy file is
there, its measured quality (exploitability in the game's unit: chips/hand or
mbb/g) and how it is built, with the recorded ``arena solve`` command under
each. ``--format json`` prints a list of objects (``name``, ``game``, ``file``,
``built``, ``command``, ``quality``, plus ``unit``, ``quality_kind``,
``shipped``, ``build``, ``description``, ``note``, ``gains``:
each position's best-response gain for three-player bots, whose quality is
Abou Risk & Szafron's (2010) seven-step epsilon).

``arena bots build NAME`` builds a large bot on this machine: it runs the
recorded ``arena solve`` command's solve (:func:`arena.commands.solve.run_solve`:
the same progress bar and exploitability lines) into
``$ACPC_ARENA_CACHE/bots/NAME.partial.strategy`` and renames it to
``NAME.strategy`` when done; a hold'em bot's compact playing file
(``NAME.compact``, what the bot plays) is then written from it (for
``hulhe-ir50``, which ships one, the build says whether it plays exactly as
the package's). Ctrl-C (or SIGTERM) writes a checkpoint and exits
with status 130; running the same command again resumes from it. Seat a bot by
its name: ``arena match leduc leduc-cfr random``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from arena.commands._kit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageParser, fail, parse
from strategies.bots import (
    LIBRARY,
    Bot,
    BotError,
    bot_path,
    built_compact_path,
    describe,
    find_bot,
    finished_partial,
    partial_path,
    solve_path,
)

if TYPE_CHECKING:  # the solvers' modules (numba) are imported only when a bot is built
    from strategies.cfr.runs import SolveSettings

__all__ = ["build", "main"]

PROG = "arena bots"


def _quality(row: dict[str, Any]) -> str:
    if row["quality"] is None:
        return "-"
    text = f"{row['quality']:.6g} {row['unit']}"
    return text if row["quality_kind"] == "exact" else f"{text} ({row['quality_kind']})"


def _built(row: dict[str, Any]) -> str:
    if row["shipped"]:
        return "shipped"
    return "yes" if row["built"] else "no"


def _table(rows: list[dict[str, Any]]) -> str:
    cells = [(r["name"], r["game"], _built(r), _quality(r), r["description"]) for r in rows]
    header = ("name", "game", "built", "quality", "how built")
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[4]]
    indent = " " * (widths[0] + 2)
    for row, cell in zip(rows, cells, strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cell, widths)) + "  " + cell[4])
        build = "" if row["shipped"] or row["built"] else f"  (build: {row['build']})"
        lines.append(f"{indent}{row['command']}{build}")
        if row["note"]:
            lines.append(f"{indent}{row['note']}")
        if row["gains"] is not None:
            gains = ", ".join(f"{g:.6g}" for g in row["gains"])
            lines.append(f"{indent}best-response gains by position: {gains} {row['unit']}")
    lines.append("")
    lines.append("Seat a bot by name (arena match leduc leduc-cfr random); build one with `arena bots build NAME`.")
    return "\n".join(lines)


def _identity(settings: SolveSettings) -> SolveSettings:
    """The settings that name the solve (the game, algorithm, card abstraction and
    bet sizes): a resume with them refuses a partial file of another solve, and
    takes the rest (``--every`` too) from the file."""
    from strategies.cfr.runs import SolveSettings

    return SolveSettings(
        game=settings.game, algorithm=settings.algorithm, abstraction=settings.abstraction, bet_sizes=settings.bet_sizes
    )


def build(bot: Bot, *, quiet: bool = False, force: bool = False) -> int:
    """Build ``bot`` into the cache (resuming an interrupted build; a compact
    bot's playing file written from the solve); the exit status."""
    from arena.commands.solve import run_solve
    from strategies.cfr.runs import SolveSettings

    if bot.ships_solve:
        print(f"{bot.name} ships with the package: {bot_path(bot)}")
        return EXIT_OK
    final, partial = solve_path(bot), partial_path(bot)
    if final.is_file() and not force:
        if bot.compact and not built_compact_path(bot).is_file():
            return _compact(bot)
        print(f"{bot.name} is built: {built_compact_path(bot) if bot.compact else final} (--force builds it again)")
        return EXIT_OK
    partial.parent.mkdir(parents=True, exist_ok=True)
    if finished_partial(bot):
        return _install(bot)
    resuming = partial.is_file()
    settings = SolveSettings.from_options(bot.game, bot.options)
    if resuming:
        print(f"resuming the interrupted build of {bot.name} from {partial}")
        settings = _identity(settings)
    code = run_solve(
        settings, iterations=bot.iterations, output=partial, resume=partial if resuming else None, quiet=quiet
    )
    if code == EXIT_USAGE:  # the solve's command line is ours, not the user's: what failed is the build
        code = EXIT_FAILED
    if code != EXIT_OK and code != EXIT_INTERRUPTED and resuming:
        print(f"{PROG}: remove {partial} to build {bot.name} from the start", file=sys.stderr)
    if code == EXIT_INTERRUPTED:
        print(f"{PROG}: build of {bot.name} interrupted; `arena bots build {bot.name}` resumes it", file=sys.stderr)
        return code
    if code != EXIT_OK:
        return code
    return _install(bot)


def _install(bot: Bot) -> int:
    """Rename the finished partial file to the bot's solve (and write a compact
    bot's playing file from it); the exit status."""
    os.replace(partial_path(bot), solve_path(bot))
    print(f"built {bot.name}: {solve_path(bot)}")
    return _compact(bot) if bot.compact else EXIT_OK


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _compact(bot: Bot) -> int:
    """Write the compact playing file of ``bot``'s built solve (for a shipped
    one, say whether it plays exactly as the package's); the exit status."""
    from strategies.cfr.abstraction.card_tables import AbstractionError
    from strategies.cfr.compact import load_compact, plays_alike, write_compact
    from strategies.cfr.strategy_file import StrategyFileError

    target = built_compact_path(bot)
    try:
        report = write_compact(solve_path(bot), target, levels=bot.levels)
        print(
            f"wrote {bot.name}'s playing file: {target} ({_megabytes(report.compact_bytes)}; the solve's"
            f" {_megabytes(report.source_bytes)}), {bot.levels} levels, largest probability difference"
            f" {report.max_difference:.4g}"
        )
        if bot.shipped:
            same = plays_alike(load_compact(target), load_compact(bot_path(bot)))
            print(f"it plays {'exactly as' if same else 'otherwise than'} the package's {bot_path(bot)}")
    except (StrategyFileError, AbstractionError, OSError) as error:
        return fail(PROG, error, EXIT_FAILED)
    return EXIT_OK


def _build_main(argv: list[str]) -> int:
    parser = UsageParser(f"{PROG} build", "build a named bot into the cache")
    parser.add_argument("name", help=f"a bot of `arena bots` ({', '.join(LIBRARY)})")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--force", action="store_true", help="build again even if the file is there")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    try:
        bot = find_bot(args.name)
    except BotError as error:
        return fail(PROG, error, EXIT_USAGE)
    return build(bot, quiet=args.quiet, force=args.force)


def main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        return _build_main(argv[1:])
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("--format", choices=["table", "json"], default="table", help="output format (default table)")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    rows = [describe(bot) for bot in LIBRARY.values()]
    print(json.dumps(rows, indent=2) if args.format == "json" else _table(rows))
    return EXIT_OK
