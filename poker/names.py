"""The hint after an unknown name (a game, a strategy, a bot, a command): the
closest known name first, so a typo is fixed from the first words of the
error line instead of from a list of every name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"did you mean leduc? "`` for the known name closest to ``name``, or
    ``""`` when none is close (difflib's ratio of at least 0.6).

    >>> did_you_mean("leduk", ["kuhn", "leduc", "hulhe"])
    'did you mean leduc? '
    >>> did_you_mean("xyzzy", ["kuhn", "leduc"])
    ''
    """
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean {close[0]}? " if close else ""
