"""``benchmarks/hunl_lbr.py --pool``: the runs behind the HUNL figure are pooled across
sessions (a seed takes up to half an hour), so pooling must refuse what would bias it —
files of two bots, or one seed twice (a seed deals the same cards to a bot whose play is
reproducible from it, so its pairs would count twice) — in one line, and report the pooled
pairs' mean exactly; a run kept only as its lines (a JSON file, its pairs lost) pools to the
figure its pairs would give. The kept runs (``benchmarks/data/hunl_lbr/``) must pool."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
import traceback
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from poker.stats import mean_ci

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "hunl_lbr.py"
KEPT = sorted((ROOT / "benchmarks" / "data" / "hunl_lbr").glob("hunl-modicum-s*"))
#: The bot the older kept set measured, as its files name it: hunl-modicum before its blueprint changed.
OLD_BOT = "hunl-modicum (3-bucket blueprint, shipped until 2026-11-29)"
ESTIMATORS = ("raw", "all-in adjusted", "imaginary observations", "AIVAT, chance only", "AIVAT")


def _script_module() -> ModuleType:
    """The script, imported once (as ``benchmarks_hunl_lbr``) to run its ``main`` in this process."""
    name = "benchmarks_hunl_lbr"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def _script(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/hunl_lbr.py ARGV`` as the process would end, run in this
    one (a process each took seconds of imports): its status (``parser.error`` is 2),
    output, and an uncaught exception's traceback on stderr with status 1.
    ``test_the_script_runs_as_a_process`` runs it as a process once."""
    out, err, status = io.StringIO(), io.StringIO(), 0
    saved = sys.argv
    sys.argv = [str(SCRIPT), *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                _script_module().main()
            except SystemExit as end:
                status = end.code if isinstance(end.code, int) else 1
            except Exception:
                traceback.print_exc()
                status = 1
    finally:
        sys.argv = saved
    return subprocess.CompletedProcess([str(SCRIPT), *argv], status, out.getvalue(), err.getvalue())


def _pool(*files: Path) -> subprocess.CompletedProcess[str]:
    return _script("--pool", *map(str, files))


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
    pairs = np.concatenate([first, second]).mean(axis=1)[:, ESTIMATORS.index("AIVAT")]  # the last line's estimator, a pair's mean
    mean = float(pairs.mean()) * 10  # mbb/g: 1000 / the big blind of 100 chips
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(f"HUNL LBR fcpa every street vs resolve (pooled: 2 files): {mean:.0f} ± "), last


def _recorded(path: Path, lbr: np.ndarray, seeds: list[int], changes: dict[str, object] | None = None) -> Path:
    """The lines of the pairs ``lbr`` as a recorded run keeps them (mbb/g, not rounded here)."""
    pairs = lbr.mean(axis=1) * 10
    hands = lbr[:, :, 1].ravel() * 10
    size = np.abs(hands) / 1000  # big blinds, in mbb
    bounds = [0, 0.75, 1.5, 5, 20, 80, np.inf]
    pots = [mean_ci(np.where((size >= lo) & (size < hi), hands, 0.0)) for lo, hi in zip(bounds, bounds[1:])]
    data = {
        "bot": "resolve", "seeds": seeds, "pairs": len(pairs),
        "mbb/g": {name: [mean_ci(pairs[:, k]).mean, mean_ci(pairs[:, k]).half_width] for k, name in enumerate(ESTIMATORS) if k},
        "by pot": [[ci.mean, ci.half_width] for ci in pots],
    }  # fmt: skip
    data.update(changes or {})
    path.write_text(json.dumps(data))
    return path


def test_a_recorded_run_pools_as_its_pairs_would(tmp_path: Path) -> None:
    """Chips of up to 150 big blinds, so every pot class has hands; the pooled lines
    from a file and a recorded run equal the lines of both runs' pairs in one file."""
    rng = np.random.default_rng(3)
    first, second = (rng.integers(-15000, 15000, (n, 2, 5)).astype(np.float64) for n in (40, 60))
    both = _pool(_run(tmp_path / "all.npz", "resolve", 1, np.concatenate([first, second])))
    mixed = _pool(_run(tmp_path / "b.npz", "resolve", 2, second), _recorded(tmp_path / "a.json", first, [1]))
    assert both.returncode == mixed.returncode == 0, mixed.stderr
    whole, parts = both.stdout.splitlines(), mixed.stdout.splitlines()
    assert whole[0].split("pairs: ")[1].split(", all-in")[1] == parts[0].split("pairs: ")[1].split(", all-in")[1]
    assert parts[0].split("pairs: ")[1].startswith("raw n/a, all-in")  # the recorded run kept no raw line
    assert "(pooled: 1 files, seed 1 recorded), HUNL, 100 duplicate pairs" in parts[0]
    assert whole[1] == parts[1] and whole[1].count(" ± ") == 6
    assert whole[-1].split("): ")[1] == parts[-1].split("): ")[1] and " ± " in whole[-1]
    assert "the files' 60 pairs, the recorded runs kept no lines" in parts[2]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"seeds": "1-7"}, "'seeds' must be a list of whole numbers"),
        ({"pairs": 1}, "'pairs' a count of at least 2"),
        ({"mbb/g": {"AIVAT": [1, 2]}}, "'mbb/g' must give 'all-in adjusted'"),
        ({"mbb/g": {"all-in adjusted": [1, 2]}}, "and 'AIVAT' (the last line's)"),
        ({"mbb/g": {"all-in adjusted": [1, -2], "AIVAT": [1, 2]}}, "[1, -2] has a negative half-width"),
        ({"by pot": [[1, 2]]}, "'by pot' must give the 6 pot classes"),
        ({"seeds": [4, 4]}, "names a seed twice"),
        ({"by pot": [[1, 2]] * 5 + [[float("nan"), 2]]}, "[nan, 2] is not [mean, half-width], two finite numbers"),
    ],
)
def test_a_bad_recorded_run_is_one_line(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    done = _pool(_recorded(tmp_path / "a.json", _chips(4, 0), [4], changes))
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()[-1:]) == 1
    assert f"{tmp_path / 'a.json'}:" in done.stderr and message in done.stderr, done.stderr


