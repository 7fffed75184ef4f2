"""Tournament throughput (issue 12): matches per minute with 1 and 2 local workers.

A Leduc tournament of five bots (leduc-cfr, tilt:preset=orange, always-call,
always-raise, random: ten duplicate matches a series) is played into a fresh
temporary output directory with ``--workers 1``, then ``--workers 2``
(:func:`arena.tournament.run_tournament`, in-process agents, a process pool of
that many workers). The time of a run is its whole wall time: pool start-up,
every match (both seatings) and the SQLite writes. The same tournament is also
played on a Dask ``LocalCluster`` of 1 and then 2 worker processes (one thread
each; ``--local-only`` skips it), with its own ratio line; the last line stays
the local figure.

Run: ``.venv/bin/python benchmarks/tournament.py [--hands N] [--series K] [--local-only]``.
The last line is the figure: ``tournament matches/min: <2 workers> vs <1 worker>
ratio <2-worker / 1-worker>`` (target at least 1.7 on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.tournament import parse_config, run_tournament  # noqa: E402

BOTS = {
    "cfr": "leduc-cfr",
    "orange": "tilt:preset=orange",
    "caller": "always-call",
    "raiser": "always-raise",
    "random": "random",
}


def rate(hands: int, series: int, workers: int, dask: str | None = None) -> tuple[float, int]:
    """Matches per minute and the number of matches, for one whole run."""
    with tempfile.TemporaryDirectory() as scratch:
        document = {"game": "leduc", "hands": hands, "series": series, "seed": 1, "bots": BOTS, "output": "out"}
        config = parse_config(document, Path(scratch))
        start = time.perf_counter()
        stored, failures = run_tournament(config, workers=workers, dask=dask, progress=False)
        elapsed = time.perf_counter() - start
    if failures:
        raise SystemExit(f"{len(failures)} matches failed: {failures[0]}")
    return len(stored) / elapsed * 60, len(stored)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hands", type=int, default=500, help="hands a seating (default 500)")
    parser.add_argument("--series", type=int, default=2, help="duplicate series (default 2: 20 matches)")
    parser.add_argument("--local-only", action="store_true", help="skip the dask LocalCluster runs")
    args = parser.parse_args()
    rate(20, 1, 2)  # warm the caches (tilt strategies, numba) outside the timings
    # other work on the machine takes cores from the 2-worker run: say how busy it was
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'where':<24} {'matches':>7} {'matches/min':>12}")
    on_dask = {}
    if not args.local_only:
        from dask.distributed import LocalCluster

        for workers in (1, 2):
            with LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
            ) as cluster:
                on_dask[workers], matches = rate(args.hands, args.series, workers, str(cluster.scheduler_address))
            print(f"{f'dask, {workers} worker(s)':<24} {matches:>7} {on_dask[workers]:>12.1f}")
    results = {}
    for workers in (1, 2):
        results[workers], matches = rate(args.hands, args.series, workers)
        print(f"{f'local, {workers} worker(s)':<24} {matches:>7} {results[workers]:>12.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if on_dask:
        print(f"dask LocalCluster matches/min: {on_dask[2]:.1f} vs {on_dask[1]:.1f} ratio {on_dask[2] / on_dask[1]:.2f}")
    print(f"tournament matches/min: {results[2]:.1f} vs {results[1]:.1f} ratio {results[2] / results[1]:.2f}")


if __name__ == "__main__":
    main()
