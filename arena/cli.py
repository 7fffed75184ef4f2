"""``arena <command> …``: dispatch to the module that owns each command.

Every command's front end lives in :mod:`arena.commands` (``dealer`` and
``agent``: the standalone ACPC programs of :mod:`dealer.cli` and
:mod:`agent.cli`) and exposes ``main(argv) -> int``, the exit status
(docs/exit-statuses.md); modules are imported only when their command runs, so
``arena dealer`` does not pay for compiling solvers.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

from arena.commands._kit import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from poker.names import did_you_mean

# command -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "games": ("arena.commands.games", "list the shipped games, or print one game definition"),
    "dealer": ("dealer.cli", "serve one ACPC match over TCP (reference dealer command line)"),
    "agent": ("agent.cli", "connect to an ACPC dealer and play a strategy"),
    "match": ("arena.commands.match", "run a whole local match: dealer, agents, results table"),
    "play": ("arena.commands.play", "play against bots yourself: a web table on 127.0.0.1, or --tui in the terminal"),
    "tournament": ("arena.commands.tournament", "every pairing (triple) of bots or ACPC startme.sh commands in duplicate series, locally or on Dask; SQLite results, resumable, rankings and HTML report"),
    "solve": ("arena.commands.solve", "solve a game (CFR / CFR+ / PCS / explicit abstract game) and write a strategy file"),
    "analyze": ("arena.commands.analyze", "per-player results of match logs: raw means with 95% intervals, duplicate estimate"),
    "export": ("arena.commands.export", "match logs, records or run folders as hand histories: PHH (PokerKit) or PokerStars text (trackers)"),
    "bots": ("arena.commands.bots", "the named bots: list them (game, how built, exploitability), or `bots build NAME`"),
    "rank": ("arena.commands.rank", "rank per-match results (CSV or tournament database): total bankroll, bankroll/series instant run-off, crosstable"),
    "show": ("arena.commands.show", "a strategy file as people read it: each information set's action probabilities"),
    "dbr": ("arena.commands.dbr", "RNR / data-biased response counter-strategy to a player seen in match logs (Kuhn, Leduc; hold'em through --abstraction)"),
    "lbr": ("arena.commands.lbr", "local best response: a sampled lower bound on a strategy's exploitability (heads-up)"),
    "exploitability": ("arena.commands.exploitability", "exact exploitability of a strategy file"),
    "train-values": ("arena.commands.train_values", "train the counterfactual-value net continual re-solving asks at the street's end (NL Leduc)"),
    "serve": ("arena.commands.serve", "the hosted arena: a JSON API that hosts matches against the hosted bots on ports any ACPC agent connects to"),
    "connect": ("arena.commands.connect", "a local relay to a hosted match's seats, for an agent that cannot send a seat key (example_player, a compiled bot)"),
    "users": ("arena.commands.users", "the hosted arena's users: add (prints the token once), list, revoke, rotate"),
    "warmup": ("arena.commands.warmup", "compile (and cache) the numba kernels ahead of the first run: what `make test` does at set-up"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: arena <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines.append("\n`arena <command> --help` describes a command's options; `arena --version` the version.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return EXIT_OK if args else EXIT_USAGE
    if args[0] in ("-V", "--version"):
        from importlib.metadata import version  # here, not at the top: slow, and a Ctrl-C while it loads is a traceback

        print(f"arena {version('acpc-arena')}")
        return EXIT_OK
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        hint = did_you_mean(command, COMMANDS).strip()
        print(f"arena: unknown command {command!r}{'; ' + hint if hint else ''}\n\n{_usage()}", file=sys.stderr)
        return EXIT_USAGE
    try:
        module = importlib.import_module(COMMANDS[command][0])
        result: int = module.main(rest)
    except KeyboardInterrupt:  # Ctrl-C before the command's own handling is in place (while it imports)
        print(f"arena {command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`arena show FILE | head`): stop quietly, as a C tool killed
        # by SIGPIPE would, and keep the interpreter's final flush from printing a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    return result


if __name__ == "__main__":
    sys.exit(main())