def test_one_pair_is_no_interval(tmp_path: Path) -> None:
    done = _pool(_run(tmp_path / "a.npz", "resolve", 3, _chips(1, 0)))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the files hold 1 pair: an interval needs at least two, in the files or a recorded run" in done.stderr


def test_a_recorded_seed_is_not_pooled_again(tmp_path: Path) -> None:
    done = _pool(_run(tmp_path / "a.npz", "resolve", 3, _chips(4, 0)), _recorded(tmp_path / "b.json", _chips(4, 0), [2, 3]))
    assert done.returncode == 2 and f"{tmp_path / 'a.npz'} and {tmp_path / 'b.json'} are both seed 3" in done.stderr


@pytest.mark.skipif(not KEPT, reason="no kept runs in benchmarks/data/hunl_lbr")
def test_the_kept_runs_pool() -> None:
    files = [path for path in KEPT if path.suffix == ".npz"]
    for path in files:
        with np.load(path, allow_pickle=False) as saved:
            assert str(saved["bot"]) == OLD_BOT and path.name == f"hunl-modicum-s{int(saved['seed'])}.npz"
            assert saved["lbr"].shape == (300, 2, 5) and saved["betting"].shape == (300, 2)
    recorded = [path for path in KEPT if path.suffix == ".json"]
    assert [path.name for path in recorded] == ["hunl-modicum-s1-7.json"] and len(files) + len(recorded) == len(KEPT)
    done = _pool(*KEPT)
    assert done.returncode == 0, done.stderr
    assert f"vs {OLD_BOT} (pooled: {len(files)} files, seeds 1-7 recorded)" in done.stdout.strip().splitlines()[-1]


def _paired(pool: list[Path], against: list[Path]) -> subprocess.CompletedProcess[str]:
    return _script("--pool", *map(str, pool), "--against", *map(str, against))


def test_paired_is_the_difference_deal_by_deal_over_the_common_seeds(tmp_path: Path) -> None:
    # Seeds 1 and 2 in both sets, 3 in the pool alone; seed 2 of the other bot is
    # shorter (its first 3 pairs are the same deals): 4 + 3 pairs are compared.
    a1, a2, a3 = _chips(4, 0), _chips(5, 2), _chips(4, 9)
    b1, b2 = _chips(4, 1) * 2, _chips(3, -1)
    pool = [_run(tmp_path / f"a{s}.npz", "within", s, lbr) for s, lbr in ((1, a1), (2, a2), (3, a3))]
    against = [_run(tmp_path / f"b{s}.npz", "modicum", s, lbr) for s, lbr in ((1, b1), (2, b2))]
    done = _paired(pool, against)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    diffs = np.concatenate([a1.mean(axis=1) - b1.mean(axis=1), a2[:3].mean(axis=1) - b2.mean(axis=1)]) * 10
    expected = ", ".join(f"{name} {mean_ci(diffs[:, k]).mean:+.0f} ± {mean_ci(diffs[:, k]).half_width:.0f}" for k, name in enumerate(ESTIMATORS))
    assert first.startswith(f"paired by deal, LBR vs within − modicum, HUNL, seeds 1, 2: 7 pairs: {expected} mbb/g (correlation ")
    assert done.stdout.strip().splitlines()[-1].startswith("HUNL LBR fcpa every street vs within (pooled: 3 files): ")


@pytest.mark.parametrize(
    ("against", "message"),
    [
        ([("other", 5)], "no seed is in both --pool and --against: nothing to pair"),
        ([("other", 1), ("else", 2)], "the files measured different bots (else, other): pool runs of one bot"),
        ([("other", 1), ("other", 1)], "are both seed 1: the same deals would count twice"),
    ],
)
def test_paired_refusals_are_one_line(tmp_path: Path, against: list[tuple[str, int]], message: str) -> None:
    pool = [_run(tmp_path / "a.npz", "within", 1, _chips(4, 0))]
    files = [_run(tmp_path / f"b{i}.npz", bot, seed, _chips(4, 1)) for i, (bot, seed) in enumerate(against)]
    done = _paired(pool, files)
    assert done.returncode == 2 and "Traceback" not in done.stderr and message in done.stderr, done.stderr


def test_paired_refuses_a_recorded_run_and_needs_pool(tmp_path: Path) -> None:
    pool = [_run(tmp_path / "a.npz", "resolve", 1, _chips(4, 0))]
    done = _paired(pool, [_recorded(tmp_path / "b.json", _chips(4, 0), [1])])
    assert done.returncode == 2 and "a recorded run kept no pairs, so it cannot be paired deal by deal" in done.stderr
    alone = _script("--against", str(pool[0]))
    assert alone.returncode == 2 and "--against compares with the --pool files: give both" in alone.stderr


def test_the_script_runs_as_a_process(tmp_path: Path) -> None:
    # What _script stands in for: the command line itself, refusing in one line.
    path = _run(tmp_path / "a.npz", "resolve", 3, _chips(1, 0))
    done = subprocess.run([sys.executable, str(SCRIPT), "--pool", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("the files hold 1 pair: an interval needs at least two, in the files or a recorded run")
