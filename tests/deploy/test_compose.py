"""The stack of docker-compose.yml, for real: build the image, ``up`` with two Dask
workers, create a user, request a match through the published API port and play it
with our ``arena agent`` from this machine, run a small tournament on the two
workers, ``down -v``.

It talks to the stack only through ports published on 127.0.0.1 (and the Docker
CLI); the containers find each other by service name on the network compose makes
for this test's project. Where no Docker engine runs and the test may start one
(root, ``dockerd`` installed) it starts its own, with its data, sockets and images
under a folder of its own, and stops it and removes that folder at the end. No
registry is reachable here, so unless ``ARENA_BASE_IMAGE`` names a base image, the
test makes one from Debian's packages with ``mmdebstrap``, with this machine's extra
CA certificates in it so that pip inside the build trusts HTTPS.

Minutes long (the image installs the pinned dependencies and compiles the numba
kernels), so ``make test`` skips it: it runs in its own step, ``make compose-test``
(``.ci/compose``), which installs Docker with apt where it can and sets
``ARENA_COMPOSE_TEST=1``. Without a way to run Docker it skips, saying why; in CI
(``ARENA_CI=1``) it fails instead, naming what is missing (:mod:`needs`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import needs

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    os.environ.get("ARENA_COMPOSE_TEST") != "1",
    reason="the compose stack test runs in its own step: make compose-test",
)

BASE_IMAGE = "local/debian-python:12"
EXTRA_CA = Path("/usr/local/share/ca-certificates")
MATCH_PORTS = 4  # the published match-port range: enough for the test's one match
BUILD_TIMEOUT_S = 1800  # the pinned dependencies and every numba kernel, on 2 busy cores
TOURNAMENT = {
    "game": "leduc",
    "hands": 20,
    "series": 1,
    "seed": 5,
    "bots": {"cfr": "leduc-cfr", "caller": "always-call", "raiser": "always-raise", "random": "random"},
}
MATCH = {"game": "leduc", "opponent": "leduc-cfr", "hands": 30, "seed": 9}


def _run(argv: list[str], env: dict[str, str], timeout: float, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """A command whose failure fails the test with its own last words."""
    result = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-25:]
        pytest.fail(f"{' '.join(argv[:6])} ... exited {result.returncode}:\n" + "\n".join(tail))
    return result


# -- the engine -------------------------------------------------------------------------


@dataclass
class Engine:
    """A Docker engine to use: ``env`` points the CLI at it; ``process`` and
    ``folder`` are set when this test started it (and must stop and remove it)."""

    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    folder: Path | None = None
    made_bridge: bool = False
    firewall: bytes | None = None  # iptables-save before dockerd added its chains and rules


def _answers(env: dict[str, str]) -> bool:
    try:
        return subprocess.run(["docker", "info"], env=env, capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _bridge_exists() -> bool:
    return Path("/sys/class/net/docker0").exists()


def _start_dockerd(env: dict[str, str]) -> Engine:
    """Our own ``dockerd``: its images, containers and volumes under a temporary
    folder, its socket there too, so that stopping it and removing the folder
    removes all the test made; the bridge and firewall rules it adds to the
    machine are taken back too."""
    folder = Path(tempfile.mkdtemp(prefix="arena-dockerd-"))
    made_bridge = not _bridge_exists()
    saved = subprocess.run(["iptables-save"], capture_output=True) if shutil.which("iptables-save") else None
    firewall = saved.stdout if saved is not None and saved.returncode == 0 else None
    log = (folder / "dockerd.log").open("wb")
    argv = [
        "dockerd",
        f"--data-root={folder / 'data'}",
        f"--exec-root={folder / 'exec'}",
        f"--pidfile={folder / 'dockerd.pid'}",
        f"--host=unix://{folder / 'docker.sock'}",
    ]
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    engine = Engine({**env, "DOCKER_HOST": f"unix://{folder / 'docker.sock'}"}, process, folder, made_bridge, firewall)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            reason = _last_error(folder / "dockerd.log")
            _stop_dockerd(engine)
            needs.missing("Docker", f"dockerd cannot run here: {reason}")
        if _answers(engine.env):
            return engine
        time.sleep(1)
    reason = _last_error(folder / "dockerd.log")
    _stop_dockerd(engine)
    needs.missing("Docker", f"dockerd did not answer within 90 s: {reason}")


def _last_error(log: Path) -> str:
    """dockerd's last fatal or error line, its message alone (or its last line)."""
    lines = log.read_text(errors="replace").strip().splitlines() or ["(no output)"]
    chosen = next((line for line in reversed(lines) if "level=fatal" in line or "level=error" in line), lines[-1])
    return chosen.split('msg="', 1)[-1].rstrip('"')[:300]


