"""``arena agent GAME HOST PORT --strategy NAME[:options] [--seed S]``.

Mirrors the reference ``example_player <gamefile> <host> <port>``: GAME is a game
file or a short name (``arena games`` lists them); the strategy is chosen by name
(``random``, the default, plays like the example player).

A seat of the hosted arena has a secret key (docs/hosting.md, Who may connect):
``--key KEY``, or better the environment variable :data:`KEY_VARIABLE`, which
other users cannot read in ``ps`` as they can a command line.

Every way a match ends gives one exit status and one line on stderr
(``arena agent: ...``), never a traceback: at the normal end, the match's
summary (hands played, this seat's chips, its mean per hand in the game's
unit: :func:`summary_line`), else what went wrong:

=====  ==========================================================================
0      the dealer closed the connection: the match is over. (The protocol has no
       end-of-match message, so a dealer that exits without resetting the
       connection looks the same.)
1      the match cannot go on from our side: the dealer sent a line that is not
       a match state of this game, or the strategy chose an illegal action.
2      usage: bad arguments (a port outside 1..65535, a seed outside
       0..4294967295 included), an unreadable game, an unknown strategy or
       options.
3      the connection: the dealer could not be reached (refused, unknown host,
       unreachable), the seat turned it away saying why (a hosted match's port
       of a seating not open yet names the port to use:
       :class:`agent.client.SeatRefused`), or the connection was reset or
       failed during the match.
130    interrupted (Ctrl-C, SIGINT), at any moment: while the modules import,
       while connecting, during the match.
=====  ==========================================================================

An exception from a strategy's own code is a bug: it keeps Python's traceback
(and status 1).
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from typing import NoReturn

import trio

from agent.client import AgentError, ConnectionLost, PlaySummary, SeatRefused, play
from poker.gamedef import Game, GameDefError, load_game
from poker.protocol import key_line
from poker.stats import unit_of
from strategies.base import StrategyError, make_strategy, strategy_names

EXIT_OK = 0
EXIT_AGENT_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_INTERRUPTED = 130
_PORTS = range(1, 2**16)
_SEEDS = range(2**32)
#: The environment variable that gives the seat's key when ``--key`` does not.
KEY_VARIABLE = "ARENA_SEAT_KEY"
#: What a refused connection adds: a hosted match's port answers from the match's
#: request (saying which port to use while its seating is not open) until its
#: seating's agent is seated, so nothing there means no match waits on it.
REFUSED_HINT = ("nothing listens there now (a hosted match's port answers until its seating's agent is seated:"
                " GET /api/matches/ID names next_port)")


class _Parser(argparse.ArgumentParser):
    """argparse with the usage errors of every ``arena`` command: one line,
    ``arena agent: error: MESSAGE (see --help)``, status 2 (docs/exit-statuses.md),
    where argparse's usage block first buried the line that matters. (The
    commands' kit, ``arena.commands._kit``, is above this package.)"""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    names = "\n".join(f"  {name:<13} {help_}" for name, help_ in strategy_names().items())
    parser = _Parser(
        prog="arena agent",
        description="Connect to an ACPC dealer (protocol 2.0.0) and play one seat with a strategy.",
        epilog=(
            f"strategies (NAME[:option=value,...]):\n{names}\n\n"
            "exit status: 0 the dealer ended the match, 1 a bad dealer line or strategy action,\n"
            "2 usage, 3 connection refused/reset/lost, 130 interrupted"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("game", metavar="GAME", help="game file or short game name (kuhn, leduc, hulhe, hunl, ...)")
    parser.add_argument("host", metavar="HOST", help="dealer host")
    parser.add_argument("port", metavar="PORT", type=int, help="this seat's port")
    parser.add_argument("--strategy", default="random", metavar="NAME[:OPTIONS]", help="default: random")
    parser.add_argument("--seed", type=int, default=None, help="seed for randomised strategies (default: unseeded)")
    parser.add_argument(
        "--key", default=None, metavar="KEY",
        help=f"the seat's secret key, sent before the version line (default: ${KEY_VARIABLE}; none when unset)",
    )
    return parser


def _fail(status: int, message: str) -> int:
    print(f"arena agent: {message}", file=sys.stderr)
    return status


def summary_line(summary: PlaySummary, game: Game) -> str:
    """The line a match that ended normally leaves: hands seen to their end,
    this seat's chips over them and the mean per hand in the game's unit
    (chips/hand, or mbb/g where the game has blinds), so that a run of a
    thousand hands does not end in silence."""
    unit = unit_of(game)
    line = f"arena agent: the match is over: {summary.finished} hand{'' if summary.finished == 1 else 's'}, {summary.chips:+g} chips"
    if summary.finished:
        line += f", {summary.chips / summary.finished * unit.per_chip:+.3f} {unit.name}"
    return line


def _refused(error: OSError) -> bool:
    """Whether every attempt to connect was refused (trio's ``open_tcp_stream``
    raises one OSError caused by a group of its attempts' errors)."""
    cause = error.__cause__
    attempts = cause.exceptions if isinstance(cause, BaseExceptionGroup) else (error,)
    return all(isinstance(attempt, ConnectionRefusedError) for attempt in attempts)


def single_error(error: BaseException) -> BaseException:
    """The one exception inside (possibly nested) groups of one, as trio may wrap it."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def main(argv: list[str]) -> int:
    """Play one seat; the exit status is one of the table above.

    A person presses Ctrl-C whenever they like, so a KeyboardInterrupt anywhere
    in here (parsing the arguments, reading a game, building a strategy, inside
    trio.run or just after it) gives the same one line and 130. The import of
    this module comes before: ``arena`` (arena/cli.py) and ``python -m agent``
    (agent/__main__.py) catch it there.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return _fail(EXIT_INTERRUPTED, "interrupted")


def _main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.port not in _PORTS:
            parser.error(f"argument PORT: must be in 1..65535, got {args.port}")
        if args.seed is not None and args.seed not in _SEEDS:
            parser.error(f"argument --seed: must be in 0..4294967295, got {args.seed}")
        key = args.key if args.key is not None else os.environ.get(KEY_VARIABLE) or None
        if key is not None:
            try:
                key_line(key)
            except ValueError as error:
                parser.error(f"argument --key (or ${KEY_VARIABLE}): {error}")
    except SystemExit as done:  # --help (0), or a usage error, already printed: a status, not an exception
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    try:
        game = load_game(args.game)
        strategy = make_strategy(args.strategy, game, seed=args.seed)
    except (GameDefError, StrategyError) as error:
        return _fail(EXIT_USAGE, f"error: {error}")
    try:
        summary = trio.run(partial(play, args.host, args.port, game, strategy, key=key))
    except BaseException as raised:
        leaf = single_error(raised)
        if isinstance(leaf, KeyboardInterrupt):
            return _fail(EXIT_INTERRUPTED, "interrupted")
        if isinstance(leaf, ConnectionLost):
            return _fail(EXIT_CONNECTION, f"error: {leaf}")
        if isinstance(leaf, SeatRefused):
            return _fail(EXIT_CONNECTION, f"error: {args.host}:{args.port} turned the connection away: {leaf}")
        if isinstance(leaf, AgentError):
            return _fail(EXIT_AGENT_ERROR, f"error: {leaf}")
        if isinstance(leaf, OSError):
            hint = f"; {REFUSED_HINT}" if _refused(leaf) else ""
            return _fail(EXIT_CONNECTION, f"error: cannot connect to {args.host}:{args.port}: {leaf}{hint}")
        raise
    print(summary_line(summary, game), file=sys.stderr)
    return EXIT_OK
