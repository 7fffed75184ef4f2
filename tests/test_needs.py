"""A missing tool skips a test locally and fails it in CI (``tests/needs.py``)."""

from __future__ import annotations

import pytest

import needs

ABSENT = "acpc_arena_no_such_module"


def test_locally_a_missing_tool_skips_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(needs.ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^no chromium on PATH$"):
        needs.missing("Chromium", "no chromium on PATH")
    with pytest.raises(pytest.skip.Exception, match=f"could not import '{ABSENT}'"):
        needs.importorskip(ABSENT, "OpenSpiel")
    mark = needs.unless(False, "Chromium", "no chromium")
    assert mark.name == "skipif" and mark.args == (True,) and mark.kwargs["reason"] == "no chromium"
    assert needs.unless(True, "Chromium", "no chromium").args == (False,)


def test_in_ci_a_missing_tool_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(needs.ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"^ARENA_CI=1 and Docker is missing: no docker CLI$"):
        needs.missing("Docker", "no docker CLI")
    with pytest.raises(pytest.fail.Exception, match=f"^ARENA_CI=1 and PokerKit is missing: could not import '{ABSENT}'"):
        needs.importorskip(ABSENT, "PokerKit")
    with pytest.raises(pytest.fail.Exception, match=r"^ARENA_CI=1 and Chromium is missing: no chromium$"):
        needs.unless(False, "Chromium", "no chromium")
    assert needs.importorskip("json", "json").__name__ == "json"  # present: imported, in CI too
