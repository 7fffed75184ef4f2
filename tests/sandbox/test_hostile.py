"""Hostile agents in the sandbox: each tries one thing a submitted agent must
not do (issue 47's faults: read the service's database or another agent's
files, connect to the API or another match's port, fork or allocate or fill
the disk without bound, spin the CPU, leave a process behind, see or signal
the host's processes), reports how it went over its one connection, and the
test checks that it was stopped and that nothing outside was touched. Each
fails where the confinement is missing: the try then succeeds.
"""

from __future__ import annotations

import errno
import os
import signal
from functools import partial
from pathlib import Path

import trio

from arena.sandbox import Limits
from tests.sandbox.harness import NEEDS_SANDBOX, make_agent, run_agent, world_readable

pytestmark = NEEDS_SANDBOX

_MIB = 1 << 20


async def test_reads_its_own_folder_and_nothing_else(world: Path) -> None:
    """Nor the service's database, another agent's files, or the folder above
    its own, all readable by every user: only what it is given besides."""
    (world / "service").mkdir(mode=0o755)
    database = world_readable(world / "service" / "arena.db", "users and tokens")
    other = make_agent(world, "other", "")
    world_readable(other / "strategy.txt", "someone else's work")
    (world / "library").mkdir(mode=0o755)
    library = world_readable(world / "library" / "module.py", "shared = 1")
    agent = make_agent(
        world,
        "reader",
        f"""
        report(
            attempt(lambda: open("agent.py").read(6)),
            attempt(lambda: open({str(database)!r}).read()),
            attempt(lambda: open({str(other / "strategy.txt")!r}).read()),
            attempt(lambda: os.listdir({str(world)!r})),
            attempt(lambda: open({str(library)!r}).read()),
            attempt(lambda: open("written-here", "w")),
            attempt(lambda: open(os.environ["TMPDIR"] + "/notes", "w").write("mine")),
        )
        """,
    )
    outcome = await run_agent(agent, read_only=[world / "library"])  # a folder every agent may read
    denied = f"PermissionError {errno.EACCES}"
    assert outcome.report == ["ok 'import'", denied, denied, denied, "ok 'shared = 1'", denied, "ok 4"]
    assert outcome.status == 0
    assert not (agent / "written-here").exists()


async def test_connects_only_to_its_own_dealer(world: Path) -> None:
    """The API's port and another match's port on 127.0.0.1 (listeners of
    this test), another address, a Unix socket: none is reachable."""
    knocks = []

    async def listener(stream: trio.SocketStream) -> None:
        knocks.append(stream)

    async with trio.open_nursery() as nursery:
        api, other_match = [
            (await nursery.start(partial(trio.serve_tcp, listener, 0, host="127.0.0.1")))[0].socket.getsockname()[1] for _ in range(2)
        ]
        agent = make_agent(
            world,
            "knocker",
            f"""
            report(
                attempt(lambda: socket.create_connection(("127.0.0.1", {api}), timeout=2)),
                attempt(lambda: socket.create_connection(("127.0.0.1", {other_match}), timeout=2)),
                attempt(lambda: socket.create_connection(("192.0.2.1", PORT), timeout=2)),
                attempt(lambda: socket.socket(socket.AF_UNIX).connect("/run/any.sock")),
                attempt(lambda: socket.socket().bind(("127.0.0.1", 0)) or "bound"),
            )
            """,
        )
        outcome = await run_agent(agent)
        nursery.cancel_scope.cancel()
    denied, no_family, unreachable = (
        f"PermissionError {errno.EACCES}",
        f"OSError {errno.EAFNOSUPPORT}",
        f"OSError {errno.ENETUNREACH}",
    )
    assert outcome.report == [denied, denied, unreachable, no_family, denied]
    assert knocks == []


async def test_cannot_see_or_signal_other_processes(world: Path) -> None:
    agent = make_agent(
        world,
        "signaller",
        f"""
        report(
            attempt(lambda: os.kill({os.getpid()}, 0)),
            attempt(lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit())),
            attempt(lambda: os.kill(1, {int(signal.SIGKILL)})),
        )
        """,
    )
    outcome = await run_agent(agent)
    # PID 1 is its namespace's init (root's, and outside its Landlock domain); 2 the agent itself
    assert outcome.report == [f"ProcessLookupError {errno.ESRCH}", "ok [1, 2]", f"PermissionError {errno.EPERM}"]


