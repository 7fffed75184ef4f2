"""Agents' bytes made safe to print: the dealer echoes every line it reads
(``FROM n at ...``) and quotes rejected version lines, and a terminal must not
run what an agent sends (escape sequences that clear the screen, retitle the
window or move the cursor). Quotes in error lines are cut, so that one hostile
line cannot make an error line megabytes long.

Printable ASCII is kept, so a well-behaved agent's lines, and the reference's
transcripts, are unchanged; a backslash becomes ``\\\\`` and any other byte
``\\xNN``, so the escaped text reads back unambiguously.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escape_line", "quote", "QUOTED_LENGTH"]

#: The most bytes (or characters) of a line quoted in a WARNING or ERROR line.
QUOTED_LENGTH: Final = 200

_UNSAFE = re.compile(rb"[^\x20-\x5b\x5d-\x7e]")  # printable ASCII but the backslash


def _escape_byte(match: re.Match[bytes]) -> bytes:
    byte = match[0][0]
    return b"\\\\" if byte == 0x5C else b"\\x%02x" % byte


def escape_line(line: bytes) -> str:
    """``line`` as printable ASCII; its own ending (``\\r\\n`` or ``\\n``, if it
    has one) is kept as it came, so echoes keep the reference's line breaks."""
    body = line
    ending = ""
    if body.endswith(b"\n"):
        ending = "\r\n" if body.endswith(b"\r\n") else "\n"
        body = body[: -len(ending)]
    if _UNSAFE.search(body) is not None:
        body = _UNSAFE.sub(_escape_byte, body)
    return body.decode("ascii") + ending


def quote(data: bytes | str, limit: int = QUOTED_LENGTH) -> str:
    """``repr(data)`` (escaped, quoted), cut after ``limit`` bytes or
    characters with a note of how many more there were."""
    if len(data) <= limit:
        return repr(data)
    unit = "bytes" if isinstance(data, bytes) else "characters"
    return f"{data[:limit]!r}... ({len(data) - limit} more {unit})"
