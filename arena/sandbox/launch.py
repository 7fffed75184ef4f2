"""The sandbox's launcher: ``python -m arena.sandbox.launch CONFIG`` (started
by :class:`arena.sandbox.Sandbox`, as root, never by hand) sets up the
confinement and starts the agent's ``startme.sh`` inside it. Three processes:

1. the launcher moves into new mount, PID, network, IPC and UTS namespaces;
   in the new network namespace (loopback only, brought up here) it opens
   the one TCP port the agent may reach, ``127.0.0.1:PORT``, and hands that
   listening socket to the runner over the control socket (the runner
   accepts on it from outside and relays each connection to the dealer:
   the agent's only way out); it mounts the agent's scratch folder, a tmpfs
   of the scratch cap owned by the agent's uid; it forks
2. the namespace's init (PID 1), which mounts a /proc of the new PID
   namespace, forks the agent and reaps what is left to it until the agent's
   first process ends; when init ends the kernel kills every other process of
   the namespace before init's parent sees it end, so the launcher's exit means
   everything the agent started is gone (init dies with the launcher too,
   by the parent-death signal); the runner gets a pidfd of init, to kill it
   without a race with the reuse of its PID;
3. the agent: a session of its own, the rlimits, a uid and gid of its own
   with no supplementary groups (:data:`UID_BASE` + the launcher's PID, so no
   other process shares its uid: its process limit is exact), then Landlock
   (read its folder and the system's programs and libraries, write only the
   scratch, TCP connect only to PORT, bind nothing, signal and reach abstract
   sockets only inside its own domain), then the seccomp filter, then
   ``execve`` of ``startme.sh 127.0.0.1 PORT AFTER...`` in its folder.

Any step that fails ends the launch with a line on the control socket
(``{"error": ...}``), which the runner raises: the agent never runs with less
confinement than this. The control socket is close-on-exec, so the runner sees
its end (EOF, no error) when the agent's ``execve`` succeeded.

The CONFIG is a JSON object: ``agent_dir``, ``startme``, ``after``, ``port``,
``scratch``, ``read_only`` (more folders the agent may read) and ``limits``
(:class:`arena.sandbox.runner.Limits`' fields), ``control`` (the control
socket's descriptor).
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any, Final, NoReturn

from arena.sandbox import landlock, seccomp
from arena.sandbox.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUTS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_SET_PDEATHSIG,
    loopback_up,
    mount,
    prctl,
    unmount,
    unshare,
)

__all__ = ["UID_BASE", "SYSTEM_PATHS", "OOM_SCORE_ADJ", "SHARED_MEMORY", "DEVICES", "probe", "main"]

#: Sandboxed agents' uids (and gids) are this plus the launcher's PID: far above
#: any account's, unique while the launcher lives (and it outlives the agent).
UID_BASE: Final = 1_500_000_000
#: What every agent may read and run: the system's programs, libraries and settings.
SYSTEM_PATHS: Final = tuple(Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc"))
#: The most the kernel's out-of-memory killer may favour a process: sandboxed
#: agents go before the service and anything else on the machine.
OOM_SCORE_ADJ: Final = 1000
#: Where POSIX shared memory lives; each agent has its own (:func:`_enter`).
SHARED_MEMORY: Final = Path("/dev/shm")
#: The devices an agent may read and write.
DEVICES: Final = tuple(Path(f"/dev/{name}") for name in ("null", "zero", "full", "random", "urandom"))
_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
#: init's exit status for an agent killed by a signal (as a shell says it).
_SIGNALLED: Final = 128


def _said(error: OSError) -> str:
    """An error in one line without its ``[Errno N]``: what failed and why."""
    if error.strerror is None:
        return str(error)
    return f"{error.filename}: {error.strerror}" if error.filename else error.strerror


def _fail(control: socket.socket, message: str) -> NoReturn:
    try:
        control.sendall(json.dumps({"error": message}).encode() + b"\n")
    finally:
        os._exit(125)


def _listen(port: int) -> socket.socket:
    """The agent's one way out: ``127.0.0.1:port`` in the new network namespace."""
    loopback_up()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    return listener


