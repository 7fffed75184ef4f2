"""The reference dealer's files: the ``.log`` (header, STATE lines, SCORE) and the
``.tlog`` transaction log, written byte for byte as ``dealer.c`` writes them and
read back (docs/protocol.md, The dealer's rules: Output).

``.log``::

    # name/game/hands/seed <matchName> <gameDefFile> <#Hands> <seed>
    #--t_response <ms>
    #--t_hand <ms>
    #--t_per_hand <ms>
    STATE:<hand>:<betting>:<all cards>:<values by position>:<names by position>
    SCORE:<totals by seat>:<names by seat>

``.tlog``, one line per action: ``<action> <handId> <sendSec>.<usec> <recvSec>.<usec>``.
With ``-a -T`` the dealer replays the existing ``.tlog`` (see
:func:`parse_transaction`) before it plays on.

Text is written with ``surrogateescape`` so names given as arbitrary bytes on
the command line reach the files unchanged.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from poker.excerpt import quote
from poker.gamedef import Game
from poker.protocol import ProtocolError, StateLine, format_value, parse_action, parse_state_line
from poker.state import Action

__all__ = [
    "LogError",
    "Transaction",
    "MatchLog",
    "TransactionLog",
    "format_header",
    "format_score",
    "format_transaction",
    "format_timestamp",
    "parse_transaction",
    "LogContents",
    "read_log",
]

ENCODING = "utf-8"
ERRORS = "surrogateescape"

# " %u %zu.%06zu %zu.%06zu" after the action; scanf skips blanks before numbers.
_STAMP = re.compile(
    r"\s*[+]?(\d+)\s*[+]?(\d+)\.\s*[+]?(\d{1,6})\s*[+]?(\d+)(?:\.\s*[+]?(\d{1,6}))?"
)


class LogError(ValueError):
    """A ``.log`` or ``.tlog`` that cannot be read; the message quotes the line."""


def format_timestamp(micros: int) -> str:
    """``<sec>.<usec>`` with six digits, as the reference prints ``struct timeval``."""
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def format_header(
    match_name: str, game_path: str, num_hands: int, seed: int, *, t_response_ms: int, t_hand_ms: int, t_per_hand_ms: int
) -> str:
    """The four-line header printed to stderr and the ``.log`` (with final newline)."""
    return (
        f"# name/game/hands/seed {match_name} {game_path} {num_hands} {seed}\n"
        f"#--t_response {t_response_ms}\n#--t_hand {t_hand_ms}\n#--t_per_hand {t_per_hand_ms}\n"
    )


def format_score(totals: Sequence[float], names: Sequence[str]) -> str:
    """``SCORE:<totals by seat>:<names by seat>`` (no newline)."""
    return f"SCORE:{'|'.join(format_value(v) for v in totals)}:{'|'.join(names)}"


def format_transaction(action: Action, hand_id: int, send_us: int, recv_us: int) -> str:
    """One ``.tlog`` line, with its newline."""
    return f"{action} {hand_id} {format_timestamp(send_us)} {format_timestamp(recv_us)}\n"


@dataclass(frozen=True)
class Transaction:
    """One replayed ``.tlog`` line. ``action`` is ``None`` for an unknown letter,
    which the replay then rejects as an invalid action, as the reference does."""

    action: Action | None
    hand_id: int
    send_us: int
    recv_us: int


def parse_transaction(line: str, game: Game) -> Transaction:
    """Read a ``.tlog`` line as ``processTransactionFile`` does. Raises
    :class:`LogError` with the reference's ERROR text (the line keeps its newline)."""
    try:
        action, pos = parse_action(line, game)
    except ProtocolError:
        raise LogError(f"ERROR: could not parse transaction action {line}") from None
    if action is None:
        pos = 1
    stamp = _STAMP.match(line, pos)
    if stamp is None:
        raise LogError(f"ERROR: could not parse transaction stamp {line}")
    hand_id, send_s, send_frac, recv_s, recv_frac = stamp.groups()
    return Transaction(
        action,
        int(hand_id) % 2**32,
        int(send_s) * 1_000_000 + int(send_frac),
        int(recv_s) * 1_000_000 + int(recv_frac or 0),
    )


def _open_text(path: Path, append: bool) -> IO[str]:
    return open(path, "a" if append else "w", encoding=ENCODING, errors=ERRORS, newline="")


class MatchLog:
    """The ``.log`` writer. Every line is written at once (no buffer), so an
    aborted match leaves every finished hand on disk; and a write that fails
    (a full disk) is taken back whole, so the log never ends in half a line
    that a reader would take for a damaged hand."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self._file = open(path, "ab" if append else "wb", buffering=0)

    def write(self, text: str) -> None:
        """Write ``text`` (one or more complete lines), all of it or none.

        Raises:
            OSError: it could not be written (the file is as it was).
        """
        start = self._file.tell()
        rest = memoryview(text.encode(ENCODING, ERRORS))
        try:
            while rest:
                rest = rest[self._file.write(rest) or 0 :]
        except OSError:
            with contextlib.suppress(OSError):
                self._file.truncate(start)
            raise

    def close(self) -> None:
        self._file.close()


class TransactionLog:
    """The ``.tlog`` writer; :attr:`previous` holds what was there before an append."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self.previous = ""
        if append and path.is_file():
            self.previous = path.read_bytes().decode(ENCODING, ERRORS)
        self._file = _open_text(path, append)

    def write(self, line: str) -> None:
        self._file.write(line)
        self._file.flush()

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True)
class LogContents:
    """A ``.log`` read back. An appended log has one header per run; ``score`` is
    the last SCORE line (``None`` if the match did not finish)."""

    headers: tuple[tuple[str, ...], ...]
    hands: tuple[StateLine, ...]
    score: tuple[tuple[float, ...], tuple[str, ...]] | None


def read_log(path: Path, game: Game) -> LogContents:
    """Read a ``.log`` written by this dealer or the reference one."""
    headers: list[tuple[str, ...]] = []
    header: list[str] = []
    hands: list[StateLine] = []
    score: tuple[tuple[float, ...], tuple[str, ...]] | None = None
    text = path.read_bytes().decode(ENCODING, ERRORS)
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("#"):
            header.append(line)
            continue
        if header:
            headers.append(tuple(header))
            header = []
        if line.startswith("STATE:"):
            try:
                hands.append(parse_state_line(line, game))
            except ProtocolError as error:
                raise LogError(f"{path}:{number}: {error}") from None
        elif line.startswith("SCORE:"):
            try:
                _, values, names = line.split(":", 2)
                score = (tuple(float(v) for v in values.split("|")), tuple(names.split("|")))
            except ValueError:
                raise LogError(f"{path}:{number}: unreadable SCORE line {quote(line)}") from None
        elif line:
            raise LogError(f"{path}:{number}: not a header, STATE or SCORE line: {quote(line)}")
    if header:
        headers.append(tuple(header))
    return LogContents(tuple(headers), tuple(hands), score)
