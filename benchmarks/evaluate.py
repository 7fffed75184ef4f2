"""7-card hand evaluations per second on one core: poker.evaluate against eval7.

Both evaluators rank the same random 7-card hands (fixed seed). Ours is called
once per batch with an (n, 7) int8 array, after a warm-up call that compiles
(or loads the cached) numba kernel. eval7 runs in a Python loop over prebuilt
``eval7.Card`` lists, which is how it is used. Each figure is the best of several
runs, to keep scheduler noise out. The two must order the hands identically,
otherwise the timing means nothing. Target: ours >= 50 M/s and >= 25x eval7.

Run: ``.venv/bin/python benchmarks/evaluate.py``. The last line is the figure.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba loads; the kernel is serial anyway

import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import eval7  # noqa: E402
import numpy as np  # noqa: E402

from poker.evaluate import rank_hands  # noqa: E402

NUM_HANDS = 1_000_000
SEED = 2024
OUR_RUNS = 20
EVAL7_RUNS = 3
RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"


def random_hands(count: int, seed: int) -> np.ndarray:
    """``count`` uniform 7-card hands as an int8 array (count, 7)."""
    rng = np.random.default_rng(seed)
    chunks = []
    for start in range(0, count, 100_000):
        keys = rng.random((min(100_000, count - start), 52))
        chunks.append(np.argpartition(keys, 6, axis=1)[:, :7])
    return np.concatenate(chunks).astype(np.int8)


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    hands = random_hands(NUM_HANDS, SEED)
    deck = [eval7.Card(RANK_CHARS[c // 4] + SUIT_CHARS[c % 4]) for c in range(52)]
    eval7_hands = [[deck[c] for c in row] for row in hands.tolist()]

    ours = rank_hands(hands)  # warm-up: compile or load the cached kernel
    theirs = np.array([eval7.evaluate(hand) for hand in eval7_hands])
    same_order = np.unique(ours, return_inverse=True)[1] == np.unique(theirs, return_inverse=True)[1]
    if not same_order.all():
        raise SystemExit("poker.evaluate and eval7 order these hands differently")

    ours_s = best_seconds(lambda: rank_hands(hands), OUR_RUNS)
    evaluate = eval7.evaluate
    theirs_s = best_seconds(lambda: [evaluate(hand) for hand in eval7_hands], EVAL7_RUNS)
    ours_rate = NUM_HANDS / ours_s
    theirs_rate = NUM_HANDS / theirs_s
    print(f"{NUM_HANDS} random 7-card hands, seed {SEED}, one thread")
    print(f"poker.evaluate.rank_hands (numba batch): {ours_rate / 1e6:.1f} M/s, best of {OUR_RUNS}")
    print(f"eval7.evaluate (Python loop): {theirs_rate / 1e6:.2f} M/s, best of {EVAL7_RUNS}")
    ratio = ours_rate / theirs_rate
    print(f"7-card evaluations/s: {ours_rate:.0f} vs eval7 {theirs_rate:.0f} ratio {ratio:.1f}")


if __name__ == "__main__":
    main()
