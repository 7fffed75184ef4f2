"""A disk that fills while a hosted match plays (issue 44, item 5): the data
folder on a small tmpfs of its own, filled by the test once the match has
dealt some hands. The match ends aborted with the reason, its finished hands
kept and counted; the service keeps answering; a new match is refused (507)
until space returns, and accepted after. Mounting needs root (CI has it); a
machine where it cannot mount skips, and fails under ``ARENA_CI=1``."""

from __future__ import annotations

import errno
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.serve.store import Store
from tests.arena.serve.service_process import Service, add_user, seat_env
from tests.needs import missing

#: The tmpfs's size and the free space below which the service takes no new match.
SIZE = 8 << 20
MIN_FREE = 1 << 20


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path/data`` on a tmpfs of :data:`SIZE` bytes, unmounted after the test."""
    data = tmp_path / "data"
    data.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(data)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        missing("mount", f"a small tmpfs to fill (mount: {mounted.stderr.strip() or mounted.returncode})")
    try:
        yield data
    finally:
        subprocess.run(["umount", "-l", str(data)], check=False)


def _fill(folder: Path) -> Path:
    """A file that takes every free byte of ``folder``'s disk."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as file:
        chunk = b"\0" * 65536
        while True:
            try:
                file.write(chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC
                if len(chunk) == 1:
                    return filler
                chunk = chunk[: len(chunk) // 2]


def _stored_status(data: Path, match_id: str) -> str | None:
    store = Store(data)
    try:
        row = store.match(match_id)
        return None if row is None else row.status
    finally:
        store.close()


def test_a_disk_filled_mid_match_ends_the_match_and_the_service_stays_up(tmp_path: Path, small_disk: Path) -> None:
    service = Service(tmp_path, min_free_bytes=MIN_FREE, max_hands=100000).start()
    try:
        token = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", token, {"game": "kuhn", "opponent": "always-call", "hands": 100000})[2]
        port = service.next_port(token, match["id"])
        agent = subprocess.Popen([sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(port),
                                  "--strategy", "always-call"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=seat_env(port))
        log = small_disk / "matches" / match["id"] / "seating0.log"
        deadline = time.monotonic() + 60
        while (not log.is_file() or log.read_text().count("STATE:") < 50) and time.monotonic() < deadline:
            time.sleep(0.05)
        filler = _fill(small_disk)
        shown = service.wait_status(token, match["id"], ("finished", "aborted"))
        agent.wait(timeout=30)
        assert shown["status"] == "aborted", shown
        assert "No space left on device" in shown["error"], shown["error"]
        text = log.read_text()
        assert text.endswith("\n"), text[-200:]  # the hand being written when the disk filled is not half there
        played = text.count("\nSTATE:")
        assert 50 <= played < 100000 and shown["result"]["hands"] == played
        assert service.request("GET", "/api/me", token)[0] == 200
        status, _, answer = service.request("POST", "/api/matches", token, {"game": "kuhn", "opponent": "always-call", "hands": 10})
        assert (status, answer["error"]) == (507, "the service's disk is full: no new match until space returns")
        filler.unlink()
        status, _, answer = service.request("POST", "/api/matches", token, {"game": "kuhn", "opponent": "always-call", "hands": 10})
        assert status == 201, answer
        assert service.request("GET", f"/api/matches/{match['id']}", token)[2]["status"] == "aborted"
        deadline = time.monotonic() + 10  # the end the full database refused is written once it takes it
        while (recorded := _stored_status(service.data, match["id"])) != "aborted" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert recorded == "aborted"
    finally:
        service.stop()
