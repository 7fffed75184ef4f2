"""Quoting what a file holds in an error line, at a bounded length.

Every reader of files (game definitions, ``.log`` lines, msgpack hand records,
results tables, strategy files) quotes the damaged text it found, so that the
user sees what is wrong. A damaged file can hold a line of megabytes (a log
whose newlines were lost, a declared string of garbage): quoted whole, one
error "line" fills the terminal and the error log. :func:`quote` cuts the quote
after :data:`QUOTED_LENGTH` characters (or bytes) and says how many it left
out, so the line stays readable and the reader still sees how big the damage
is. It lives in ``poker/``, the package every reader stands on; the form is the
one the dealer uses for agents' lines (``'xxx'... (800 more bytes)``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["QUOTED_LENGTH", "quote"]

#: The most characters (or bytes) of a text an error line quotes.
QUOTED_LENGTH: Final = 200


def quote(value: object, limit: int = QUOTED_LENGTH) -> str:
    """``repr(value)`` cut after ``limit`` characters, followed by how many were cut.

    Text and bytes are cut before their ``repr`` is taken (megabytes are not
    copied) and the count is of their own characters or bytes; any other value
    (a record, a list) is cut in its ``repr``.

    >>> quote("abc")
    "'abc'"
    >>> quote("abcdef", 3)
    "'abc'... (3 more characters)"
    >>> quote(b"abcdef", 3)
    "b'abc'... (3 more bytes)"
    >>> quote([1, 2, 3], 4)
    '[1, ... (5 more characters)'
    """
    if isinstance(value, str | bytes):
        if len(value) <= limit:
            return repr(value)
        unit = "bytes" if isinstance(value, bytes) else "characters"
        return f"{value[:limit]!r}... ({len(value) - limit} more {unit})"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"
