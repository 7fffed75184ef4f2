"""``arena play``'s web server without a browser: what it serves over plain
HTTP, and that SIGTERM (as Ctrl-C) ends a match mid-way with status 130 and a
log that keeps what was played. The browser tests are in test_play_browser.py."""

from __future__ import annotations

import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.arena.play_process import PlayProcess


def fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, "", ""


def test_the_page_its_files_and_a_signal(tmp_path: Path) -> None:
    play = PlayProcess(tmp_path, "leduc", "--opponent", "always-call", "--hands", "5", "--seed", "11")
    try:
        url = play.url()
        root = url.split("/?")[0]
        status, kind, body = fetch(url)
        assert status == 200 and kind.startswith("text/html") and '<script src="static/table.js">' in body
        status, kind, body = fetch(root + "/static/table.js")
        assert status == 200 and "javascript" in kind and "new WebSocket" in body
        assert fetch(root + "/static/table.css")[0] == 200
        assert fetch(root + "/static/../seat.py")[0] == 404
        assert fetch(root + "/nothing")[0] == 404
        status, _, _ = fetch(root + "/ws")  # plain HTTP on the WebSocket route
        assert status in (400, 403, 404)
        play.process.send_signal(signal.SIGTERM)
        code, out, err = play.finish()
    finally:
        play.stop()
    assert code == 130
    assert err.strip().splitlines()[-1] == "arena play: interrupted; the log keeps the finished hands"
    assert f"arena play: 0 of 5 hands played; logs in {play.run_dir}" in out
    assert play.states() == []
    assert (play.run_dir / "match.log").read_text().startswith("# name/game/hands/seed match leduc 5 11\n")


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    first = PlayProcess(tmp_path / "a", "leduc", "--opponent", "always-call", "--seed", "1")
    try:
        port = first.url().split(":")[2].split("/")[0]
        second = PlayProcess(tmp_path / "b", "leduc", "--opponent", "always-call", "--seed", "1", "--port", port)
        code, out, err = second.finish()
        assert code == 1
        assert len(err.strip().splitlines()) == 1 and err.startswith("arena play: error: "), err
        assert not (second.run_dir / "match.log").exists()  # nothing written: the table binds first
    finally:
        first.stop()


@pytest.fixture(autouse=True)
def _dirs(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