def _set_limits(limits: dict[str, int]) -> None:
    """The rlimits: CPU seconds (SIGXCPU, then SIGKILL a second later), address
    space, processes and threads of the uid, a file's size, open files, no core."""
    for which, soft, hard in (
        (resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1),
        (resource.RLIMIT_AS, limits["memory"], limits["memory"]),
        (resource.RLIMIT_NPROC, limits["procs"], limits["procs"]),
        (resource.RLIMIT_FSIZE, limits["file_size"], limits["file_size"]),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        resource.setrlimit(which, (soft, hard))


def _confine(config: dict[str, Any], uid: int) -> None:
    """Everything between fork and exec for the agent, in this order: a root
    process builds the Landlock rules (it may open any path to name it), a
    session of its own, first in line for the out-of-memory killer, the
    limits, then the uid (dropping every capability), then Landlock and seccomp."""
    rules = landlock.Ruleset()
    rules.allow_paths(SYSTEM_PATHS, landlock.READ)
    rules.allow_paths([Path(p) for p in config["read_only"]], landlock.READ)
    rules.allow_path(Path(config["agent_dir"]), landlock.READ)
    rules.allow_paths(DEVICES, landlock.READ_WRITE_FILE)
    rules.allow_path(Path(config["scratch"]), landlock.ALL_FS)
    rules.allow_paths([SHARED_MEMORY], landlock.ALL_FS)  # its own (see _enter)
    rules.allow_connect(config["port"])
    os.setsid()
    with open("/proc/self/oom_score_adj", "w") as oom:  # out of memory, the kernel kills agents first
        oom.write(str(OOM_SCORE_ADJ))
    _set_limits(config["limits"])
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    rules.restrict_self()
    seccomp.install()
    os.chdir(config["agent_dir"])


def _agent(config: dict[str, Any], control: socket.socket, uid: int) -> NoReturn:
    try:
        _confine(config, uid)
    except (OSError, ValueError) as error:  # ValueError: a limit setrlimit refuses
        _fail(control, f"cannot confine the agent: {_said(error) if isinstance(error, OSError) else error}")
    scratch = config["scratch"]
    env = {"PATH": _PATH, "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8"}
    argv = [config["startme"], "127.0.0.1", str(config["port"]), *config["after"]]
    try:
        os.execve(config["startme"], argv, env)
    except OSError as error:
        _fail(control, f"cannot run {Path(config['startme']).name}: {error.strerror}")


def _init(config: dict[str, Any], control: socket.socket, uid: int, alive: int) -> NoReturn:
    """PID 1 of the agent's namespace: /proc, the agent, then reap until it ends.
    ``alive`` is a pipe the launcher holds open while it lives (PID 1 cannot
    see its parent's PID: its ``getppid`` is 0)."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([alive], [], [], 0)[0]:  # EOF: the launcher died before the line above
            os._exit(1)
        os.close(alive)
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        agent = os.fork()
    except OSError as error:
        _fail(control, f"cannot start the agent's namespace: {_said(error)}")
    if agent == 0:
        _agent(config, control, uid)
    control.close()
    while True:
        pid, status = os.wait()
        if pid == agent:
            _exit_as(status)


def _enter(port: int, scratch: str, tmpfs_options: str, uid: int) -> socket.socket:
    """The namespaces, the listening socket of the agent's port, its scratch
    tmpfs, and its own ``/dev/shm``: POSIX shared memory and semaphores
    (Python's multiprocessing locks) live there, in a folder every user
    shares; the agent's is a folder of its scratch (within its cap) bound there."""
    unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    listener = _listen(port)
    mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_options)
    if SHARED_MEMORY.is_dir():
        own = os.path.join(scratch, ".shm")
        os.mkdir(own, 0o700)
        os.chown(own, uid, uid)
        mount(own, str(SHARED_MEMORY), None, MS_BIND)
    return listener


def _exit_as(status: int) -> NoReturn:
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else _SIGNALLED + os.WTERMSIG(status))


def probe() -> NoReturn:
    """Whether the namespaces, mounts and loopback can be set up here (a
    container without the right to may refuse them): the steps of a launch
    before the agent's own, with a /proc mounted in the new PID namespace;
    exit 0, or print why and exit 125."""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            _enter(0, scratch, "size=4096", 0).close()
            if SHARED_MEMORY.is_dir():
                unmount(str(SHARED_MEMORY))
            unmount(scratch)
            child = os.fork()
            if child == 0:
                try:
                    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                finally:
                    os._exit(0 if os.getpid() == 1 else 1)
            if os.waitpid(child, 0)[1] != 0:
                raise OSError("mount proc in a new PID namespace: failed")
    except OSError as error:
        print(f"cannot set up the sandbox: {_said(error)}", flush=True)
        os._exit(125)
    os._exit(0)


def main(argv: list[str]) -> NoReturn:
    """Launch the agent that ``argv[0]`` (the JSON config) describes; exit with
    its exit status (128 + N for a signal N), 125 when it could not be
    confined. ``--probe``: :func:`probe`."""
    if argv == ["--probe"]:
        probe()
    config = json.loads(argv[0])
    control = socket.socket(fileno=config["control"])
    control.set_inheritable(False)
    uid = UID_BASE + os.getpid()
    try:
        options = f"size={config['limits']['scratch']},mode=0700,uid={uid},gid={uid}"
        listener = _enter(config["port"], config["scratch"], options, uid)
        alive, held = os.pipe()
        init = os.fork()
    except OSError as error:
        _fail(control, f"cannot set up the sandbox: {_said(error)}")
    if init == 0:
        listener.close()
        os.close(held)
        _init(config, control, uid, alive)
    os.close(alive)
    handle = os.pidfd_open(init)
    socket.send_fds(control, [json.dumps({"uid": uid}).encode() + b"\n"], [listener.fileno(), handle])
    listener.close()
    control.close()
    _exit_as(os.waitpid(init, 0)[1])


if __name__ == "__main__":
    main(sys.argv[1:])