def _stop_dockerd(engine: Engine) -> None:
    if engine.process is not None and engine.process.poll() is None:
        engine.process.send_signal(signal.SIGTERM)
        try:
            engine.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            engine.process.kill()
            engine.process.wait()
    if engine.folder is not None:
        # overlay mounts dockerd left behind (it unmounts them on a clean stop)
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for mount in sorted((m for m in mounts if m.startswith(str(engine.folder))), reverse=True):
            subprocess.run(["umount", "-l", mount], capture_output=True)
        shutil.rmtree(engine.folder, ignore_errors=True)
    if engine.made_bridge and _bridge_exists():
        subprocess.run(["ip", "link", "delete", "docker0"], capture_output=True)
    if engine.firewall is not None:  # dockerd leaves its chains, NAT rules and FORWARD policy DROP
        subprocess.run(["iptables-restore"], input=engine.firewall, capture_output=True)


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    """The machine's running engine, else one this test starts (root and
    ``dockerd`` needed); skips (fails in CI), saying why, where neither can be had."""
    env = dict(os.environ)
    if shutil.which("docker") is None:
        needs.missing("Docker", "no docker CLI: make compose-test installs Debian's docker.io where it may (root, apt-get)")
    if _answers(env):
        yield Engine(env)
        return
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        needs.missing("Docker", "no Docker engine answers, and this test cannot start dockerd (needs root and dockerd installed)")
    started = _start_dockerd(env)
    try:
        yield started
    finally:
        _stop_dockerd(started)


