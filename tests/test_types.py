"""The house rule "type everything": mypy --strict over the packages (config in pyproject)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import needs

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["poker", "dealer", "agent", "strategies", "analysis", "arena"]


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    needs.importorskip("mypy", "mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_benchmark_scripts_are_typed() -> None:
    """The benchmarks are scripts no test runs whole: mypy is what notices one
    reading an attribute that is gone. ``benchmarks/dealer.py`` goes on its own
    (as a module it would be named like the ``dealer`` package)."""
    needs.importorskip("mypy", "mypy")
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "benchmarks").glob("*.py"))
    for group in ([s for s in scripts if s != "benchmarks/dealer.py"], ["benchmarks/dealer.py"]):
        result = subprocess.run([sys.executable, "-m", "mypy", *group], cwd=ROOT, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
