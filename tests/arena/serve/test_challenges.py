"""Challenges (:mod:`arena.serve.challenges`): two users' standard-library
Kuhn clients, each in its sandbox, play a duplicate challenge to its end
(chips that sum to zero, the duplicate's exact zero, the logs both owners
download and a third user cannot see); a challenge of a hosted bot; a
crasher forfeits with its reason and is charged the hands it left, and an
agent that quits in the second seating is named and charged that seating's
hands alone; one-line refusals; the cookie's challenge from another origin is
refused; the user's limit counts hosted matches and challenges together, and a
challenge waits while the service's places are taken; a killed service's
queued challenge is aborted when it starts again, and so is a revoked player's;
the agents page's form and list."""

from __future__ import annotations

import io
import secrets
import tarfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.serve.challenges import NO_SUCH_CHALLENGE, NOT_OVER, RESTARTED, REVOKED
from arena.serve.httpkit import CROSS_ORIGIN, SESSION_COOKIE
from arena.serve.store import Store
from tests.arena.serve.service_process import Service, add_user
from tests.arena.serve.test_agents import CRASHER, STARTME, agent_archive, entry, tar_gz
from tests.arena.serve.test_agents import world  # noqa: F401 - the module's fixture: a folder every user can search
from tests.arena.serve.test_events import ready_agent
from tests.sandbox.harness import NEEDS_SANDBOX, PRELUDE
from tests.sandbox.test_seat import ALWAYS_CALL

pytestmark = NEEDS_SANDBOX

#: A Kuhn client that raises whenever it may and calls a raise (the sandbox
#: tests' always-call, its answer changed): against one that always calls,
#: every hand is a showdown for 2 chips a player.
RAISER = PRELUDE + textwrap.dedent(ALWAYS_CALL.replace('":c\\r\\n"', '(":r" if betting in ("", "c") else ":c") + "\\r\\n"'))
assert RAISER.count(":r") == 1, "always-call's answer is written as this test expects"
#: Always-call, but one that quits when its first hand deals it the second position: in the
#: second seating of a duplicate challenge (the seats swapped), as the first deals it the first.
SHY = PRELUDE + textwrap.dedent(ALWAYS_CALL.replace(
    'if line.startswith("MATCHSTATE:"):',
    'if line.startswith("MATCHSTATE:1:0:"):\n        sys.exit("no second seat in /srv/arena-data/agents for me")\n    if line.startswith("MATCHSTATE:"):'))
assert SHY.count("sys.exit") == 1, "always-call's loop is written as this test expects"


def make_service(world: Path, name: str, **settings: Any) -> Service:
    """A service whose users alice, bob and carol have tokens; alice a ready
    raiser, bob a ready caller and a crasher (one that passed its check, then broke)."""
    service = Service(world / name, **settings)
    service.data.mkdir(parents=True)
    service.tokens = {user: add_user(service.data, user) for user in ("alice", "bob", "carol")}
    raiser = tar_gz(world / f"{name}-raiser.tar.gz", [entry("startme.sh", STARTME.encode()), entry("agent.py", RAISER.encode())])
    ready_agent(service.data, "alice", "raiser", raiser, secrets.token_hex(8))
    shy = tar_gz(world / f"{name}-shy.tar.gz", [entry("startme.sh", STARTME.encode()), entry("agent.py", SHY.encode())])
    ready_agent(service.data, "alice", "shy", shy, secrets.token_hex(8))
    ready_agent(service.data, "bob", "caller", agent_archive(world / f"{name}-caller.tar.gz"), secrets.token_hex(8))
    ready_agent(service.data, "bob", "crasher", agent_archive(world / f"{name}-crasher.tar.gz", CRASHER), secrets.token_hex(8))
    return service


@pytest.fixture(scope="module")
def served(world: Path) -> Iterator[Service]:
    service = make_service(world, "serve").start()
    yield service
    service.stop()


def ask(service: Service, token: str | None, body: dict[str, Any], **options: Any) -> tuple[int, Any]:
    status, _, answer = service.request("POST", "/api/challenges", token, body, **options)
    return status, answer


