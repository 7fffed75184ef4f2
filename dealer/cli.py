"""``arena dealer`` / ``python -m dealer``: the reference dealer's command line.

    dealer matchName gameDefFile #Hands rngSeed p1name p2name ... [options]

Options are parsed like GNU ``getopt_long`` (they may follow the positional
arguments, short flags may be clustered, long options may be abbreviated):
``-f``, ``-l``/``-L``, ``-p p1,p2,...``, ``-q``, ``-t``/``-T``, ``-a``,
``--t_response``, ``--t_hand``, ``--t_per_hand``, ``--start_timeout`` (docs/commands.md,
``arena dealer``). Our extensions: ``--host`` (listen address, default 127.0.0.1),
``--log-dir`` (where the files go, default the current directory),
``--no-records`` (no msgpack hand records or JSON events), ``--strict`` (abort
on the first invalid response), ``--match-limit`` (a wall-clock cap on the
match: seconds, or ``auto`` for :func:`dealer.budget.match_deadline_s`) and
``--help``. ``gameDefFile`` may also be a
short game name (``arena games`` lists them).

Messages and exit statuses are the reference's: usage on stdout and status 1
for too few arguments, ``ERROR: unknown option`` for an unknown option, one
ERROR line for a bad number or game file.
"""

from __future__ import annotations

import getopt
import io
import math
import re
import sys
from pathlib import Path
from typing import Any

import trio

from dealer._scan import scan_unsigned
from dealer.server import MatchConfig, serve_match
from poker.gamedef import MAX_PLAYERS, GameDefError, load_game

__all__ = ["main", "USAGE"]

USAGE = """\
usage: dealer matchName gameDefFile #Hands rngSeed p1name p2name ... [options]
  -f use fixed dealer button at table
  -l/L disable/enable log file - enabled by default
  -p player1_port,player2_port,... [default is random]
  -q only print errors, warnings, and final value to stderr
  -t/T disable/enable transaction file - disabled by default
  -a append to log/transaction files - disabled by default
  --t_response [milliseconds] maximum time per response
  --t_hand [milliseconds] maximum player time per hand
  --t_per_hand [milliseconds] maximum average player time for match
  --start_timeout [milliseconds] maximum time to wait for players to connect
    <0 [default] is no timeout
"""

EXTENSIONS = """\
extensions:
  --host ADDRESS listen address [default 127.0.0.1; the reference listens on all]
  --log-dir DIR write matchName.log/.tlog/... into DIR [default .]
  --no-records no msgpack hand records or JSON event log
  --strict abort on the first invalid response instead of repairing it
  --match-limit SECONDS|auto abort a match still running after SECONDS [default none];
    auto: the most the time limits allow (needs --start_timeout)
  gameDefFile may be a short game name (see `arena games`)
"""

_SHORT = "flLp:qtTa"
_LONG = ["t_response=", "t_hand=", "t_per_hand=", "start_timeout=", "host=", "log-dir=", "no-records", "strict", "match-limit=", "help"]
_FLAGS = {
    "-f": ("fixed_seats", True),
    "-a": ("append", True),
    "-q": ("quiet", True),
    "-l": ("write_log", False),
    "-L": ("write_log", True),
    "-t": ("write_tlog", False),
    "-T": ("write_tlog", True),
    "--no-records": ("records", False),
    "--strict": ("strict", True),
}
_SIGNED = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


_MAX_PORT = 65535


class _UsageError(Exception):
    """Bad command line; ``str()`` is the complete stderr text."""


def _getopt_message(error: getopt.GetoptError) -> str:
    """glibc's wording for what Python's ``getopt`` reports."""
    option = error.opt
    long_form = len(option) > 1
    if "requires argument" in error.msg:
        return f"option '--{option}' requires an argument" if long_form else f"option requires an argument -- '{option}'"
    if "must not have an argument" in error.msg:
        return f"option '--{option}' doesn't allow an argument"
    if "not a unique prefix" in error.msg:
        return f"option '--{option}' is ambiguous"
    return f"unrecognized option '--{option}'" if long_form else f"invalid option -- '{option}'"


def _milliseconds(text: str, what: str, *, signed: bool = False) -> int:
    if signed:
        match = _SIGNED.match(text)
        if match is None:
            raise _UsageError(f"ERROR: could not get {what} {text}\n")
        return int(match.group(1))
    scanned = scan_unsigned(text, 64)
    if scanned is None:
        raise _UsageError(f"ERROR: could not get {what} from {text}\n")
    return scanned[0]


