"""``benchmarks/hunl_flop_spot.py`` refuses what it cannot measure in one line, before any bot is built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "hunl_flop_spot.py"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--flops", "1"], "--flops must be at least 2 (an interval) and --holdings 1 to 1000, got 1 and 15"),
        (["--holdings", "0"], "--flops must be at least 2 (an interval) and --holdings 1 to 1000, got 20 and 0"),
        (["--bot", "nope"], "unknown strategy 'nope'"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]