def _compose_command(env: dict[str, str]) -> list[str]:
    """``docker compose`` (v2) where the CLI has it, else Debian's ``docker-compose``."""
    if subprocess.run(["docker", "compose", "version"], env=env, capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose") is not None:
        return ["docker-compose"]
    needs.missing("Docker Compose", "neither `docker compose` nor docker-compose is installed")


@pytest.fixture(scope="module")
def base_image(engine: Engine) -> Iterator[str]:
    """``ARENA_BASE_IMAGE`` if set; else Debian bookworm's python3 from Debian's
    packages (made here, with the machine's extra CAs and pip told to use the
    system's certificate store, and removed afterwards if this test made it)."""
    named = os.environ.get("ARENA_BASE_IMAGE")
    if named:
        yield named
        return
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], env=engine.env, capture_output=True).returncode == 0:
        yield BASE_IMAGE
        return
    if shutil.which("mmdebstrap") is None:
        needs.missing("mmdebstrap", f"no base image: set ARENA_BASE_IMAGE, or install mmdebstrap to make {BASE_IMAGE}")
    hooks = []
    certificates = sorted(str(path) for path in EXTRA_CA.glob("*.crt")) if EXTRA_CA.is_dir() else []
    if certificates:
        hooks = [
            f"--customize-hook=copy-in {' '.join(certificates)} {EXTRA_CA}",
            '--customize-hook=chroot "$1" update-ca-certificates',
        ]
    # The machine's own apt sources, so the image comes from wherever this machine's packages do.
    sources = [str(path) for path in (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")) if path.is_file()]
    debootstrap = subprocess.Popen(
        ["mmdebstrap", "--variant=minbase", "--include=python3,python3-venv,python3-pip,ca-certificates", *hooks, "bookworm", "-", *sources[:1]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    changes = ["ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    imported = subprocess.run(
        ["docker", "import", *(f"--change={change}" for change in changes), "-", BASE_IMAGE],
        env=engine.env,
        stdin=debootstrap.stdout,
        capture_output=True,
        timeout=600,
    )
    assert debootstrap.stdout is not None and debootstrap.stderr is not None
    debootstrap.stdout.close()
    errors = debootstrap.stderr.read().decode(errors="replace")
    debootstrap.stderr.close()
    if debootstrap.wait() != 0 or imported.returncode != 0:
        pytest.fail(f"making {BASE_IMAGE} failed:\n{errors[-2000:]}{imported.stderr.decode(errors='replace')[-2000:]}")
    try:
        yield BASE_IMAGE
    finally:
        subprocess.run(["docker", "image", "rm", "--force", BASE_IMAGE], env=engine.env, capture_output=True)


# -- the stack --------------------------------------------------------------------------


@dataclass
class Stack:
    compose: list[str]  # the compose command with this test's project
    env: dict[str, str]
    api: str  # http://127.0.0.1:PORT
    match_ports: range

    def run(self, *argv: str, timeout: float = 300, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return _run([*self.compose, *argv], self.env, timeout, stdin)


def _free_ports(count: int) -> list[int]:
    """``count`` consecutive ports free on 127.0.0.1, above the ephemeral ones' usual start."""
    for start in range(21000, 31000, 97):
        sockets = []
        try:
            for port in range(start, start + count):
                probe = socket.socket()
                sockets.append(probe)
                probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for probe in sockets:
                probe.close()
        return list(range(start, start + count))
    raise AssertionError("no free ports on 127.0.0.1")


@pytest.fixture(scope="module")
def stack(engine: Engine, base_image: str) -> Iterator[Stack]:
    """The stack built and up with two workers, under a project name of its own;
    ``down -v --rmi all`` afterwards (containers, network, volume and image)."""
    api_port, *match_ports = _free_ports(1 + MATCH_PORTS)
    project = f"arenastack{os.getpid()}"
    env = {
        **engine.env,
        "COMPOSE_PROJECT_NAME": project,
        "ARENA_BASE_IMAGE": base_image,
        "ARENA_TAG": project,
        "ARENA_PORT": str(api_port),
        "ARENA_MATCH_PORTS": f"{match_ports[0]}-{match_ports[-1]}",
    }
    compose = [*_compose_command(engine.env), "--project-directory", str(ROOT), "-f", str(ROOT / "docker-compose.yml")]
    made = Stack(compose, env, f"http://127.0.0.1:{api_port}", range(match_ports[0], match_ports[-1] + 1))
    try:
        made.run("build", timeout=BUILD_TIMEOUT_S)
        made.run("up", "--detach", "--scale", "worker=2", timeout=300)
        yield made
    finally:
        subprocess.run([*compose, "down", "--volumes", "--rmi", "all", "--remove-orphans"], env=env, capture_output=True, timeout=300)


def test_the_image_runs_arena_as_a_user_not_root(stack: Stack) -> None:
    uid = stack.run("run", "--rm", "-T", "--no-deps", "arena", "id", "-u").stdout.split()[-1]
    assert uid != "0"
    usage = stack.run("run", "--rm", "-T", "--no-deps", "arena", "arena", "--help").stdout
    assert "tournament" in usage and "agent" in usage


def test_a_tournament_runs_on_two_dask_workers_by_service_name(stack: Stack, tmp_path: Path) -> None:
    """The same tournament on the compose scheduler's two workers and on a local
    pool here: the same results.csv, both workers having played matches."""
    output = "/data/tournaments/stack"
    config = _toml({**TOURNAMENT, "output": output})
    script = "mkdir -p /data/tournaments && cat > /data/tournaments/stack.toml && arena tournament /data/tournaments/stack.toml --dask tcp://scheduler:8786 --bootstrap 0"
    played = stack.run("run", "--rm", "-T", "--no-deps", "arena", "sh", "-c", script, stdin=config, timeout=600).stdout
    assert "leduc: 6 of 6 duplicate matches, 20 hands a seating, 1 series from seed 5" in played
    remote = stack.run("run", "--rm", "-T", "--no-deps", "arena", "cat", f"{output}/results.csv").stdout

    local_config = tmp_path / "local.toml"
    local_config.write_text(_toml({**TOURNAMENT, "output": str(tmp_path / "out"), "workers": 2}))
    _run([sys.executable, "-m", "arena.cli", "tournament", str(local_config), "--bootstrap", "0"], dict(os.environ), 600)
    assert _rows(remote) == _rows((tmp_path / "out" / "results.csv").read_text())

    workers = stack.run("run", "--rm", "-T", "--no-deps", "arena", "python", "-c", _PLAYED_BY_WORKER).stdout
    played_by = json.loads(workers.strip().splitlines()[-1])
    assert len(played_by) == 2 and all(played_by.values())  # both workers played
    assert sorted(key for keys in played_by.values() for key in keys) == sorted(_rows_keys(remote))


# Each Dask worker's finished tasks that are tournament matches (key arena-match-<match>).
_PLAYED_BY_WORKER = """
import json
from dask.distributed import Client
def played(dask_worker):
    return sorted({str(entry[0]).removeprefix("arena-match-") for entry in dask_worker.state.log
                   if len(entry) > 2 and entry[2] == "memory" and str(entry[0]).startswith("arena-match-")})
with Client("tcp://scheduler:8786", timeout=30) as client:
    print(json.dumps(client.run(played)))
"""


def _toml(document: dict[str, Any]) -> str:
    lines = [f"{key} = {json.dumps(value)}" for key, value in document.items() if key != "bots"]
    return "\n".join([*lines, "[bots]", *(f"{name} = {json.dumps(spec)}" for name, spec in document["bots"].items())]) + "\n"


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _rows_keys(text: str) -> set[str]:
    return {row[0] for row in _rows(text)[1:]}


# -- the service --------------------------------------------------------------------------


def _request(stack: Stack, method: str, path: str, token: str | None = None, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One API call through the published port: (status, JSON body or text)."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(stack.api + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw, kind = response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        status, raw, kind = error.code, error.read(), error.headers.get("Content-Type", "")
        error.close()
    text = raw.decode(errors="replace")
    return status, json.loads(text) if "json" in kind else text


def _wait_for_api(stack: Stack) -> None:
    """The service answers (a request without a token is refused: 401)."""
    deadline = time.monotonic() + 120
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            status, _ = _request(stack, "GET", "/api/matches")
        except (OSError, urllib.error.URLError) as error:
            last = str(error)
        else:
            assert status == 401
            return
        time.sleep(1)
    logs = subprocess.run([*stack.compose, "logs", "--tail", "20", "arena"], env=stack.env, capture_output=True, text=True).stdout
    pytest.fail(f"the API on {stack.api} did not answer in 120 s ({last}):\n{logs}")


def test_a_user_plays_a_hosted_bot_through_the_published_port(stack: Stack) -> None:
    _wait_for_api(stack)
    published = stack.run("port", "arena", "8000").stdout.strip()
    assert published == stack.api.removeprefix("http://")  # on 127.0.0.1 only
    added = stack.run("exec", "-T", "arena", "arena", "users", "add", "stacktester", "--data", "/data").stdout
    token = added.strip().splitlines()[-1].split()[-1]  # the token: the last word of the last line

    status, match = _request(stack, "POST", "/api/matches", token, MATCH)
    assert status == 201, match
    assert set(match) >= {"id", "host", "ports"}
    port = match["ports"][0]
    assert port in stack.match_ports  # the container's port is the published one

    # Once the seating waits, another local user scans the port: through Docker's proxy every
    # connection comes from the gateway, so only the seat key tells the owner's agent apart.
    deadline = time.monotonic() + 120
    while _request(stack, "GET", f"/api/matches/{match['id']}", token)[1]["next_port"] != port:
        assert time.monotonic() < deadline, "the match's seating never waited for the agent"
        time.sleep(0.5)
    for probe in (b"VERSION:2.0.0\r\n", b"#KEY:" + b"0" * 32 + b"\r\nVERSION:2.0.0\r\n"):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as scanner:
            scanner.sendall(probe)
            try:
                assert scanner.recv(100) == b""  # dropped, the seat still open
            except ConnectionResetError:
                pass

    # Our agent, from this machine, through the port published on 127.0.0.1, with the seat's key.
    agent = [sys.executable, "-m", "arena.cli", "agent", "leduc", "127.0.0.1", str(port), "--strategy", "always-call", "--seed", "1"]
    _run(agent, {**os.environ, "ARENA_SEAT_KEY": match["seat_keys"][0]}, 300)

    deadline = time.monotonic() + 120
    while True:
        status, state = _request(stack, "GET", f"/api/matches/{match['id']}", token)
        assert status == 200, state
        if state["status"] in ("finished", "aborted") or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert state["status"] == "finished", state
    assert state["result"]["hands"] == MATCH["hands"]

    status, log = _request(stack, "GET", f"/api/matches/{match['id']}/log", token)
    assert status == 200
    assert sum(line.startswith("STATE:") for line in log.splitlines()) == MATCH["hands"]
    status, _ = _request(stack, "GET", f"/api/matches/{match['id']}", "not-" + token)
    assert status == 401
