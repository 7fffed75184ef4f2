"""Ctrl-C and SIGTERM around a solve that checkpoints, never between an update and its count.

Python runs a signal handler in the main thread between two bytecodes, so the
default Ctrl-C (``KeyboardInterrupt``) lands wherever the interpreter happens to
be. A numba kernel cannot be cut: a signal that arrives while one runs is
handled just after it returns, before the line that advances the iteration
count, so a checkpoint written by the ``except KeyboardInterrupt`` clause held
the arrays of (say) 81,919 iterations under the count of 65,535, and its resume
drifted away from a straight run. The same goes for solvers whose batch is a
Python loop over kernels (the abstract game, PCS's board sampler): stopped in
the middle, their arrays, sampler and count disagree.

:class:`Interrupts` makes SIGINT and SIGTERM alike (a batch scheduler or
``timeout`` sends SIGTERM) and keeps them out of the sections that must run
whole (:meth:`Interrupts.deferred`: a batch of iterations with its count): a
signal that arrives inside one is raised as ``KeyboardInterrupt`` when the
section ends, so the solve stops on a batch boundary. Everywhere else the first
signal is raised at once, so a long measurement or table build stops without
waiting. Once one has been raised the solve is stopping and writes its
checkpoint: later signals are only noted, so a second Ctrl-C cannot cut that
write short (the write itself is atomic too: :func:`strategies.cfr.file_io.write_file`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

__all__ = ["Interrupts"]

#: The signals that stop a solve: Ctrl-C, and kill / timeout / a batch scheduler.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """SIGINT and SIGTERM as ``KeyboardInterrupt`` while entered (main thread
    only, as :func:`signal.signal` is), held back inside :meth:`deferred`
    sections and after the first one raised; the previous handlers come back on
    exit."""

    def __init__(self) -> None:
        self._depth = 0  # how many deferred sections are open
        self._pending = False  # a signal arrived inside one
        self._raised = False  # one was raised: the program is stopping
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._depth or self._raised:
            self._pending = True
            return
        self._stop()

    def _stop(self) -> None:
        self._raised = True
        raise KeyboardInterrupt

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Run the body whole: a signal that arrives inside it is raised as
        ``KeyboardInterrupt`` when it ends (the outermost section, once)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if self._pending and not self._depth and not self._raised:
            self._stop()
