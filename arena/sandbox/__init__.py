"""The sandbox for submitted agents: a stranger's ``startme.sh`` run with its
own uid, in its own namespaces, under Landlock, a seccomp filter and rlimits,
able to reach only its own dealer's port, and ended with everything it
started when its match is over. :class:`Sandbox` is the runner
(:mod:`arena.sandbox.runner`), :mod:`arena.sandbox.launch` the confining
launcher; docs/sandbox.md says why this way and what it guards.
"""

from __future__ import annotations

from arena.sandbox.runner import (
    Confined as Confined,
    Limits as Limits,
    MAX_CONNECTIONS as MAX_CONNECTIONS,
    STARTME as STARTME,
    Sandbox as Sandbox,
    SandboxError as SandboxError,
    unavailable as unavailable,
)
