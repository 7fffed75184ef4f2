"""C ``scanf`` unsigned conversions, as the reference dealer reads numbers.

``%u``/``%hu``/``%lu`` skip leading white space, take an optional sign and the
longest run of decimal digits, and ignore what follows. The value goes through
``strtoul`` (64-bit ``unsigned long``: a minus sign negates modulo 2**64 and an
overflow saturates) and is then truncated to the destination's width.
"""

from __future__ import annotations

import re

__all__ = ["scan_unsigned"]

_UNSIGNED = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_ULONG = 2**64


def scan_unsigned(text: str, bits: int, start: int = 0) -> tuple[int, int] | None:
    """``(value, end)`` of an unsigned number at ``text[start:]``, or ``None``."""
    match = _UNSIGNED.match(text, start)
    if match is None:
        return None
    value = int(match.group(2))
    value = min(value, _ULONG - 1)
    if match.group(1) == "-":
        value = -value % _ULONG
    return value % 2**bits, match.end()
