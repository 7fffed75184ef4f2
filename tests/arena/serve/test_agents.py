"""Submitting an agent (:mod:`arena.serve.agents`, :mod:`arena.serve.archives`):
each archive rule's refusal in its words; an ACPC client uploaded, checked in
the sandbox and ``ready``, each upload a new version; a crashing one
``failed`` with its reason and output; another user's version a 404; the
cookie's upload refused from another origin; a version left checking by a
stopped service checked when it starts again; and the newest ready version
per agent, which an event takes."""

from __future__ import annotations

import io
import shutil
import stat
import tarfile
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from starlette.requests import Request

import arena.serve.agents
from arena.serve.agents import NO_SUCH_AGENT, OUTPUT_BYTES, Agents
from arena.serve.archives import ArchiveError, ArchiveRules, unpack
from arena.serve.config import ServeConfig
from arena.serve.hosting import Host
from arena.serve.httpkit import CROSS_ORIGIN, SESSION_COOKIE, RequestError
from arena.serve.store import Store
from tests.arena.serve.service_process import Service, add_user
from tests.sandbox.harness import NEEDS_SANDBOX, PRELUDE
from tests.sandbox.test_seat import ALWAYS_CALL

#: An ACPC client of Kuhn poker with the standard library (the sandbox lets an
#: agent read the system's python3, not this project's packages): the sandbox
#: tests' always-call, then a goodbye on stderr.
CALLER = PRELUDE + textwrap.dedent(ALWAYS_CALL) + 'print("caller: the match is over", file=sys.stderr)\n'
STARTME = '#!/bin/sh\nexec python3 -I agent.py "$@"\n'
#: Says a line on stdout, 20,000 bytes and its last words on stderr, and exits with status 3.
CRASHER = '#!/bin/sh\necho "loading the model"\nhead -c 20000 /dev/zero | tr "\\0" x >&2\necho >&2\necho "boom: no model file" >&2\nexit 3\n'
MAX_AGENT_BYTES = 65536


# -- archives ----------------------------------------------------------------------


