"""Events (:mod:`arena.serve.events`): two hosted bots and two submitted
agents (the standard-library Kuhn client, and one that crashes) played through
the tournament machinery, the service killed mid-event and started again; the
event finishes, the crasher forfeits every seating with its reason, the
rankings are ``arena rank``'s over the event's folder, the logs come only once
it is over; only an admin creates one, and a cookie only from this origin."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.serve.events import EXAMPLE, NO_SUCH_EVENT, NOT_OVER
from arena.serve.archives import unpack
from arena.serve.httpkit import CROSS_ORIGIN, SESSION_COOKIE
from arena.serve.store import Store
from tests.arena.serve.service_process import Service, add_user
from tests.arena.serve.test_agents import CRASHER, agent_archive
from tests.sandbox.harness import NEEDS_SANDBOX

#: The event of the first test: 4 entrants, so 6 pairings of 2 seatings.
EVENT = {"name": "Kuhn open", "game": "kuhn", "hands": 10, "series": 1, "duplicate": True,
         "entrants": ["bot:always-call", "bot:always-raise", "agent:caller", "agent:crasher"]}


@pytest.fixture(scope="module")
def world() -> Iterator[Path]:
    """A folder every user can search (the sandbox's uid must reach the agents' files)."""
    root = Path(tempfile.mkdtemp(prefix="events-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)


def ready_agent(data: Path, user: str, name: str, archive: Path, agent_id: str) -> int:
    """A submitted agent's version, unpacked and marked ready as its check would; its version number."""
    home = data / "agents" / agent_id
    home.mkdir(parents=True)
    (data / "agents").chmod(0o755)
    home.chmod(0o755)
    unpack(archive, home / "files")
    store = Store(data)
    try:
        row = store.add_agent(agent_id, store.user_named(user).id, name, "kuhn")
        store.finish_agent(agent_id, "ready", None, "")
        return row.version
    finally:
        store.close()


@pytest.fixture(scope="module")
def served(world: Path) -> Iterator[Service]:
    """alice (an admin), bob and carol, each of the latter with a ready agent."""
    service = Service(world / "serve")
    service.data.mkdir(parents=True)
    service.tokens = {name: add_user(service.data, name, admin=name == "alice") for name in ("alice", "bob", "carol")}
    ready_agent(service.data, "bob", "caller", agent_archive(world / "caller.tar.gz"), "00000000000000b1")
    ready_agent(service.data, "carol", "crasher", agent_archive(world / "crasher.tar.gz", CRASHER), "00000000000000c1")
    yield service.start()
    service.stop()


def cookie_of(service: Service, token: str) -> str:
    _, headers, _ = service.request("POST", "/api/login", body={"token": token})
    return f"{SESSION_COOKIE}={headers['set-cookie'].split(';', 1)[0].split('=', 1)[1]}"


