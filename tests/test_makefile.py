"""The Makefile's set-up: ``make match`` installs what running needs, ``make test``
adds the test extras and the numba warm-up, upgrading the same venv.

The targets run for real against a fake Python: ``$(PYTHON) -m venv`` makes a
``.venv`` whose ``python`` and ``arena`` only log their arguments, so each test
reads exactly which installs a target ran, in seconds and without a network.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None or shutil.which("bash") is None, reason="needs make and bash")
#: What ``make test`` runs: the suite with a pytest-xdist worker per core (``nproc``).
SUITE = f"python -m pytest -n {len(os.sched_getaffinity(0))}"

# A python that logs "python ARGS" (and arena "arena ARGS") to $FAKE_LOG; `-m venv DIR`
# also makes DIR/bin/python and DIR/bin/arena, copies of itself. Also the `chromium`,
# `dockerd`, `docker-compose` and `mmdebstrap` on PATH, so that `make test` and `make
# compose-test` install none of Debian's.
_FAKE = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$FAKE_LOG"
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && cp "$0" "$3/bin/arena"
fi
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    fake = tmp_path / "fake" / "python3"
    fake.parent.mkdir()
    fake.write_text(_FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    # `make test` installs Debian's chromium, `make compose-test` its Docker, where none is found: here they are.
    for tool in ("chromium", "dockerd", "docker-compose", "mmdebstrap"):
        (fake.parent / tool).symlink_to(fake)
    return tmp_path


def _make(clone: Path, target: str) -> list[str]:
    """Run ``make TARGET`` in ``clone``; the fake python's and arena's calls, in order."""
    log = clone / "calls.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "FAKE_LOG": str(log), "PATH": f"{clone / 'fake'}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        ["make", "--no-print-directory", target, f"PYTHON={clone / 'fake' / 'python3'}"],
        cwd=clone,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return log.read_text().splitlines() if log.exists() else []


def _installs(calls: list[str]) -> list[str]:
    """What each ``pip install`` of the project asked for (``.`` or ``.[test]``)."""
    return [call.split()[-1].strip("'") for call in calls if " pip install " in f" {call} " and "-e" in call.split()]


def test_make_match_installs_only_what_running_needs(clone: Path) -> None:
    calls = _make(clone, "match")
    assert calls[0] == "python3 -m venv .venv"
    assert _installs(calls) == ["."]
    assert all("-c constraints.txt" in call for call in calls if "-e" in call.split())
    assert "arena warmup" not in calls  # kernels compile as the match needs them
    assert calls[-1].startswith("arena match hulhe ")


def test_make_test_upgrades_the_venv_of_make_match(clone: Path) -> None:
    _make(clone, "match")
    calls = _make(clone, "test")
    assert not any("-m venv" in call for call in calls)  # the same venv, not a new one
    assert _installs(calls) == [".[test]"]
    assert "arena warmup" in calls  # the suite uses every kernel: compiled once, ahead
    assert calls[-1] == SUITE


def test_a_changed_kernel_is_compiled_again_before_the_suite(clone: Path) -> None:
    """After a pull that changes a numba kernel, ``make test`` runs ``arena warmup``
    again (and installs nothing): a test that needs the new kernel must not
    compile it inside its own time limits."""
    kernel = clone / "strategies" / "resolve" / "preflop_leaves.py"  # any module with a kernel, whatever its name
    kernel.parent.mkdir(parents=True)
    kernel.write_text("@njit(cache=True)\ndef kernel():\n    pass\n")
    _make(clone, "test")
    assert _make(clone, "test") == [SUITE]
    later = kernel.stat().st_mtime + 60
    os.utime(kernel, (later, later))
    assert _make(clone, "test") == ["arena warmup", SUITE]


def test_make_match_after_make_test_installs_nothing(clone: Path) -> None:
    _make(clone, "test")
    calls = _make(clone, "match")
    assert len(calls) == 1 and calls[0].startswith("arena match ")


def test_new_pins_reinstall_into_the_same_venv(clone: Path) -> None:
    _make(clone, "test")
    with (clone / "constraints.txt").open("a") as pins:
        pins.write("# moved\n")
    calls = _make(clone, "test")
    assert not any("-m venv" in call for call in calls)
    assert _installs(calls) == [".", ".[test]"]


def test_make_compose_test_runs_the_stack_test_alone_in_the_test_venv(clone: Path) -> None:
    _make(clone, "test")
    calls = _make(clone, "compose-test")
    assert calls == ["python -m pytest tests/deploy/test_compose.py"]  # no install: the venv of make test