async def test_a_fork_bomb_stops_at_the_process_cap(world: Path) -> None:
    agent = make_agent(
        world,
        "forker",
        """
        import time
        children = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
        except OSError as error:
            report(f"{children} {error.errno}")
        """,
    )
    outcome = await run_agent(agent, Limits(procs=12))
    assert outcome.report == [f"11 {errno.EAGAIN}"]  # itself and 11 children: the cap of 12
    assert outcome.left == []


async def test_a_4_gib_allocation_is_refused(world: Path) -> None:
    """Refused by its address space limit; and should the machine run out of
    memory all the same, the kernel kills sandboxed agents first."""
    agent = make_agent(
        world,
        "glutton",
        "report(attempt(lambda: len(bytearray(4 << 30))), open('/proc/self/oom_score_adj').read().strip())",
    )
    outcome = await run_agent(agent)  # the default limits: 2 GiB of address space
    assert outcome.report == ["MemoryError", "1000"]


async def test_the_disk_fills_only_to_the_scratch_cap(world: Path) -> None:
    agent = make_agent(
        world,
        "filler",
        """
        def fill(path, count):
            written = 0
            try:
                with open(path, "wb") as file:
                    for _ in range(count):
                        written += file.write(bytes(1 << 20))
                        file.flush()
            except OSError as error:
                return f"{written >> 20} MiB then {error.errno}"
            return f"{written >> 20} MiB"

        scratch = os.environ["TMPDIR"]
        report(fill(scratch + "/big", 3), fill(scratch + "/fill", 100))
        """,
    )
    outcome = await run_agent(agent, Limits(scratch=8 * _MIB, file_size=2 * _MIB))
    # one file stops at the file size cap, the folder at the scratch cap (2 MiB of 8 taken by the first)
    assert outcome.report == [f"2 MiB then {errno.EFBIG}", f"2 MiB then {errno.EFBIG}"]
    outcome = await run_agent(agent, Limits(scratch=8 * _MIB, file_size=64 * _MIB))
    assert outcome.report == ["3 MiB", f"5 MiB then {errno.ENOSPC}"]


async def test_a_cpu_spinner_is_killed_at_its_cap(world: Path) -> None:
    agent = make_agent(world, "spinner", "report('spinning')\nwhile True:\n    pass\n")
    outcome = await run_agent(agent, Limits(cpu_s=1))
    assert outcome.report == ["spinning"]
    assert outcome.status == 128 + signal.SIGXCPU


async def test_no_process_outlives_the_agent(world: Path) -> None:
    """A child in a session of its own (a daemon's double fork) dies with the agent."""
    agent = make_agent(
        world,
        "leaver",
        """
        import time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
        os.wait()
        report("left one behind")
        """,
    )
    outcome = await run_agent(agent)
    assert outcome.report == ["left one behind"]
    assert outcome.status == 0
    assert outcome.left == []


async def test_a_hanging_agent_is_ended_with_all_it_started(world: Path) -> None:
    agent = make_agent(
        world,
        "sleeper",
        """
        import time
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                break
        report("asleep")
        time.sleep(60)
        """,
    )
    outcome = await run_agent(agent, lines=4)  # then the test ends it
    assert outcome.status is None
    assert outcome.report.count("asleep") == 4
    assert outcome.left == []


async def test_threads_subprocesses_and_multiprocessing_work_with_a_dev_shm_of_its_own(world: Path) -> None:
    """What an agent may do works inside (multiprocessing's locks need
    /dev/shm), and the /dev/shm it sees is its own, not the one every user shares."""
    host_file = world_readable(Path("/dev/shm") / f"sandbox-test-{os.getpid()}", "the host's")
    agent = make_agent(
        world,
        "worker",
        """
        import multiprocessing, subprocess, threading
        done = []
        thread = threading.Thread(target=lambda: done.append("thread"))
        thread.start()
        thread.join()
        report(
            done[0],
            attempt(lambda: subprocess.run(["sh", "-c", "echo child"], capture_output=True).stdout),
            attempt(lambda: multiprocessing.Pool(2).map(abs, [-1, -2])),
            attempt(lambda: os.listdir("/dev/shm")),
        )
        """,
    )
    try:
        outcome = await run_agent(agent)
    finally:
        host_file.unlink()
    assert outcome.report == ["thread", "ok b'child\\n'", "ok [1, 2]", "ok []"]