def over(service: Service, token: str, challenge_id: str, within: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        status, document = service.api("GET", f"/api/challenges/{challenge_id}", token)
        assert status == 200, document
        if document["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return dict(document)
        time.sleep(0.2)


def logs(service: Service, token: str, challenge_id: str) -> dict[str, bytes]:
    status, headers, body = service.request("GET", f"/api/challenges/{challenge_id}/logs", token)
    assert status == 200 and headers["content-type"] == "application/gzip", body
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]


def chips_in(log: bytes, seat_name: str) -> float:
    """A player's chips over an ACPC log's STATE lines (``STATE:h:betting:cards:values:names``)."""
    total = 0.0
    for line in log.decode().splitlines():
        if line.startswith("STATE:"):
            fields = line.split(":")
            total += float(fields[-2].split("|")[fields[-1].split("|").index(seat_name)])
    return total


def test_two_users_agents_play_a_duplicate_challenge_that_both_see(served: Service) -> None:
    alice, bob, carol = (served.tokens[name] for name in ("alice", "bob", "carol"))
    status, answer = ask(served, alice, {"agent": "raiser", "opponent": "agent:caller", "hands": 30})
    assert status == 201 and sorted(answer) == ["id", "status"] and answer["status"] == "queued"
    document = over(served, alice, answer["id"])
    assert (document["status"], document["reason"], document["forfeit"], document["duplicate"]) == ("finished", None, None, True)
    assert document["agent"] == {"kind": "agent", "user": "alice", "name": "raiser", "version": 1, "seat": "alice.raiser"}
    assert document["opponent"] == {"kind": "agent", "user": "bob", "name": "caller", "version": 1, "seat": "bob.caller"}
    assert document["by"] == "alice" and isinstance(document["seed"], int)
    result = document["result"]
    assert result["hands"] == 60 and [s["hands"] for s in result["seatings"]] == [30, 30]
    players = {p["name"]: p for p in result["players"]}
    assert players["alice.raiser"]["chips"] + players["bob.caller"]["chips"] == 0
    files = logs(served, alice, answer["id"])
    assert sorted(files) == [f"{answer['id']}/seating{k}.{kind}" for k in (0, 1) for kind in ("hands.msgpack", "log")]
    from_logs = sum(chips_in(files[f"{answer['id']}/seating{k}.log"], "alice.raiser") for k in (0, 1))
    assert players["alice.raiser"]["chips"] == from_logs
    raw = players["alice.raiser"]["estimate"]
    assert (raw["hands"], raw["unit"], raw["interval_shown"]) == (60, "chips/hand", True)
    assert raw["mean"] == pytest.approx(from_logs / 60)
    # every hand a showdown for 2: each card dealt twice, once to each seat, so each pair sums to zero
    assert result["duplicate"]["alice.raiser"] == {"mean": 0.0, "interval": [0.0, 0.0], "hands": 30, "unit": "chips/hand",
                                                    "interval_shown": True}
    # the opponent's owner sees it (in its list too), with the same logs; a third user sees nothing
    assert served.api("GET", f"/api/challenges/{answer['id']}", bob) == (200, document)
    assert [c["id"] for c in served.api("GET", "/api/challenges", bob)[1]["challenges"]] == [answer["id"]]
    assert logs(served, bob, answer["id"]) == files
    assert served.api("GET", f"/api/challenges/{answer['id']}", carol) == (404, {"error": NO_SUCH_CHALLENGE})
    assert served.api("GET", f"/api/challenges/{answer['id']}/logs", carol) == (404, {"error": NO_SUCH_CHALLENGE})
    assert served.api("GET", "/api/challenges", carol) == (200, {"challenges": []})


def test_a_challenge_of_a_hosted_bot(served: Service) -> None:
    alice, bob = served.tokens["alice"], served.tokens["bob"]
    status, answer = ask(served, alice, {"agent": "raiser", "opponent": "bot:always-call", "hands": 20, "duplicate": False})
    assert status == 201
    document = over(served, alice, answer["id"])
    assert document["status"] == "finished" and document["opponent"] == {"kind": "bot", "name": "always-call", "seat": "always-call"}
    result = document["result"]
    assert result["hands"] == 20 and result["duplicate"] is None
    assert sum(p["chips"] for p in result["players"]) == 0 and result["players"][0]["chips"] % 2 == 0
    assert answer["id"] not in [c["id"] for c in served.api("GET", "/api/challenges", bob)[1]["challenges"]]
    assert ask(served, alice, {"agent": "raiser", "opponent": "bot:leduc-cfr", "hands": 20}) == (
        400, {"error": "'opponent': no hosted bot 'leduc-cfr' plays kuhn (GET /api/bots)"})


def test_a_crasher_forfeits_with_its_reason_and_is_charged_the_hands_it_left(served: Service) -> None:
    alice = served.tokens["alice"]
    status, answer = ask(served, alice, {"agent": "raiser", "opponent": "agent:bob/crasher", "hands": 10})
    assert status == 201
    document = over(served, alice, answer["id"])
    assert document["status"] == "forfeited" and document["reason"] is None
    assert document["forfeit"] == {"agent": "bob.crasher", "seating": 1,
                                   "reason": "exited with status 3 before the match was over: boom: no model file"}
    players = {p["name"]: p for p in document["result"]["players"]}
    # both seatings' hands charged at Kuhn's most a hand can lose (2 chips); the second seating never played
    assert (players["bob.crasher"]["charged"], players["bob.crasher"]["chips"], players["alice.raiser"]["chips"]) == (20, -40.0, 40.0)


def test_the_asker_forfeiting_in_the_second_seating_is_charged_its_hands(served: Service) -> None:
    """The first seating's hands stand as played; the second's, all left, are
    charged to the one who left; a path in its words is not shown (the other side reads them)."""
    alice, bob = served.tokens["alice"], served.tokens["bob"]
    status, answer = ask(served, alice, {"agent": "shy", "opponent": "agent:caller", "hands": 10})
    assert status == 201
    document = over(served, alice, answer["id"])
    assert document["status"] == "forfeited" and document["forfeit"] == {
        "agent": "alice.shy", "seating": 2, "reason": "exited with status 1 before the match was over: no second seat in … for me"}
    first = chips_in(logs(served, bob, answer["id"])[f"{answer['id']}/seating0.log"], "alice.shy")
    players = {p["name"]: p for p in document["result"]["players"]}
    assert [s["hands"] for s in document["result"]["seatings"]] == [10, 0]
    assert (players["alice.shy"]["charged"], players["alice.shy"]["chips"], players["bob.caller"]["chips"]) == (10, first - 20, 20 - first)


def test_requests_are_refused_in_one_line(served: Service) -> None:
    alice, carol = served.tokens["alice"], served.tokens["carol"]
    refusals: list[tuple[str, dict[str, Any], str]] = [
        (alice, {"agent": "raiser", "opponent": "agent:caller"}, "'hands': a whole number in 2..10000, got null"),
        (alice, {"agent": "raiser", "opponent": "agent:caller", "hands": 10, "seed": 3},
         "'seed': unknown key (known: agent, opponent, hands, duplicate, game)"),
        (alice, {"agent": "raiser", "opponent": "agent:raiser", "hands": 10}, "'opponent': an agent cannot challenge itself"),
        (alice, {"agent": "raiser", "opponent": "agent:nobody", "hands": 10},
         "'opponent': no ready version of a submitted agent 'nobody' in kuhn"),
        (alice, {"agent": "raiser", "opponent": "caller", "hands": 10},
         "'opponent': \"agent:NAME\", \"agent:USER/NAME\" or \"bot:NAME\""),
        (carol, {"agent": "caller", "opponent": "bot:always-call", "hands": 10}, "'agent': you have no ready version of 'caller'"),
    ]
    for token, body, message in refusals:
        assert ask(served, token, body) == (400, {"error": message})


def test_the_cookies_challenge_comes_from_this_origin_only(served: Service) -> None:
    _, headers, _ = served.request("POST", "/api/login", body={"token": served.tokens["bob"]})
    cookie = f"{SESSION_COOKIE}={headers['set-cookie'].split(';', 1)[0].split('=', 1)[1]}"
    body = {"agent": "caller", "opponent": "agent:raiser", "hands": 10, "duplicate": False}
    elsewhere = {"Origin": f"http://{served.url.removeprefix('http://').split(':')[0]}:1"}
    before = served.api("GET", "/api/challenges", served.tokens["bob"])[1]["challenges"]
    assert ask(served, None, body, cookie=cookie, headers=elsewhere) == (403, {"error": CROSS_ORIGIN})
    assert served.api("GET", "/api/challenges", served.tokens["bob"])[1]["challenges"] == before  # nothing was asked
    status, answer = ask(served, None, body, cookie=cookie, headers={"Origin": served.url})
    assert status == 201
    assert over(served, served.tokens["bob"], answer["id"])["status"] == "finished"


def test_the_users_limit_counts_matches_and_challenges_and_a_challenge_waits_for_a_place(world: Path) -> None:
    """One place in all (``max_matches``), one match or challenge per user: a
    hosted match whose agent never connects holds the place until its start
    timeout; alice, who asked for it, may not challenge meanwhile; bob's
    challenge waits queued (its logs refused) and plays once the place is free."""
    service = make_service(world, "limits", max_matches=1, max_matches_per_user=1, start_timeout_s=5.0).start()
    try:
        alice, bob = service.tokens["alice"], service.tokens["bob"]
        status, _, match = service.request("POST", "/api/matches", alice, {"game": "kuhn", "opponent": "always-call", "hands": 10})
        assert status == 201
        assert ask(service, alice, {"agent": "raiser", "opponent": "agent:caller", "hands": 10}) == (
            429, {"error": "you have 1 matches and challenges not over (the limit); ask again when one ends"})
        status, answer = ask(service, bob, {"agent": "caller", "opponent": "agent:raiser", "hands": 10})
        assert status == 201
        assert ask(service, bob, {"agent": "caller", "opponent": "bot:always-call", "hands": 10})[0] == 429
        assert service.api("GET", f"/api/challenges/{answer['id']}", bob)[1]["status"] == "queued"
        assert service.api("GET", f"/api/challenges/{answer['id']}/logs", bob) == (409, {"error": NOT_OVER})
        document = over(service, bob, answer["id"])
        assert document["status"] == "finished" and document["result"]["hands"] == 20
        assert service.api("GET", f"/api/matches/{match['id']}", alice)[1]["status"] == "aborted"
    finally:
        service.stop()


def test_the_agents_page_asks_for_a_challenge_and_lists_it_with_its_result(served: Service) -> None:
    """The form (the person's ready agents; the ready agents and hosted bots
    of their games) posts from this origin only; a refusal comes back above
    the list; the list shows each challenge, its result and its logs' link."""
    _, headers, _ = served.request("POST", "/api/login", body={"token": served.tokens["alice"]})
    cookie = f"{SESSION_COOKIE}={headers['set-cookie'].split(';', 1)[0].split('=', 1)[1]}"
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": served.url}

    def post(body: str, origin: dict[str, str] = form) -> tuple[int, dict[str, str], str]:
        status, answer_headers, page = served.request("POST", "/agents/challenges", raw=body.encode(), cookie=cookie,
                                                      headers=origin)
        return status, answer_headers, bytes(page).decode()

    status, _, page = served.request("GET", "/agents", cookie=cookie)
    shown = bytes(page).decode()
    assert status == 200 and '<option value="kuhn raiser">raiser (kuhn)</option>' in shown
    assert '<option value="agent:bob/caller">bob/caller v1 (kuhn)</option>' in shown
    assert '<option value="bot:kuhn-cfr">kuhn-cfr (kuhn)</option>' in shown and "leduc-cfr" not in shown
    status, _, page = post("agent=kuhn+raiser&opponent=agent%3Abob%2Fcaller&hands=1&duplicate=on")
    assert status == 400 and '<p class="error" role="alert">&#39;hands&#39;: a whole number in 2..10000, got 1</p>' in page
    elsewhere = {**form, "Origin": f"http://{served.url.removeprefix('http://').split(':')[0]}:1"}
    assert post("agent=kuhn+raiser&opponent=bot%3Aalways-call&hands=10", elsewhere)[0] == 403
    before = {c["id"] for c in served.api("GET", "/api/challenges", served.tokens["alice"])[1]["challenges"]}
    status, answer_headers, _ = post("agent=kuhn+raiser&opponent=bot%3Aalways-call&hands=10")
    assert status == 303 and answer_headers["location"] == "/agents#challenges"
    (made,) = [c for c in served.api("GET", "/api/challenges", served.tokens["alice"])[1]["challenges"] if c["id"] not in before]
    document = over(served, served.tokens["alice"], made["id"])
    assert document["duplicate"] is False and document["hands"] == 10 and document["status"] == "finished"
    mine, bot = (p["chips"] for p in document["result"]["players"])
    assert mine + bot == 0
    status, _, page = served.request("GET", "/agents", cookie=cookie)
    assert status == 200, page
    shown = bytes(page).decode()
    row = shown[shown.index(f'id="challenge-{made["id"]}"'):]
    row = row[: row.index("</tr>")]
    assert "<td>10 of 10</td>" in row and f"alice.raiser {mine:+g}, always-call {bot:+g}" in row
    assert f'<a href="/api/challenges/{made["id"]}/logs">logs</a>' in row and '<span class="status finished">finished</span>' in row


def test_a_challenge_a_killed_service_left_queued_is_aborted_when_it_starts_again(world: Path) -> None:
    """The one place held by a hosted match whose agent never connects, bob's
    challenge waits; the service is killed outright; started again, it says
    the challenge was cut short and charges no one."""
    service = make_service(world, "restart", max_matches=1, start_timeout_s=30.0).start()
    try:
        assert service.request("POST", "/api/matches", service.tokens["alice"],
                               {"game": "kuhn", "opponent": "always-call", "hands": 10})[0] == 201
        status, answer = ask(service, service.tokens["bob"], {"agent": "caller", "opponent": "agent:raiser", "hands": 10})
        assert status == 201 and service.api("GET", f"/api/challenges/{answer['id']}", service.tokens["bob"])[1]["status"] == "queued"
        service.kill()
        service.start()
        document = service.api("GET", f"/api/challenges/{answer['id']}", service.tokens["bob"])[1]
        assert (document["status"], document["reason"], document["forfeit"]) == ("aborted", RESTARTED, None)
        assert [p["chips"] for p in document["result"]["players"]] == [0.0, 0.0] and document["result"]["hands"] == 0
    finally:
        service.stop()


def test_a_revoked_players_challenge_ends_at_once_charged_to_no_one(world: Path) -> None:
    """Bob's challenge of alice's agent waits for the one place (a hosted match
    holds it); alice, the opponent agent's owner, is revoked: it is aborted
    within a few seconds, saying why."""
    service = make_service(world, "revoke", max_matches=1, start_timeout_s=30.0).start()
    try:
        assert service.request("POST", "/api/matches", service.tokens["carol"],
                               {"game": "kuhn", "opponent": "always-call", "hands": 10})[0] == 201
        status, answer = ask(service, service.tokens["bob"], {"agent": "caller", "opponent": "agent:raiser", "hands": 10})
        assert status == 201
        store = Store(service.data)
        try:
            store.revoke("alice")
        finally:
            store.close()
        document = over(service, service.tokens["bob"], answer["id"], within=10)
        assert (document["status"], document["reason"], document["forfeit"]) == ("aborted", REVOKED, None)
    finally:
        service.stop()
