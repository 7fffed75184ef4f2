"""The sandbox refuses to run an agent it cannot confine, with a one-line
reason, and never runs it with less: without root, with too old a Landlock,
with a folder its uid cannot read, or when a step inside the launch fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import Limits, Sandbox, SandboxError, runner
from tests.sandbox.harness import NEEDS_SANDBOX, make_agent

pytestmark = NEEDS_SANDBOX


def test_what_this_machine_lacks_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.unavailable() is None
    monkeypatch.setattr(runner.landlock, "abi_version", lambda: 5)
    assert runner.unavailable() == (
        "the sandbox needs Landlock ABI 6 (Linux 6.12 or later, landlock among the LSMs); this kernel has 5"
    )
    monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)
    assert runner.unavailable() == "the sandbox needs root (a uid of its own for every agent, and namespaces): run arena as root"


async def test_nothing_runs_where_the_sandbox_is_unavailable(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(world, "agent", "open('ran', 'w')")
    monkeypatch.setattr(runner.landlock, "abi_version", lambda: 0)
    with pytest.raises(SandboxError, match=r"^the sandbox needs Landlock ABI 6 .* this kernel has 0$"):
        async with Sandbox(agent).open("127.0.0.1", 9):
            pass


async def test_a_failure_inside_the_launch_is_raised(world: Path) -> None:
    """The agent's execve fails inside the sandbox (startme.sh not executable):
    the launcher's reason comes back as the error, and the block never runs."""
    agent = make_agent(world, "agent", "")
    (agent / "startme.sh").chmod(0o644)
    with pytest.raises(SandboxError) as raised:
        async with Sandbox(agent).open("127.0.0.1", 9):
            pytest.fail("the block ran")
    assert str(raised.value) == "cannot run startme.sh: Permission denied"


async def test_a_limit_the_kernel_refuses_is_raised(world: Path) -> None:
    """More open files than the kernel allows a process (fs.nr_open): the
    agent's confinement fails before its execve, and says so."""
    agent = make_agent(world, "agent", "")
    with pytest.raises(SandboxError, match="^cannot confine the agent: not allowed to raise maximum limit$"):
        async with Sandbox(agent, Limits(open_files=1 << 30)).open("127.0.0.1", 9):
            pytest.fail("the block ran")


def test_a_folder_the_agent_cannot_read_is_refused(world: Path) -> None:
    agent = make_agent(world, "agent", "")
    (agent / "startme.sh").chmod(0o750)
    with pytest.raises(SandboxError, match=f"^the agent runs as a uid of its own, and {agent}/startme.sh is not readable by every user$"):
        Sandbox(agent)
    (agent / "startme.sh").unlink()
    with pytest.raises(SandboxError, match=f"^{agent} has no startme.sh$"):
        Sandbox(agent)


def test_limits_are_positive() -> None:
    with pytest.raises(ValueError, match="^the sandbox's procs must be at least 1, not 0$"):
        Limits(procs=0)


def test_the_probe_says_why_namespaces_cannot_be_had() -> None:
    """As in a container that forbids them: here the sandbox's own seccomp
    filter refuses ``unshare`` to the probe, which says so and fails."""
    code = "from arena.sandbox import launch, seccomp; seccomp.install(); launch.probe()"
    probed = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=False)
    assert (probed.returncode, probed.stdout) == (125, "cannot set up the sandbox: unshare: Operation not permitted\n")