def tar_gz(path: Path, entries: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info, data in entries:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def entry(name: str, data: bytes = b"", *, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, link: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    return info, data


def agent_archive(path: Path, startme: str = STARTME, top: str = "caller/") -> Path:
    """An agent's ``.tar.gz``, in one top folder as ``tar czf`` makes it (``startme.sh`` not executable: made so)."""
    return tar_gz(path, [entry(top, kind=tarfile.DIRTYPE, mode=0o700), entry(f"{top}startme.sh", startme.encode(), mode=0o600),
                         entry(f"{top}agent.py", CALLER.encode(), mode=0o600)])


def test_an_archive_unpacks_readable_by_all_with_startme_executable(tmp_path: Path) -> None:
    """In one top folder or at the top, as a .tar.gz or a .zip: the agent's
    folder is the one with startme.sh, made executable; every file readable
    by every user (the sandbox's uid is a stranger to them)."""
    folder = unpack(agent_archive(tmp_path / "a.tar.gz"), tmp_path / "a")
    assert folder == tmp_path / "a" / "caller"
    assert stat.S_IMODE((folder / "startme.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "agent.py").stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o755
    assert unpack(agent_archive(tmp_path / "b.tar.gz", top="./"), tmp_path / "b") == tmp_path / "b"
    with zipfile.ZipFile(tmp_path / "c.zip", "w") as archive:
        archive.writestr("startme.sh", STARTME)
        archive.writestr("model/weights.bin", b"\x00" * 10)
    folder = unpack(tmp_path / "c.zip", tmp_path / "c")
    assert folder == tmp_path / "c" and (folder / "model" / "weights.bin").read_bytes() == b"\x00" * 10
    assert stat.S_IMODE((folder / "startme.sh").stat().st_mode) == 0o755


REFUSED_TARS = [
    ([entry("startme.sh"), entry("/etc/cron.d/x")], "the archive holds an absolute path: '/etc/cron.d/x'"),
    ([entry("startme.sh"), entry("a/../../x")], "the archive holds a path that climbs out of it: 'a/../../x'"),
    ([entry("startme.sh"), entry("db", kind=tarfile.SYMTYPE, link="/srv/arena.db")],
     "the archive holds a link (links are refused): 'db'"),
    ([entry("startme.sh"), entry("again", kind=tarfile.LNKTYPE, link="startme.sh")],
     "the archive holds a link (links are refused): 'again'"),
    ([entry("startme.sh"), entry("tty", kind=tarfile.CHRTYPE)], "the archive holds a device or a fifo: 'tty'"),
    ([entry("startme.sh"), entry("pipe", kind=tarfile.FIFOTYPE)], "the archive holds a device or a fifo: 'pipe'"),
    ([entry(f"f{k}") for k in range(4)], "the archive holds over 3 files and folders"),
    ([entry("startme.sh", b"x" * 60), entry("model", b"x" * 41)], "the archive unpacks to over 100 bytes"),
    ([entry("agent.py"), entry("bin/", kind=tarfile.DIRTYPE), entry("bin/startme.sh")],
     "the archive has no startme.sh at its top (nor in its one top folder)"),
]


@pytest.mark.parametrize(("entries", "message"), REFUSED_TARS)
def test_each_archive_rule_refuses_in_one_line_and_leaves_nothing(
    tmp_path: Path, entries: list[tuple[tarfile.TarInfo, bytes]], message: str
) -> None:
    with pytest.raises(ArchiveError) as refused:
        unpack(tar_gz(tmp_path / "a.tar.gz", entries), tmp_path / "a", ArchiveRules(max_files=3, max_unpacked=100))
    assert str(refused.value) == message
    assert not (tmp_path / "a").exists()


def test_zip_links_devices_climbing_paths_and_encryption_are_refused(tmp_path: Path) -> None:
    def refusal(name: str, mode: int, flags: int = 0) -> str:
        with zipfile.ZipFile(tmp_path / f"{name}.zip", "w") as archive:
            archive.writestr("startme.sh", STARTME)
            info = zipfile.ZipInfo(name)
            info.create_system, info.external_attr = 3, mode << 16
            archive.writestr(info, b"/srv/arena.db")
        if flags:  # zipfile writes no flags of its own choosing: set them in the last entry's two headers
            data = bytearray((tmp_path / f"{name}.zip").read_bytes())
            for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
                data[data.rfind(signature) + offset] |= flags
            (tmp_path / f"{name}.zip").write_bytes(data)
        with pytest.raises(ArchiveError) as refused:
            unpack(tmp_path / f"{name}.zip", tmp_path / name)
        return str(refused.value)

    assert refusal("db", stat.S_IFLNK | 0o777) == "the archive holds a link (links are refused): 'db'"
    assert refusal("pipe", stat.S_IFIFO | 0o644) == "the archive holds a device or a fifo: 'pipe'"
    assert refusal("../x", stat.S_IFREG | 0o644) == "the archive holds a path that climbs out of it: '../x'"
    assert refusal("secret", stat.S_IFREG | 0o644, flags=0x1) == "the archive holds an encrypted file: 'secret'"


def test_what_is_not_an_archive_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.tar").write_bytes(b"startme.sh\x00" + b"\x00" * 500)
    with pytest.raises(ArchiveError, match="^not a .tar.gz or .zip archive$"):
        unpack(tmp_path / "a.tar", tmp_path / "a")
    (tmp_path / "b.tar.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ArchiveError, match=r"^not a readable \.tar\.gz archive: "):
        unpack(tmp_path / "b.tar.gz", tmp_path / "b")


# -- the route's refusals before anything is received -------------------------------


def _request(query: str) -> Request:
    return Request({"type": "http", "method": "POST", "path": "/api/agents", "query_string": query.encode(), "headers": []})


def test_an_upload_is_refused_without_a_sandbox_and_past_the_users_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the sandbox cannot be set up, a 503 with its reason (nothing is
    received, nothing will run); a user with ``max_matches_per_user`` uploads
    being checked waits (429); a bad name or game is a 400."""
    store = Store(tmp_path / "data")
    try:
        user, _ = store.add_user("alice")
        agents = Agents(Host(ServeConfig(data=tmp_path / "data", max_matches_per_user=2), store))

        def refusal(query: str) -> tuple[int, str]:
            with pytest.raises(RequestError) as refused:
                trio.run(agents.submit, user, _request(query))
            return refused.value.status, str(refused.value)

        assert refusal("name=my%20bot&game=kuhn") == (400, "bad agent name 'my bot': 1 to 64 ASCII letters, digits, '-' or '_'")
        assert refusal("name=b&game=../x.game") == (400, "unknown game '../x.game': name a shipped game (arena games)")
        agents.busy[user.id] = 2
        assert refusal("name=b&game=kuhn") == (429, "2 of your uploads are being checked: wait for one to finish")
        monkeypatch.setattr(arena.serve.agents, "unavailable", lambda: "the sandbox needs root")
        assert refusal("name=b&game=kuhn") == (503, "submitted agents cannot run on this service: the sandbox needs root")
        assert agents.busy == {user.id: 2} and not (tmp_path / "data" / "agents").exists()
    finally:
        store.close()


# -- the newest ready version ------------------------------------------------------


def test_an_event_takes_each_agents_newest_ready_version_in_its_game(tmp_path: Path) -> None:
    store = Store(tmp_path)
    try:
        alice, bob = store.add_user("alice")[0], store.add_user("bob")[0]
        ids = iter(f"{k:016x}" for k in range(100))
        versions = [(alice, "caller", "kuhn", "ready"), (alice, "caller", "kuhn", "ready"), (alice, "caller", "kuhn", "failed"),
                    (alice, "caller", "kuhn", "checking"), (alice, "raiser", "leduc", "ready"), (bob, "caller", "kuhn", "ready"),
                    (bob, "folder", "kuhn", "failed")]
        rows = []
        for user, name, game, status in versions:
            row = store.add_agent(next(ids), user.id, name, game)
            if status != "checking":
                store.finish_agent(row.id, status, None, "")
            rows.append(row)
        assert [row.version for row in rows] == [1, 2, 3, 4, 1, 1, 1]
        assert [(row.user_id, row.name, row.version) for row in store.latest_ready("kuhn")] == [(alice.id, "caller", 2), (bob.id, "caller", 1)]
        assert [row.id for row in store.latest_ready("leduc")] == [rows[4].id]
    finally:
        store.close()


# -- through the service -----------------------------------------------------------


@pytest.fixture(scope="module")
def world() -> Iterator[Path]:
    """A folder every user can search (pytest's tmp_path is its owner's only):
    the service's data, where the sandbox's uid must reach the agent's folder."""
    root = Path(tempfile.mkdtemp(prefix="agents-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="module")
def served(world: Path) -> Iterator[Service]:
    service = Service(world / "serve", max_agent_bytes=MAX_AGENT_BYTES)
    service.data.mkdir(parents=True)
    service.tokens = {name: add_user(service.data, name) for name in ("alice", "bob")}
    yield service.start()
    service.stop()


def upload(service: Service, token: str, archive: Path, query: str = "name=caller&game=kuhn") -> tuple[int, Any]:
    return service.api("POST", f"/api/agents?{query}", token, raw=archive.read_bytes())


def checked(service: Service, token: str, agent_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status, document = service.api("GET", f"/api/agents/{agent_id}", token)
        assert status == 200, document
        if document["status"] != "checking" or time.monotonic() > deadline:
            return dict(document)
        time.sleep(0.2)


@NEEDS_SANDBOX
def test_an_agent_is_checked_ready_and_each_upload_is_a_new_version(served: Service, tmp_path: Path) -> None:
    alice, bob = served.tokens["alice"], served.tokens["bob"]
    archive = agent_archive(tmp_path / "caller.tar.gz")
    status, answer = upload(served, alice, archive)
    assert status == 201 and sorted(answer) == ["id", "name", "status", "version"]
    assert (answer["name"], answer["version"], answer["status"]) == ("caller", 1, "checking")
    first = checked(served, alice, answer["id"])
    assert (first["status"], first["reason"], first["game"]) == ("ready", None, "kuhn")
    assert first["output"] == "caller: the match is over\n"
    second = upload(served, alice, archive)[1]
    assert second["version"] == 2 and checked(served, alice, second["id"])["status"] == "ready"
    listed = served.api("GET", "/api/agents", alice)[1]["agents"]
    assert [(v["id"], v["name"], v["version"], v["status"]) for v in listed] == [
        (answer["id"], "caller", 1, "ready"), (second["id"], "caller", 2, "ready")]
    assert all("output" not in v for v in listed)
    # another user sees none of it; bob's own "caller" starts at version 1
    assert served.api("GET", f"/api/agents/{answer['id']}", bob) == (404, {"error": NO_SUCH_AGENT})
    assert served.api("GET", "/api/agents", bob) == (200, {"agents": []})
    assert upload(served, bob, archive)[1]["version"] == 1


@NEEDS_SANDBOX
def test_an_agent_that_crashes_fails_with_its_reason_and_output(served: Service, tmp_path: Path) -> None:
    token = served.tokens["alice"]
    status, answer = upload(served, token, agent_archive(tmp_path / "crasher.tar.gz", CRASHER), "name=crasher&game=kuhn")
    assert status == 201
    document = checked(served, token, answer["id"])
    assert document["status"] == "failed"
    assert document["reason"] == "the agent exited with status 3 before the match was over: boom: no model file"
    # stderr then stdout, each capped at half of OUTPUT_BYTES: its first and last 4096 bytes
    stderr = "x" * 20000 + "\nboom: no model file\n"
    assert OUTPUT_BYTES == 16384 and len(stderr) - 8192 == 11829
    assert document["output"] == f"{stderr[:4096]}\n[11829 bytes left out]\n{stderr[-4096:]}\n[stdout]\nloading the model\n"


@NEEDS_SANDBOX
def test_an_agent_that_leaves_its_seat_fails_with_the_dealers_words(served: Service, tmp_path: Path) -> None:
    """An agent that hangs up and lives on is blamed by the dealer, whose line names the seat."""
    leaver = PRELUDE + 'import time\ndealer = socket.create_connection((HOST, PORT))\ndealer.sendall(b"VERSION:2.0.0\\r\\n")\n' \
        'dealer.close()\ntime.sleep(60)\n'
    archive = tar_gz(tmp_path / "leaver.tar.gz", [entry("startme.sh", STARTME.encode()), entry("agent.py", leaver.encode())])
    status, answer = upload(served, served.tokens["alice"], archive, "name=leaver&game=kuhn")
    assert status == 201
    document = checked(served, served.tokens["alice"], answer["id"])
    assert (document["status"], document["reason"], document["output"]) == ("failed", "the dealer: ERROR: could not get action from seat 1", "")


def test_uploads_are_refused_in_one_line(served: Service, tmp_path: Path) -> None:
    token = served.tokens["alice"]
    (tmp_path / "big.tar.gz").write_bytes(b"\x1f\x8b" + b"\x00" * MAX_AGENT_BYTES)
    assert upload(served, token, tmp_path / "big.tar.gz") == (
        413, {"error": f"the archive is over {MAX_AGENT_BYTES} bytes (the service's max_agent_bytes)"})
    climbing = tar_gz(tmp_path / "climbing.tar.gz", [entry("startme.sh"), entry("../../arena.db")])
    assert upload(served, token, climbing) == (400, {"error": "the archive holds a path that climbs out of it: '../../arena.db'"})
    assert upload(served, token, climbing, "name=caller&game=nope")[0] == 400
    assert served.request("POST", "/api/agents?name=caller&game=kuhn", raw=climbing.read_bytes())[0] == 401
    assert list((served.data / "agents" / ".incoming").iterdir()) == []  # neither an upload nor its unpacking is left


@NEEDS_SANDBOX
def test_the_cookie_uploads_from_this_origin_only(served: Service, tmp_path: Path) -> None:
    """The page's upload rides the session cookie: from a page of another
    origin it is refused (403) before anything is received."""
    _, headers, _ = served.request("POST", "/api/login", body={"token": served.tokens["bob"]})
    cookie = f"{SESSION_COOKIE}={headers['set-cookie'].split(';', 1)[0].split('=', 1)[1]}"
    archive = agent_archive(tmp_path / "caller.tar.gz").read_bytes()
    host = served.url.removeprefix("http://")
    elsewhere = {"Origin": f"http://{host.split(':')[0]}:1", "Content-Type": "application/gzip"}
    status, _, answer = served.request("POST", "/api/agents?name=paged&game=kuhn", raw=archive, cookie=cookie, headers=elsewhere)
    assert (status, answer) == (403, {"error": CROSS_ORIGIN})
    here = {"Origin": served.url, "Content-Type": "application/gzip"}
    status, _, answer = served.request("POST", "/api/agents?name=paged&game=kuhn", raw=archive, cookie=cookie, headers=here)
    assert status == 201 and answer["version"] == 1
    assert checked(served, served.tokens["bob"], answer["id"])["status"] == "ready"


@NEEDS_SANDBOX
def test_a_version_left_checking_is_checked_when_the_service_starts(world: Path) -> None:
    """A service stopped mid-check left a version ``checking`` (its files
    unpacked): the next start checks it again."""
    service = Service(world / "restart")
    service.data.mkdir(parents=True)
    token = add_user(service.data, "carol")
    store = Store(service.data)
    try:
        home = service.data / "agents" / "00000000000000ab"
        home.mkdir(parents=True)
        (service.data / "agents").chmod(0o755)
        home.chmod(0o755)
        unpack(agent_archive(world / "left.tar.gz"), home / "files")
        row = store.add_agent(home.name, store.user_named("carol").id, "caller", "kuhn")
    finally:
        store.close()
    service.start()
    try:
        assert checked(service, token, row.id)["status"] == "ready"
    finally:
        service.stop()



def test_my_agents_page_lists_each_version_with_its_check(served: Service) -> None:
    """The page (linked from every page's navigation) shows the person's
    versions, newest first within a name, each check's reason and output as
    text; another person's page none of them; no session, the login."""
    store = Store(served.data)
    try:
        dana, dana_token = store.add_user("dana")
        erin_token = store.add_user("erin")[1]
        for agent_id, status in (("00000000000000d1", "failed"), ("00000000000000d2", "checking")):
            store.add_agent(agent_id, dana.id, "shover", "leduc")
            if status == "failed":
                store.finish_agent(agent_id, status, "the agent exited with status 1", "<script>alert(1)</script>\n")
    finally:
        store.close()

    def page(token: str) -> str:
        _, headers, _ = served.request("POST", "/api/login", body={"token": token})
        cookie = f"{SESSION_COOKIE}={headers['set-cookie'].split(';', 1)[0].split('=', 1)[1]}"
        status, _, body = served.request("GET", "/agents", cookie=cookie)
        assert status == 200
        return bytes(body).decode()

    shown = page(dana_token)
    assert '<a href="/agents">my agents</a>' in shown
    assert shown.index('id="agent-00000000000000d2"') < shown.index('id="agent-00000000000000d1"')  # version 2 first
    assert '<span class="status checking">checking</span>' in shown and "the agent exited with status 1" in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown and "<script>alert" not in shown
    assert "shover" not in page(erin_token)
    assert served.request("GET", "/agents")[0] == 303
