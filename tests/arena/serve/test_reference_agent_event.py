"""Issue 47's acceptance with the reference ACPC ``example_player``: an archive
of the compiled player, its game file and a ``startme.sh`` is uploaded by one
user, checked in the sandbox and entered in an event with two hosted bots and
another user's agent; the event finishes with no forfeit and its rankings are
``arena rank``'s over the event's folder. Needs a build of the reference (as
tests/arena/serve/test_connect.py: a skip without one, CI included, since the
reference is on GitHub and never vendored)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.arena.serve.service_process import Service, add_user
from tests.arena.serve.test_agents import agent_archive, checked, entry, tar_gz, upload
from tests.arena.serve.test_connect import EXAMPLE_PLAYER, KUHN_GAME
from tests.arena.serve.test_events import ready_agent
from tests.sandbox.harness import NEEDS_SANDBOX

#: The reference player's start: its game file and the dealer's host and port (the ACPC's convention).
STARTME = '#!/bin/sh\ncd "$(dirname "$0")"\nexec ./example_player kuhn.limit.2p.game "$1" "$2"\n'


def _reference_archive(path: Path) -> Path:
    return tar_gz(path, [
        entry("reference/", kind=tarfile.DIRTYPE, mode=0o755),
        entry("reference/startme.sh", STARTME.encode(), mode=0o755),
        entry("reference/example_player", EXAMPLE_PLAYER.read_bytes(), mode=0o755),
        entry("reference/kuhn.limit.2p.game", KUHN_GAME.read_bytes()),
    ])


def _event(service: Service, event_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        status, document = service.api("GET", f"/api/events/{event_id}", service.tokens["bob"])
        assert status == 200, document
        if document["status"] in ("finished", "failed") or time.monotonic() > deadline:
            return dict(document)
        time.sleep(0.2)


@NEEDS_SANDBOX
def test_the_reference_player_uploaded_checked_and_ranked_in_an_event() -> None:
    if not EXAMPLE_PLAYER.is_file():
        pytest.skip(f"no reference example_player at {EXAMPLE_PLAYER} (see tests/arena/serve/test_connect.py)")
    world = Path(tempfile.mkdtemp(prefix="reference-event-"))
    world.chmod(0o755)  # the sandbox's uid must reach the agents' files
    service = Service(world / "serve")
    try:
        service.data.mkdir(parents=True)
        service.tokens = {name: add_user(service.data, name, admin=name == "alice") for name in ("alice", "bob", "carol")}
        ready_agent(service.data, "carol", "caller", agent_archive(world / "caller.tar.gz"), "00000000000000c1")
        service.start()
        status, answer = upload(service, service.tokens["bob"], _reference_archive(world / "reference.tar.gz"),
                                "name=reference&game=kuhn")
        assert status == 201, answer
        version = checked(service, service.tokens["bob"], answer["id"])
        assert (version["status"], version["reason"]) == ("ready", None), version
        event = {"name": "reference", "game": "kuhn", "hands": 10, "series": 1, "duplicate": True,
                 "entrants": ["bot:always-call", "bot:kuhn-cfr", "agent:reference", "agent:caller"]}
        status, created = service.api("POST", "/api/events", service.tokens["alice"], raw=json.dumps(event).encode())
        assert status == 201, created
        done = _event(service, created["id"])
        assert (done["status"], done["progress"]) == ("finished", {"matches": 6}), done
        results = done["results"]
        assert all(forfeits == [] for forfeits in results["forfeits"].values()), results["forfeits"]
        folder = service.data / "events" / created["id"] / "out"
        ranked = subprocess.run([sys.executable, "-m", "arena", "rank", str(folder), "--game", "kuhn", "--format", "json"],
                                capture_output=True, text=True, check=True, timeout=120)
        expected = json.loads(ranked.stdout)
        assert results["bankroll"] == expected["bankroll"] and results["runoff"] == expected["bankroll_runoff"]
        assert results["ranking"]["crosstable"] == expected["crosstable"]
        assert "reference" in results["bankroll"]
    finally:
        if service.process is not None and service.process.poll() is None:
            service.stop()
        shutil.rmtree(world)
