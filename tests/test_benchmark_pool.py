"""``benchmarks/hunl_lbr.py --pool``: the runs behind the HUNL figure are pooled across
sessions (a seed takes up to half an hour), so pooling must refuse what would bias it —
files of two bots, or one seed twice (a seed deals the same cards to a bot whose play is
reproducible from it, so its pairs would count twice) — in one line, and report the pooled
pairs' mean exactly. The kept runs (``benchmarks/data/hunl_lbr/``) must pool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "hunl_lbr.py"
KEPT = sorted((ROOT / "benchmarks" / "data" / "hunl_lbr").glob("*.npz"))
ESTIMATORS = ("raw", "all-in adjusted", "imaginary observations", "AIVAT, chance only", "AIVAT")


def _pool(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--pool", *map(str, files)], capture_output=True, text=True, timeout=120)


def _run(path: Path, bot: str, seed: int, lbr: np.ndarray) -> Path:
    """A file as ``--save`` writes it: chips per pair, position and estimator."""
    betting = np.full(lbr.shape[:2], "cc/cc/cc/cc")
    np.savez_compressed(
        path, estimators=np.array(ESTIMATORS), h2h=np.zeros((0, 5)), lbr=lbr, betting=betting, bot=np.array(bot), seed=np.array(seed)
    )  # fmt: skip
    return path


def _chips(pairs: int, offset: float) -> np.ndarray:
    """Whole chips, so every sum below is exact."""
    return (np.arange(pairs * 2 * 5, dtype=np.float64).reshape(pairs, 2, 5) % 7 - 3 + offset).round()


def test_pooling_one_seed_twice_is_refused_in_one_line(tmp_path: Path) -> None:
    a = _run(tmp_path / "a.npz", "hunl-modicum", 8, _chips(4, 0))
    b = _run(tmp_path / "b.npz", "hunl-modicum", 8, _chips(4, 1))
    done = _pool(a, b)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{a} and {b} are both seed 8: the same deals would count twice" in done.stderr


def test_pooling_two_bots_is_refused_in_one_line(tmp_path: Path) -> None:
    done = _pool(_run(tmp_path / "a.npz", "hunl-modicum", 8, _chips(4, 0)), _run(tmp_path / "b.npz", "modicum", 9, _chips(4, 0)))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the files measured different bots (hunl-modicum, modicum): pool runs of one bot" in done.stderr


def test_pooled_figure_is_the_mean_of_every_pair(tmp_path: Path) -> None:
    first, second = _chips(3, 0), _chips(5, 40)
    done = _pool(_run(tmp_path / "a.npz", "resolve", 1, first), _run(tmp_path / "b.npz", "resolve", 2, second))
    assert done.returncode == 0, done.stderr
    pairs = np.concatenate([first, second]).mean(axis=1)[:, 1]  # all-in adjusted, a pair's mean
    mean = float(pairs.mean()) * 10  # mbb/g: 1000 / the big blind of 100 chips
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(f"HUNL LBR fcpa every street vs resolve (pooled: 2 files): {mean:.0f} ± "), last


@pytest.mark.skipif(not KEPT, reason="no kept runs in benchmarks/data/hunl_lbr")
def test_the_kept_runs_pool() -> None:
    for path in KEPT:
        with np.load(path, allow_pickle=False) as saved:
            assert str(saved["bot"]) == "hunl-modicum" and path.name == f"hunl-modicum-s{int(saved['seed'])}.npz"
            assert saved["lbr"].shape == (300, 2, 5) and saved["betting"].shape == (300, 2)
    done = _pool(*KEPT)
    assert done.returncode == 0, done.stderr
    assert f"vs hunl-modicum (pooled: {len(KEPT)} files)" in done.stdout.strip().splitlines()[-1]
