"""What every ``arena`` command front end shares: the exit statuses, a usage
parser whose errors are one line, the number parsers of options, and the error
line. One convention for all commands, so a script can tell a typo from a
failure without knowing which command it ran (docs/exit-statuses.md)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Final, NoReturn

__all__ = [
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
    "UsageError",
    "UsageParser",
    "plain",
    "parse",
    "fail",
    "whole",
    "number",
    "existing_path",
    "output_problem",
    "PORT",
    "SEED",
]

#: Done.
EXIT_OK: Final = 0
#: Something failed while running: a dealer abort, an unreadable log, an unwritable output.
EXIT_FAILED: Final = 1
#: Bad usage or bad input named on the command line: an option, an unknown game or bot, a missing file.
EXIT_USAGE: Final = 2
#: Ctrl-C or SIGTERM (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED: Final = 130


class UsageError(Exception):
    """The command line asks for what cannot be (options that do not go together,
    a count that does not fit the game): exit status :data:`EXIT_USAGE`."""


#: reST roles (``:mod:`x```, ``:func:`~a.b```), literals (````x````), strong (``**x**``) and emphasis (``*x*``).
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_STRONG = re.compile(r"\*\*([^*\s][^*]*?)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


def plain(text: str) -> str:
    """``text`` (a module docstring) with its reST markup removed: ``--help`` is
    read in a terminal, where ````arena solve```` and ``:mod:`...``` are noise."""
    text = _ROLE.sub(r"\1", text)
    text = _LITERAL.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return text.replace("::\n", ":\n")


def _wrapped(text: str, width: int = 80) -> str:
    """``text`` with each line longer than ``width`` wrapped (a docstring keeps its own breaks)."""
    return "\n".join(textwrap.fill(line, width) if len(line) > width else line for line in text.splitlines())


class UsageParser(argparse.ArgumentParser):
    """argparse with one-line errors, ``PROG: error: ... (see --help)``, status
    :data:`EXIT_USAGE`, and descriptions printed as written (their own line
    breaks) in plain text: a nine-line usage block before a missing option
    buries the one line that matters."""

    def __init__(self, prog: str, description: str, *, epilog: str | None = None) -> None:
        super().__init__(
            prog=prog,
            description=_wrapped(plain(description)),
            epilog=None if epilog is None else _wrapped(plain(epilog)),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def parse(parser: argparse.ArgumentParser, argv: list[str], *, intermixed: bool = False) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status when parsing ended the command
    (``--help``: 0; a usage error, already printed: :data:`EXIT_USAGE`), so that
    ``main(argv)`` returns a status in-process instead of raising SystemExit."""
    try:
        return parser.parse_intermixed_args(argv) if intermixed else parser.parse_args(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else EXIT_USAGE


def fail(prog: str, message: object, status: int) -> int:
    """Print ``PROG: error: MESSAGE`` on stderr; ``status``, for ``return fail(...)``."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return status


def whole(low: int, high: int | None = None, note: str = "") -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``low..high`` (no upper bound when
    ``high`` is None); ``note`` follows the range in the error (what 0 means, say)."""

    def parse_whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"at least {low}" if high is None else f"in {low}..{high}"
            raise argparse.ArgumentTypeError(f"must be {bound}{note}, got {value}")
        return value

    return parse_whole


def existing_path(text: str) -> Path:
    """An argparse ``type``: a path that exists (a missing input file is a usage
    error, status :data:`EXIT_USAGE`, like a misspelled option)."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or directory: {text!r}")
    return path


def number(low: float, high: float, what: str = "a number") -> Callable[[str], float]:
    """An argparse ``type``: a finite number in ``low..high`` (``what``: its kind, in the error)."""

    def parse_number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low:g}..{high:g}, got {text}")
        return value

    return parse_number


#: A TCP port (0: any free one).
PORT: Final = whole(0, 65535, " (0: any free port)")
#: A card seed, as the dealer takes it.
SEED: Final = whole(0, 2**32 - 1)


def output_problem(path: Path, what: str = "strategy file") -> str | None:
    """Why ``what`` cannot be written at ``path`` (None: it can), checked before
    any work so that a long solve never ends in an unwritable path."""
    if path.is_dir():
        return f"is a directory; name the {what} to write"
    parent = path.parent
    if not parent.is_dir():
        return f"directory {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"directory {parent} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return "is not writable"
    return None
