"""Imported by the forkserver of a tournament's process pool (its preload,
:func:`arena.tournament.runner._pool_context`), and by nothing else: it blocks
SIGINT in the server, so every pool worker forked from it is born with SIGINT
blocked and takes an interrupt (a terminal's Ctrl-C, or the runner passing a
SIGTERM on) only once its initializer has set the worker's own handling
(:func:`arena.tournament.runner._start_worker`).

Why: an interrupt that reached a worker still starting (inside
multiprocessing's bootstrap or the pool's initializer) raised KeyboardInterrupt
there, and multiprocessing printed its traceback after the runner's resume hint.
Blocked, the interrupt waits (pending) until the worker is ready to take it.
The server itself ignores SIGINT anyway (multiprocessing sets SIG_IGN there),
so blocking it changes nothing for the server. Kept free of imports of ours:
the server should hold no state a worker did not ask for."""

import signal

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
