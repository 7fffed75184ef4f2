"""Two re-solving bots sharing the cores: one BLAS thread a process (ours,
:mod:`strategies.resolve.blas`) against numpy's default, a BLAS thread per core
(the anchor).

A re-solve's matrix products are small and many; OpenBLAS's threads, one per
core in every process, wait on each other (and spin) where two processes
share the cores, as a bot and its opponent do in a match, or the LBR
benchmark's two workers. Each setting starts two copies of
``benchmarks/modicum_latency.py`` at once (the bot built, its pre-flop root
solved, then ``--hands`` hands against each of its two opponents, every
decision re-solved) and times each process from start to exit; the anchor's
processes get ``OPENBLAS_NUM_THREADS`` = the core count, which is OpenBLAS's
default and which the bot leaves alone (a user's setting).

Run: ``.venv/bin/python benchmarks/blas_threads.py [--hands 3] [--processes 2]``.
The last line: the mean seconds a process, ours against the anchor's, ratio =
anchor / ours (above 1: ours is faster).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from strategies.resolve.blas import USER_SETTINGS  # noqa: E402

LATENCY = Path(__file__).resolve().parent / "modicum_latency.py"


def run_together(processes: int, hands: int, env: dict[str, str]) -> list[float]:
    """Seconds each of ``processes`` copies of the latency benchmark took, all started at once."""
    started = time.perf_counter()
    children = [
        subprocess.Popen(
            [sys.executable, str(LATENCY), "--hands", str(hands), "--seed", str(seed + 1)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for seed in range(processes)
    ]
    seconds = [0.0] * processes
    pending = set(range(processes))
    while pending:
        for i in list(pending):
            if children[i].poll() is not None:
                seconds[i] = time.perf_counter() - started
                pending.discard(i)
        time.sleep(0.05)
    for child in children:
        assert child.stderr is not None
        if child.returncode:
            raise SystemExit(f"a copy of {LATENCY.name} failed:\n{child.stderr.read()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=3, help="hands against each opponent in each process (default 3)")
    parser.add_argument("--processes", type=int, default=2, help="processes at once (default 2)")
    args = parser.parse_args()
    if args.hands < 1 or args.processes < 1:
        parser.error(f"--hands and --processes must be at least 1, got {args.hands} and {args.processes}")
    cores = os.cpu_count() or 1
    ours_env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    anchor_env = {**ours_env, "OPENBLAS_NUM_THREADS": str(cores)}
    results = {}
    for name, env in (("one BLAS thread a process", ours_env), (f"{cores} BLAS threads a process (numpy's default)", anchor_env)):
        seconds = run_together(args.processes, args.hands, env)
        results[name] = sum(seconds) / len(seconds)
        print(f"{name}: {', '.join(f'{s:.1f}' for s in seconds)} s", flush=True)
    ours, anchor = results.values()
    print(
        f"hunl-modicum, {args.processes} processes on {cores} cores, build and {2 * args.hands} hands each:"
        f" {ours:.1f} s vs {anchor:.1f} s with a BLAS thread per core ratio {anchor / ours:.2f}"
    )


if __name__ == "__main__":
    main()