def wait_for(service: Service, event_id: str, done: Any, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status, document = service.api("GET", f"/api/events/{event_id}", service.tokens["bob"])
        assert status == 200, document
        if done(document) or time.monotonic() > deadline:
            return dict(document)
        time.sleep(0.1)


@NEEDS_SANDBOX
def test_an_event_of_bots_and_agents_finishes_after_a_kill_with_the_crashers_forfeits(served: Service) -> None:
    alice, bob = served.tokens["alice"], served.tokens["bob"]
    status, answer = served.request("POST", "/api/events", alice, EVENT)[::2]
    assert status == 201 and sorted(answer) == ["id"]
    event_id = answer["id"]
    playing = wait_for(served, event_id, lambda d: d["progress"]["matches"] >= 1)
    assert playing["status"] == "running" and playing["results"] is None and "seed" not in playing
    assert served.api("GET", f"/api/events/{event_id}/logs", bob) == (409, {"error": NOT_OVER})
    served.kill()  # kill -9 mid-event: its runner plays on, orphaned, until the next start stops it
    before = playing["progress"]["matches"]
    served.start()
    event = wait_for(served, event_id, lambda d: d["status"] in ("finished", "failed"))
    assert (event["status"], event["reason"], event["progress"]) == ("finished", None, {"matches": 6})
    folder = served.data / "events" / event_id
    assert "interrupted; finish with" in (folder / "stderr.txt").read_text()  # the orphan stopped, then resumed
    assert before <= 6
    assert event["entrants"] == [
        {"entrant": "bot:always-call", "kind": "bot", "seat": "always-call"},
        {"entrant": "bot:always-raise", "kind": "bot", "seat": "always-raise"},
        {"entrant": "agent:caller", "kind": "agent", "seat": "caller", "user": "bob", "name": "caller", "version": 1},
        {"entrant": "agent:crasher", "kind": "agent", "seat": "crasher", "user": "carol", "name": "crasher", "version": 1},
    ]
    results = event["results"]
    why = "exited with status 3 before the match was over: boom: no model file"
    # the crasher's 3 matches, 2 seatings each, every hand forfeited (seat 2 in seating 1, seat 1 in seating 2)
    assert results["forfeits"] == {
        "always-call": [], "always-raise": [], "caller": [],
        "crasher": [{"match": f"s0:{other}:crasher", "seating": f"match.{k}", "seat": 3 - k, "hands": "1..10", "reason": why}
                    for other in ("always-call", "always-raise", "caller") for k in (1, 2)],
    }
    ranked = subprocess.run([sys.executable, "-m", "arena", "rank", str(folder / "out"), "--game", "kuhn", "--format", "json"],
                            capture_output=True, text=True, check=True, timeout=120)
    expected = json.loads(ranked.stdout)
    assert results["bankroll"] == expected["bankroll"] and results["runoff"] == expected["bankroll_runoff"]
    assert results["series_runoff"] == expected["series_runoff"]
    assert results["ranking"]["crosstable"] == expected["crosstable"]
    assert results["bankroll"][-1] == "crasher"
    # each forfeited hand costs the crasher its blind (Kuhn: an ante of 1): -1 chip a hand against everyone
    assert expected["crosstable"]["totals"]["crasher"] == {"mean": -1.0, "ci95": None, "matches": 3}

    status, headers, data = served.request("GET", f"/api/events/{event_id}/logs", bob)
    assert status == 200 and headers["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        names = sorted(archive.getnames())
    assert len(names) == 24 and names[:4] == ["s0_always-call_always-raise/match.1.hands.msgpack",
                                              "s0_always-call_always-raise/match.1.log",
                                              "s0_always-call_always-raise/match.2.hands.msgpack",
                                              "s0_always-call_always-raise/match.2.log"]

    status, _, body = served.request("GET", f"/events/{event_id}", cookie=cookie_of(served, bob))
    assert status == 200, (body, served.err.read_text()[-3000:])
    page = body.decode()
    assert '<a href="/events">events</a>' in page and 'id="crosstable"' in page and why in page
    assert str(served.data) not in page  # no folder of the service's on a page every user reads
    listed = served.api("GET", "/api/events", bob)[1]["events"]
    assert [(e["id"], e["name"], e["status"]) for e in listed] == [(event_id, "Kuhn open", "finished")]


def test_only_an_admin_creates_an_event_and_the_cookie_only_from_this_origin(served: Service) -> None:
    alice, bob = served.tokens["alice"], served.tokens["bob"]
    assert served.request("POST", "/api/events", bob, EVENT)[::2] == (
        403, {"error": "only an admin creates events (arena users add NAME --admin)"})
    cookie = cookie_of(served, alice)
    host = served.url.removeprefix("http://").split(":")[0]
    elsewhere = served.request("POST", "/api/events", body=EVENT, cookie=cookie, headers={"Origin": f"http://{host}:1"})
    assert elsewhere[::2] == (403, {"error": CROSS_ORIGIN})
    assert served.api("GET", "/api/events/0123456789abcdef", bob) == (404, {"error": NO_SUCH_EVENT})
    assert served.api("GET", "/api/events/0123456789abcdef/logs", bob) == (404, {"error": NO_SUCH_EVENT})
    anonymous = [("POST", "/api/events", 401), ("GET", "/api/events", 401), ("GET", "/api/events/0123456789abcdef", 401),
                 ("GET", "/api/events/0123456789abcdef/logs", 401), ("GET", "/events", 303)]  # a page: to the login
    for method, path, refused in anonymous:
        assert served.request(method, path, body=EVENT if method == "POST" else None)[0] == refused, path


@pytest.mark.parametrize(("change", "message"), [
    ({"colour": "red"}, "'colour': unknown key (known: name, game, hands, series, duplicate, entrants, t_response_ms, t_per_hand_ms)"),
    ({"game": "../kuhn.game"}, "'game': name a shipped game (arena games), got \"../kuhn.game\""),
    ({"hands": 1}, "'hands': a whole number in 2..10000, got 1"),
    ({"entrants": ["bot:always-call"]}, "'entrants': 2 to 200 entrants, each once"),
    ({"entrants": ["bot:always-call", "bot:leduc-cfr"]}, "'bot:leduc-cfr': no hosted bot 'leduc-cfr' plays kuhn (GET /api/bots)"),
    ({"entrants": ["bot:always-call", "agent:nobody"]}, "'agent:nobody': no ready version of a submitted agent 'nobody' in kuhn"),
    ({"entrants": ["bot:always-call", "human:me"]}, "'human:me': an entrant is bot:NAME or agent:NAME"),
])
def test_a_bad_event_is_refused_naming_its_key(served: Service, change: dict[str, Any], message: str) -> None:
    assert served.request("POST", "/api/events", served.tokens["alice"], {**EVENT, **change})[::2] == (400, {"error": message})


def test_the_admin_page_holds_an_example_and_shows_a_refusal_in_place(served: Service) -> None:
    cookie = cookie_of(served, served.tokens["alice"])
    page = served.request("GET", "/admin", cookie=cookie)[2].decode()
    assert 'id="event-form"' in page and "&#34;bot:always-call&#34;" in page and EXAMPLE["entrants"][2] in page
    form = urllib.parse.urlencode({"event": json.dumps({**EVENT, "hands": 0})})
    status, _, body = served.request("POST", "/admin/events", raw=form.encode(), cookie=cookie,
                                     headers={"Origin": served.url, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400
    assert '<p class="error" id="event-error">&#39;hands&#39;: a whole number in 2..10000, got 0</p>' in body.decode()
