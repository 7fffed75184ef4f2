"""One BLAS thread for the re-solvers' matrix products.

A re-solve multiplies small matrices (a few hundred leaves or nodes by the 1,326
hold'em hands, or by their 169 classes) thousands of times a decision, and
numpy's OpenBLAS runs each product on a thread per core. Where two solving
processes share the cores (a bot beside its opponent's process, the LBR
benchmark's workers, a tournament's), those threads wait on one another:
on 2 cores ``hunl-modicum``'s build and root solve took 31 s in each of two
processes started together, and 8 s with one BLAS thread each (7.5 s alone),
and two such bots each playing 4 hands 390 s against 37.6 s
(``benchmarks/blas_threads.py``); LBR against it ran 2.8 times faster. Most of
that waiting was in one product, which the pre-flop class means replaced by a
numba pass (:mod:`~strategies.resolve.preflop_equity`; 29.7 against 28.8 s
since); the limit stays for the products left. The
project parallelises by process, never inside one product, so every process
that re-solves keeps one BLAS thread, and so do the processes it starts,
unless its user chose a count with one of the variables BLAS libraries read
(:data:`USER_SETTINGS`).

The limit is set twice over: on the BLAS libraries loaded so far (threadpoolctl)
and in ``OPENBLAS_NUM_THREADS``, which OpenBLAS reads when it is loaded, for
those loaded later (SciPy's own copy, where SciPy is installed, was seen loaded
after the agent is made) and for child processes.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

__all__ = ["USER_SETTINGS", "one_blas_thread"]

#: Environment variables by which a user sets the BLAS threads themselves (then left alone).
USER_SETTINGS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")

_done = False


def one_blas_thread() -> None:
    """Limit this process's BLAS libraries, those loaded later and its child
    processes' to one thread each (once a process), unless the environment sets
    one of :data:`USER_SETTINGS`."""
    global _done
    if _done:
        return
    _done = True
    if not any(os.environ.get(name) for name in USER_SETTINGS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        threadpool_limits(limits=1, user_api="blas")
