"""Agents' bytes made safe to print: the dealer echoes every line it reads
(``FROM n at ...``) and quotes rejected version lines, and a terminal must not
run what an agent sends (escape sequences that clear the screen, retitle the
window or move the cursor). Quotes in error lines are cut by
:func:`poker.excerpt.quote`, which every reader shares.

Printable ASCII is kept, so a well-behaved agent's lines, and the reference's
transcripts, are unchanged; a backslash becomes ``\\\\`` and any other byte
``\\xNN``, so the escaped text reads back unambiguously.
"""

from __future__ import annotations

import re

__all__ = ["escape_line"]

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

