"""One line on stderr when numba compiles this project's kernels (a cold cache).

Every kernel is ``@njit(cache=True)``: numba compiles it on the first call with
new argument types and keeps the machine code on disk (``__pycache__`` beside the
source, or ``$NUMBA_CACHE_DIR``), so later runs load it in well under a second.
The first run pays the compilation: minutes for the solver kernels on a loaded
machine. numba fires its ``numba:compile`` event only for a real compilation (a
cache load does not), so a listener on it tells exactly when the cache is cold,
and costs nothing when it is warm. The notice names the kernels (once per kernel
module and process) and where they are cached::

    numba: compiling the CFR solver kernels, once (cached in .../strategies/cfr/tree/__pycache__); this can take minutes

``python -m strategies.cfr.warmup`` compiles everything ahead. The notice is off
under pytest (tests compare stderr) unless ``ACPC_ARENA_COMPILE_NOTICE=1``;
``ACPC_ARENA_COMPILE_NOTICE=0`` turns it off everywhere.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from numba.core import event

__all__ = ["ENV", "LABELS", "enabled", "install", "notice", "recording"]

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
}
_PROJECT = ("poker.", "strategies.")

_lock = threading.Lock()
_announced: set[str] = set()
_recorders: list[list[str]] = []
_installed = False


def enabled() -> bool:
    """Whether the notice is printed: ``$ACPC_ARENA_COMPILE_NOTICE`` if set, else not under pytest."""
    setting = os.environ.get(ENV, "")
    if setting in ("0", "1"):
        return setting == "1"
    return "PYTEST_CURRENT_TEST" not in os.environ


def notice(module: str, cache_dir: str | None) -> str:
    """The line printed when ``module``'s first kernel starts compiling."""
    label = LABELS.get(module, module)
    where = f" (cached in {cache_dir})" if cache_dir else ""
    return f"numba: compiling the {label} kernels, once{where}; this can take minutes"


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
            _announced.add(module)
        print(notice(module, _cache_dir(dispatcher)), file=sys.stderr, flush=True)

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
