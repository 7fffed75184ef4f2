"""The re-solvers keep one BLAS thread a process (strategies/resolve/blas.py),
unless the user set a count: each case in a fresh interpreter, whose BLAS
state nothing else has touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strategies.resolve.blas import USER_SETTINGS

PROBE = """
import json
import threadpoolctl
from poker.gamedef import load_game
from strategies import make_strategy
make_strategy({spec!r}, load_game({game!r}))
print(json.dumps([info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]))
"""


def blas_threads_after_agent(spec: str, game: str, **settings: str) -> list[int]:
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS} | settings
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(spec=spec, game=game)], env=env, capture_output=True, text=True, timeout=300, check=True
    )
    threads: list[int] = json.loads(done.stdout.strip().splitlines()[-1])
    return threads


@pytest.mark.parametrize(("spec", "game"), [("resolve", "leduc"), ("modicum", "hunl")])
def test_a_re_solving_agent_leaves_one_blas_thread(spec: str, game: str) -> None:
    threads = blas_threads_after_agent(spec, game)
    assert threads and all(n == 1 for n in threads)


def test_a_users_blas_setting_is_left_alone() -> None:
    threads = blas_threads_after_agent("resolve", "leduc", OPENBLAS_NUM_THREADS="2")
    assert threads and all(n == 2 for n in threads)


@pytest.mark.parametrize("args", [["--processes", "0"], ["--hands", "-1"]])
def test_the_benchmark_refuses_no_work_in_one_line(args: list[str]) -> None:
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "blas_threads.py"
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("--hands and --processes must be at least 1, got " + ("3 and 0" if args[0] == "--processes" else "-1 and 2"))
    assert "Traceback" not in done.stderr
