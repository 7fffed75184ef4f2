"""The house rule "type everything": mypy --strict over the packages (config in pyproject)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["poker", "dealer", "agent", "strategies", "analysis", "arena"]


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
