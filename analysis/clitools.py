"""Pieces the ``arena`` commands share: one-line usage errors and plain-text tables."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence
from typing import NoReturn

__all__ = ["UsageParser", "table_lines", "EXIT_USAGE"]

#: Every command's exit status for bad usage.
EXIT_USAGE = 2


class UsageParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: ... (see --help)`` and status :data:`EXIT_USAGE`."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def table_lines(rows: Sequence[Sequence[str]], left: Collection[int] = (0,)) -> list[str]:
    """``rows`` as aligned text lines: every column as wide as its widest cell, the columns in ``left``
    left-aligned and the others right-aligned, two spaces between columns."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        "  ".join(text.ljust(w) if c in left else text.rjust(w) for c, (text, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]
