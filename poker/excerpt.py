"""Quoting what a file holds in an error line, at a bounded length.

Every reader of files (game definitions, ``.log`` lines, msgpack hand records,
results tables) quotes the damaged text it found, so that the user sees what is
wrong. A damaged file can hold a line of megabytes (a log whose newlines were
lost, a declared string of garbage): quoted whole, one error "line" fills the
terminal and the error log. :func:`quote` cuts the quote after
:data:`QUOTE_CHARS` characters and says how many it left out, so the line stays
readable and the reader still knows how big the damage is. It lives in
``poker/``, the package every reader stands on.
"""

from __future__ import annotations

from typing import Final

__all__ = ["QUOTE_CHARS", "quote"]

#: Characters of a quoted text (of its ``repr``) that an error line shows.
QUOTE_CHARS: Final = 200


def quote(value: object, *, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` cut after ``limit`` characters, followed by how many were cut.

    A string is cut before its ``repr`` is taken (a string of megabytes is not
    copied) and the count is of its own characters; any other value (a record, a
    list) is cut in its ``repr``.

    >>> quote("abc")
    "'abc'"
    >>> quote("abcdef", limit=3)
    "'abc'… (3 more characters)"
    >>> quote([1, 2, 3], limit=4)
    '[1, … (5 more characters)'
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value) - limit} more characters)"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"
