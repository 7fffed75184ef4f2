"""One line on stderr when numba compiles this project's kernels (a cold cache).

Every kernel is ``@njit(cache=True)``: numba compiles it on the first call with
new argument types and keeps the machine code on disk (``__pycache__`` beside the
source, or ``$NUMBA_CACHE_DIR``), so later runs load it in well under a second.
The first run pays the compilation: minutes for the solver kernels on a loaded
machine. numba fires its ``numba:compile`` event only for a real compilation (a
cache load does not), so a listener on it tells exactly when the cache is cold,
and costs nothing when it is warm. The notice says what compiles and roughly how
long it takes, once per kernel module and process, where it is cached::

    numba: compiling the CFR solver kernels, once (about 60 s on 2 cores; cached in .../strategies/cfr/tree/__pycache__)

A command that needs several modules names them ahead with :func:`expect`, so
that its user reads one line, not one per module. The line goes through
``tqdm.write``: printed while a progress bar runs, it lands above the bar, never
inside it.

``arena warmup`` compiles everything ahead. The notice is off
under pytest (tests compare stderr) unless ``ACPC_ARENA_COMPILE_NOTICE=1``;
``ACPC_ARENA_COMPILE_NOTICE=0`` turns it off everywhere.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from numba.core import event
from tqdm import tqdm

__all__ = ["ENV", "LABELS", "SECONDS", "enabled", "expect", "install", "notice", "recording", "solve_kernels"]

#: The environment variable: ``0`` silences the notice, ``1`` forces it (pytest too).
ENV = "ACPC_ARENA_COMPILE_NOTICE"
#: What the kernel modules compute, as the notice names them.
LABELS = {
    "poker._eval_kernels": "hand evaluator",
    "strategies.cfr.tree._kernels": "CFR solver",
    "strategies.cfr.abstraction._kernels": "card abstraction",
    "strategies.cfr.solvers._pcs_kernels": "public chance sampling",
    "strategies.cfr.solvers._abstract_kernels": "abstract game",
    "strategies.cfr.best_response.blind": "blind best response",
    "strategies.cfr.solvers.multiplayer": "multiplayer CFR",
    "strategies.cfr.solvers._sampled_kernels": "sampled multiplayer CFR",
    "strategies.resolve._kernels": "re-solving and value-net",
    "analysis.allin": "all-in adjustment",
}
#: Roughly how long each module's kernels take to compile, in seconds: what
#: ``arena warmup`` took on a fresh clone, 2 shared cores.
#: The notice turns the sum into words ("a few seconds", "about 1 min"): the
#: user learns whether to wait or to fetch a coffee, not a prediction.
SECONDS = {
    "poker._eval_kernels": 2.0,
    "strategies.cfr.tree._kernels": 60.0,
    "strategies.cfr.abstraction._kernels": 8.0,
    "strategies.cfr.solvers._pcs_kernels": 6.0,
    "strategies.cfr.solvers._abstract_kernels": 6.0,
    "strategies.cfr.best_response.blind": 20.0,
    "strategies.cfr.solvers.multiplayer": 5.0,
    "strategies.cfr.solvers._sampled_kernels": 7.0,
    "strategies.resolve._kernels": 70.0,
    "analysis.allin": 5.0,
}
_UNKNOWN_SECONDS = 30.0  # a kernel module missing from SECONDS
_PROJECT = ("poker.", "strategies.", "analysis.")

_lock = threading.Lock()
_announced: set[str] = set()
_groups: list[tuple[str, ...]] = []
_recorders: list[list[str]] = []
_installed = False


def enabled() -> bool:
    """Whether the notice is printed: ``$ACPC_ARENA_COMPILE_NOTICE`` if set, else not under pytest."""
    setting = os.environ.get(ENV, "")
    if setting in ("0", "1"):
        return setting == "1"
    return "PYTEST_CURRENT_TEST" not in os.environ


def _duration(seconds: float) -> str:
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {10 * round(seconds / 10):.0f} s"
    return f"about {round(seconds / 60):.0f} min"


def notice(modules: Sequence[str], cache_dir: str | None) -> str:
    """The one line printed when the first kernel of ``modules`` starts compiling:
    what compiles and roughly how long it takes (the sum of :data:`SECONDS`)."""
    labels = [LABELS.get(module, module) for module in modules]
    named = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
    seconds = sum(SECONDS.get(module, _UNKNOWN_SECONDS) for module in modules)
    where = f"; cached in {cache_dir}" if cache_dir else ""
    return f"numba: compiling the {named} kernels, once ({_duration(seconds)} on 2 cores{where})"


def expect(*modules: str) -> None:
    """Announce ``modules`` together: a command that will compile the kernels of
    several modules calls this before it starts, so that the first compilation
    of any of them prints one line naming them all (those not yet announced in
    this process) with their summed time, and the others compile silently.
    Modules never expected are announced one line each, as they compile."""
    install()
    with _lock:
        _groups.append(tuple(modules))


def _cache_dir(dispatcher: Any) -> str | None:
    # numba's Dispatcher keeps its on-disk cache as ``_cache`` (a NullCache
    # without cache=True); Cache.cache_path is the folder. Not public: the
    # notice then leaves the folder out.
    path = getattr(getattr(dispatcher, "_cache", None), "cache_path", None)
    return str(path) if path else None


class _Listener(event.Listener):
    def on_start(self, ev: event.Event) -> None:
        try:
            self._started(ev)
        except Exception:  # an exception here would fail the compilation itself
            pass

    def _started(self, ev: event.Event) -> None:
        data = ev.data if isinstance(ev.data, dict) else {}
        dispatcher = data.get("dispatcher")
        function = getattr(dispatcher, "py_func", None)
        module = str(getattr(function, "__module__", "") or "")
        if not module.startswith(_PROJECT):
            return
        with _lock:
            for names in _recorders:
                names.append(f"{module}.{getattr(function, '__qualname__', '?')}")
            if _recorders or module in _announced or not enabled():
                return
            group = next((g for g in _groups if module in g), (module,))
            modules = [m for m in group if m not in _announced]
            _announced.update(modules)
        # tqdm.write clears any open progress bar, prints the line and redraws the
        # bar below it: a kernel that compiles while a bar runs never splits the bar.
        tqdm.write(notice(modules, _cache_dir(dispatcher)), file=sys.stderr)
        sys.stderr.flush()

    def on_end(self, ev: event.Event) -> None:
        pass


def install() -> None:
    """Listen for numba compilations (once per process; the kernel modules call this on import)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    register: Callable[[str, event.Listener], None] = event.register  # untyped in numba
    register("numba:compile", _Listener())