def _seconds(text: str) -> float:
    """A ``--match-limit`` number: finite and not negative."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise _UsageError(f"ERROR: could not get match time limit from {text} (seconds, or auto)\n")
    return seconds


def _ports(text: str) -> tuple[int, ...]:
    """``scanPortString``: comma-separated port numbers, at most MAX_PLAYERS. The
    reference reads each with ``%hu``, so 99999 listens on 34463; we refuse a
    port outside 0..65535 instead."""
    ports: list[int] = []
    pos = 0
    while pos < len(text) and len(ports) < MAX_PLAYERS:
        if ports:
            if text[pos] != ",":
                raise _UsageError(f"ERROR: bad port string {text}\n")
            pos += 1
        scanned = scan_unsigned(text, 64, pos)
        if scanned is None:
            raise _UsageError(f"ERROR: bad port string {text}\n")
        if scanned[0] > _MAX_PORT:
            raise _UsageError(f"ERROR: bad port string {text}: port {text[pos:scanned[1]]} is outside 0..{_MAX_PORT}\n")
        ports.append(scanned[0])
        pos = scanned[1]
    return tuple(ports)


def parse_args(argv: list[str]) -> MatchConfig | None:
    """The match the command line asks for, ``None`` after ``--help``; raises
    :class:`_UsageError` with the reference's message otherwise."""
    try:
        options, positional = getopt.gnu_getopt(argv, _SHORT, _LONG)
    except getopt.GetoptError as error:
        raise _UsageError(f"dealer: {_getopt_message(error)}\nERROR: unknown option ?\n") from None
    settings: dict[str, Any] = {}
    match_limit = ""
    for option, value in options:
        if option == "--help":
            return None
        if option in _FLAGS:
            key, on = _FLAGS[option]
            settings[key] = on
        elif option == "--t_response":
            settings["t_response_ms"] = _milliseconds(value, "response timeout")
        elif option == "--t_hand":
            settings["t_hand_ms"] = _milliseconds(value, "player hand timeout")
        elif option == "--t_per_hand":
            settings["t_per_hand_ms"] = _milliseconds(value, "average player hand timeout")
        elif option == "--start_timeout":
            settings["start_timeout_ms"] = _milliseconds(value, "start timeout", signed=True)
        elif option == "-p":
            settings["ports"] = _ports(value)
        elif option == "--host":
            settings["host"] = value
        elif option == "--match-limit":
            match_limit = value
            if value != "auto":
                settings["match_limit_s"] = _seconds(value)
        else:
            settings["log_dir"] = Path(value)
    if len(positional) < 4:
        raise _UsageError("")
    match_name, game_path, hands_text, seed_text = positional[:4]
    try:
        game = load_game(game_path)
    except GameDefError as error:
        raise _UsageError(f"ERROR: could not read game {game_path}: {error}\n") from None
    if len(positional) < 4 + game.num_players:
        raise _UsageError("")
    hands = scan_unsigned(hands_text, 32)
    if hands is None or hands[0] == 0:
        raise _UsageError(f"ERROR: invalid number of hands {hands_text}\n")
    seed = scan_unsigned(seed_text, 32)
    if seed is None:
        raise _UsageError(f"ERROR: invalid random number seed {seed_text}\n")
    config = MatchConfig(
        match_name=match_name,
        game=game,
        game_path=game_path,
        num_hands=hands[0],
        seed=seed[0],
        names=tuple(positional[4 : 4 + game.num_players]),
        **settings,
    )
    if match_limit != "auto":
        return config
    if config.start_timeout_ms < 0:
        raise _UsageError("ERROR: --match-limit auto needs a --start_timeout (the wait for the seats has no end without one)\n")
    return config.with_match_deadline()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        # Names are arbitrary bytes (agents' lines come escaped): write them back unchanged.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="surrogateescape")
    try:
        config = parse_args(args)
    except _UsageError as error:
        if str(error):
            sys.stderr.write(str(error))
        else:
            sys.stdout.write(USAGE)
        sys.stdout.flush()
        return 1
    if config is None:
        sys.stdout.write(USAGE + EXTENSIONS)
        return 0
    try:
        result = trio.run(serve_match, config)
    except KeyboardInterrupt:
        return 130  # interrupted; the files hold every finished hand
    sys.stdout.flush()
    sys.stderr.flush()
    return result.exit_status


if __name__ == "__main__":
    sys.exit(main())
