"""What a test needs from outside the project (a browser, Docker, an oracle library):
locally a test that cannot have it skips, saying why; in CI (``ARENA_CI=1``, which
``.ci/run`` sets) it fails, naming what is missing, so that a CI run where Chromium,
Docker, OpenSpiel or PokerKit cannot be had is never green with those tests skipped.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import NoReturn

import pytest

#: The variable ``.ci/run`` sets: this run is CI, where nothing may skip for a missing tool.
ENV = "ARENA_CI"


def in_ci() -> bool:
    """Whether this run is CI (``$ARENA_CI`` is ``1``)."""
    return os.environ.get(ENV) == "1"


def missing(tool: str, reason: str) -> NoReturn:
    """``tool`` cannot be had here: fail in CI, naming it, else skip with ``reason``
    (also at a module's top level, which then skips or fails as a whole)."""
    if in_ci():
        pytest.fail(f"{ENV}=1 and {tool} is missing: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def importorskip(module: str, tool: str, reason: str | None = None) -> ModuleType:
    """``module`` imported, else :func:`missing` for ``tool`` (``reason``: why, default the import error)."""
    try:
        imported: ModuleType = pytest.importorskip(module, reason=reason)
    except pytest.skip.Exception as skipped:
        missing(tool, reason or str(skipped.msg))
    return imported


def unless(available: bool, tool: str, reason: str) -> pytest.MarkDecorator:
    """A module's ``pytestmark``: skip with ``reason`` where ``tool`` is not
    ``available``, except in CI, where importing the module fails, naming it."""
    if not available and in_ci():
        missing(tool, reason)
    return pytest.mark.skipif(not available, reason=reason)
