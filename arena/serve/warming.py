"""Hosted bots made ready before their first match.

A hosted bot that plays a compact file with its card abstraction inside
(``hulhe-ir50``) or re-solves at each decision (``hunl-modicum``) runs numba
kernels that a fresh install has not compiled yet: ``hunl-modicum``'s take
over a minute on 2 cores, longer than a match's start timeout, so its first
match would abort with the agent waiting in vain. The service therefore builds
each such bot once, in a process of its own (``arena warmup --bot NAME``:
compiling in the service's process would stall every request it serves), and
caches the kernels on disk for the bots' own processes. It does so when it
starts (``warm_bots``, the default) and, in any case, before the first match
against the bot: that match waits (its status ``waiting``, the API's
``starting`` saying why) and its seating's clock starts only once the bot is
ready. With the kernels cached (``make test``, the Docker image, any run
after the first) a bot is ready in a few seconds.
"""

from __future__ import annotations

import sys
import time
from typing import Final

import trio

from strategies.bots import LIBRARY

__all__ = ["KERNEL_BOTS", "Warming"]

#: The shipped bots whose play compiles numba kernels: a compact file's card
#: abstraction, or a re-solver. The others play a strategy file in plain Python.
KERNEL_BOTS: Final = tuple(
    bot.name for bot in LIBRARY.values() if bot.shipped and (bot.compact or bot.agent != "equilibrium")
)



def _say(text: str) -> None:
    """A progress line on the service's stderr, beside ``arena serve``'s own."""
    print(f"arena serve: {text}", file=sys.stderr, flush=True)


class Warming:
    """Which hosted bots are ready, and the one warm-up of each (at most one
    process per bot however many matches wait for it)."""

    def __init__(self) -> None:
        self._ready: dict[str, trio.Event] = {}
        #: Why each bot warming now is not ready yet (what the API shows a waiting match).
        self.starting: dict[str, str] = {}

    async def warm_all(self) -> None:
        """Warm every bot of :data:`KERNEL_BOTS`, one after the other."""
        for name in KERNEL_BOTS:
            await self.ready(name)

    async def ready(self, name: str) -> None:
        """Return once the bot ``name`` can start within a match's start timeout:
        at once for a bot that compiles nothing or was warmed; else after its
        warm-up (started now, or the one already running). A warm-up that fails
        is logged and counts as done: the match then meets the failure itself,
        with the bot's own error."""
        if name not in KERNEL_BOTS:
            return
        event = self._ready.get(name)
        if event is not None:
            await event.wait()
            return
        event = self._ready[name] = trio.Event()
        self.starting[name] = (
            f"the bot {name} is starting: it compiles its kernels once after an install"
            " (up to 2 minutes on 2 cores; seconds when they are cached)"
        )
        _say(f"warming {name} (its kernels are compiled once after an install; matches against it wait)")
        started = time.monotonic()
        try:
            done = await trio.run_process(
                [sys.executable, "-m", "arena", "warmup", "--bot", name], capture_stdout=True, capture_stderr=True,
                check=False,
            )
            if done.returncode == 0:
                _say(f"{name} is ready ({time.monotonic() - started:.1f} s)")
            else:
                last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                _say(f"warming {name} failed (status {done.returncode}): {last[0]}")
        finally:
            del self.starting[name]
            event.set()