@contextmanager
def recording() -> Iterator[list[str]]:
    """Collect ``module.function`` of this project's kernels compiled inside the
    block (in order; nested compilations too), printing no notice meanwhile."""
    install()
    names: list[str] = []
    with _lock:
        _recorders.append(names)
    try:
        yield names
    finally:
        with _lock:
            _recorders.remove(names)


_EVALUATOR = "poker._eval_kernels"
_ABSTRACTION = "strategies.cfr.abstraction._kernels"
_MULTIPLAYER = "strategies.cfr.solvers.multiplayer"
#: The kernel modules a two-player solve compiles, by ``--algorithm`` (recorded
#: from ``arena warmup``'s steps on a cold cache; three-player games in :func:`solve_kernels`).
_SOLVE_KERNELS = {
    "cfr": (_EVALUATOR, "strategies.cfr.tree._kernels"),
    "cfr+": (_EVALUATOR, "strategies.cfr.tree._kernels"),
    "pcs": (_EVALUATOR, _ABSTRACTION, "strategies.cfr.solvers._pcs_kernels"),
    "abstract": (_EVALUATOR, _ABSTRACTION, "strategies.cfr.solvers._abstract_kernels"),
}


def solve_kernels(algorithm: str, players: int) -> tuple[str, ...]:
    """The kernel modules ``arena solve --algorithm ALGORITHM`` compiles on a game
    of ``players`` players: what it names in one compile notice
    (:func:`expect`) when it finds them cold. Empty when unknown."""
    if algorithm == "es-mccfr":
        return (_EVALUATOR, _ABSTRACTION, "strategies.cfr.solvers._sampled_kernels", _MULTIPLAYER)
    if players == 3:
        return (_EVALUATOR, _MULTIPLAYER)
    return _SOLVE_KERNELS.get(algorithm, ())
