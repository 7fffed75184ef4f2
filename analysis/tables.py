"""Plain-text tables and counts as the reports print them (``arena analyze``,
``arena rank``, ``arena match``, ``arena tournament``): one place, so every
table aligns the same way and no report says "1 hands"."""

from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["table_lines", "plural"]


def table_lines(rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> list[str]:
    """``rows`` as aligned text lines: every column as wide as its widest cell, the columns in ``left``
    left-aligned and the others right-aligned, two spaces between columns."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        "  ".join(text.ljust(w) if c in left else text.rjust(w) for c, (text, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 hand``, ``2 hands`` (``nouns``: an irregular plural, ``1 match``/``2 matches``)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
