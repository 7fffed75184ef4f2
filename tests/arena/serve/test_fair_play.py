"""Fair play on the hosted arena (issue 44): a limit that holds when a user's
requests race, a reserved port nobody else can bind, cards nobody sees before
the match is over, and requests that are the user's own."""

from __future__ import annotations

import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

import markupsafe
import pytest
import trio
from starlette.routing import Route

from arena.serve.app import make_app
from arena.serve.config import ConfigError, ServeConfig, load_config
from arena.serve.hosting import Host
from arena.serve.store import Store
from arena.serve.tournaments import COMMANDS_BY_TOKEN
from arena.serve.validation import match_request
from tests.arena.serve.service_process import TOURNAMENT, Service, add_user, agent, seat_env
from tests.arena.serve.test_web_pages import log_in, session

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 5}


def test_parallel_requests_stay_under_the_limit_per_user(tmp_path: Path) -> None:
    """The check and the insertion are one step: 20 requests at once, a limit of 4, make 4."""
    service = Service(tmp_path, max_matches_per_user=4, start_timeout_s=30.0).start()
    try:
        alice = add_user(service.data, "alice")
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(lambda _: service.request("POST", "/api/matches", alice, KUHN)[0], range(20)))
        assert sorted(statuses) == [201] * 4 + [429] * 16
        assert len(service.request("GET", "/api/matches", alice)[2]["matches"]) == 4
    finally:
        service.stop()


def test_parallel_requests_stay_under_the_queue_limit(tmp_path: Path) -> None:
    """The queue's length is checked in the same step: one match plays at a
    time and two may wait, so 20 requests at once make at most 3."""
    service = Service(tmp_path, max_matches=1, max_queued=2, max_matches_per_user=50, start_timeout_s=30.0).start()
    try:
        alice = add_user(service.data, "alice")
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(lambda _: service.request("POST", "/api/matches", alice, KUHN)[0], range(20)))
        assert 2 <= statuses.count(201) <= 3 and statuses.count(503) == 20 - statuses.count(201), statuses
    finally:
        service.stop()


def test_a_reserved_port_cannot_be_squatted(tmp_path: Path) -> None:
    """A duplicate match's second port, reserved while its first seating waits,
    is bound so that another local program (even one asking SO_REUSEADDR)
    cannot take it and pose as the dealer."""
    service = Service(tmp_path, start_timeout_s=30.0).start()
    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice, {**KUHN, "duplicate": True})[2]
        service.next_port(alice, match["id"])
        squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError):
                squatter.bind(("127.0.0.1", match["ports"][1]))
        finally:
            squatter.close()
    finally:
        service.stop()


def _state_changing_paths(tmp_path: Path) -> list[str]:
    """Every route of the app that changes something (all but GET), read from
    its route table (so a route added later is checked too), ids filled in."""
    store = Store(tmp_path / "table")
    try:
        app = make_app(Host(ServeConfig(data=tmp_path / "table"), store))
        routes = [route for route in app.routes if isinstance(route, Route) and set(route.methods or ()) - {"GET", "HEAD"}]
    finally:
        store.close()
    return [route.path.replace("{id}", "x") for route in routes]


def test_a_page_of_another_origin_cannot_use_the_session(tmp_path: Path) -> None:
    """A page on another port of this host is another origin: with the
    session cookie, its POSTs are refused on every state-changing route (the
    tournament route, which runs commands, among them), whether the browser
    says so by ``Origin`` or ``Sec-Fetch-Site``; a bearer token is not a
    browser's, and the service's own pages still work."""
    paths = _state_changing_paths(tmp_path)
    assert {"/api/matches", "/api/tournaments", "/api/logout", "/tables", "/admin/tournaments"} <= set(paths)
    service = Service(tmp_path).start()
    try:
        admin = add_user(service.data, "alice", admin=True)
        cookie = session(log_in(service, admin)[1])
        other = service.url.rsplit(":", 1)[0] + ":1"  # the same host, another port
        for foreign in ({"Origin": other}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"},
                        {"Origin": "null"}):
            for path in paths:
                body = TOURNAMENT if "tournaments" in path else b"{}"
                status, _, answer = service.request("POST", path, raw=body, headers={**cookie, **foreign})
                assert status == 403, (path, foreign, answer)
        assert service.request("GET", "/api/me", headers=cookie)[0] == 200  # the session was not ended
        mine = {**cookie, "Origin": service.url, "Sec-Fetch-Site": "same-origin"}
        assert service.request("POST", "/api/matches", body=KUHN, headers=mine)[0] == 201
        status, _, answer = service.request("POST", "/api/tournaments", admin, raw=TOURNAMENT,
                                            headers={"Origin": other})
        assert status == 201, answer  # a script's bearer token: no browser, no origin rule
    finally:
        service.stop()


def test_bots_that_run_commands_come_only_with_a_token(tmp_path: Path) -> None:
    """A tournament whose bots run commands (as the service's user) is not
    taken from a browser session, even the admin's own and of this origin (a
    script injected into a page would carry the cookie): only with the
    admin's bearer token, which a browser never sends on its own."""
    commands = TOURNAMENT + f'runner = {{ command = "{sys.executable} -c pass" }}\n'.encode()
    service = Service(tmp_path).start()
    try:
        admin = add_user(service.data, "alice", admin=True)
        mine = {**session(log_in(service, admin)[1]), "Origin": service.url, "Sec-Fetch-Site": "same-origin"}
        status, _, answer = service.request("POST", "/api/tournaments", raw=commands, headers=mine)
        assert (status, answer["error"]) == (403, COMMANDS_BY_TOKEN)
        form = urllib.parse.urlencode({"config": commands.decode()}).encode()
        status, _, page = service.request("POST", "/admin/tournaments", raw=form,
                                          headers={**mine, "Content-Type": "application/x-www-form-urlencoded"})
        assert status == 403 and str(markupsafe.escape(COMMANDS_BY_TOKEN)).encode() in page  # in place, as the page escapes it
        assert not [folder for folder in (service.data / "tournaments").iterdir()]  # nothing kept
        status, _, answer = service.request("POST", "/api/tournaments", raw=TOURNAMENT, headers=mine)
        assert status == 201, answer  # our own bots: the session will do
        status, _, answer = service.request("POST", "/api/tournaments", admin, raw=commands)
        assert status == 201, answer
    finally:
        service.stop()


def test_a_login_goes_on_only_to_a_path_of_this_site(tmp_path: Path) -> None:
    """``next=`` as the browser would read it (tabs and newlines dropped,
    backslashes made slashes) must still be a path of this site."""
    service = Service(tmp_path).start()
    try:
        for target in ("/%09/evil.example", "/%0a/evil.example", "/%0d%0a/evil.example", "/%5c/evil.example",
                       "/%5cevil.example", "//evil.example", "/%09%09/evil.example", "%09//evil.example"):
            status, _, page = service.request("GET", f"/login?next={target}")
            assert status == 200 and b'data-next="/"' in page, target
        status, _, page = service.request("GET", "/login?next=/leaderboard%3Fgame%3Dkuhn")
        assert b'data-next="/leaderboard?game=kuhn"' in page
    finally:
        service.stop()


#: Every place a match's cards could show: the API's downloads and the pages'.
_CARD_PATHS: Final = ("/api/matches/{id}/log", "/api/matches/{id}/hands", "/api/matches/{id}/phh",
                      "/api/matches/{id}/pokerstars", "/matches/{id}/log", "/matches/{id}/hands",
                      "/matches/{id}/phh", "/matches/{id}/pokerstars", "/matches/{id}/replay.json")


def test_no_card_of_a_seating_shows_before_the_match_is_over(tmp_path: Path) -> None:
    """Seating 1 of a duplicate match deals the cards seating 2 deals again:
    while seating 2 waits, nothing the API or the pages serve shows a card of
    seating 1, nor the seed that deals them; the result shows chips and hands
    played. Once the match is over, all of it is there."""
    service = Service(tmp_path, start_timeout_s=30.0).start()
    try:
        token = add_user(service.data, "alice")
        cookie = session(log_in(service, token)[1])
        match = service.request("POST", "/api/matches", token, {**KUHN, "hands": 12, "duplicate": True})[2]
        match_id = match["id"]
        assert agent("127.0.0.1", service.next_port(token, match_id)).returncode == 0
        assert service.next_port(token, match_id) == match["ports"][1]  # seating 2 waits for the agent
        log = (service.data / "matches" / match_id / "seating0.log").read_text()
        seed = log.splitlines()[0].split()[-1]
        deals = {line.split(":")[3] for line in log.splitlines() if line.startswith("STATE:")}
        assert len(deals) >= 2  # Kuhn's deals, as "Ks|Qs"
        shown = service.request("GET", f"/api/matches/{match_id}", token)[2]
        listed = service.request("GET", "/api/matches", token)[2]["matches"][0]
        assert shown["seed"] is None and listed["seed"] is None
        assert shown["result"]["hands"] == 12 and shown["result"]["players"][0]["chips"] is not None
        for path in _CARD_PATHS:
            status, _, answer = service.request("GET", path.format(id=match_id), token, headers=cookie)
            assert status in (404, 409), (path, status)
            reason = str(answer)  # the match is not over (or Kuhn has no such format)
            assert "is not over" in reason or "hand history of a kuhn match" in reason, (path, answer)
        texts = [json.dumps(shown), json.dumps(listed),
                 service.request("GET", f"/matches/{match_id}", headers=cookie)[2].decode(),
                 service.request("GET", "/", headers=cookie)[2].decode()]
        for text in texts:
            assert f"seed {seed}" not in text and f'"seed": {seed}' not in text
            assert not [deal for deal in deals if deal in text], text
        assert agent("127.0.0.1", service.next_port(token, match_id)).returncode == 0
        over = service.wait_status(token, match_id, ("finished",))
        assert over["seed"] == int(seed)
        for path in _CARD_PATHS[:2] + _CARD_PATHS[4:6] + _CARD_PATHS[-1:]:  # Kuhn has no PHH, PokerStars text
            assert service.request("GET", path.format(id=match_id), token, headers=cookie)[0] == 200, path
    finally:
        service.stop()


def test_a_chosen_seed_or_a_remote_duplicate_is_practice(tmp_path: Path) -> None:
    """A seed the user chose deals cards the user can know, and a remote agent
    remembers seating 1's cards in seating 2: such a match is practice (the
    API says so) and the leaderboard leaves it out; a match of the service's
    own seed and one seating ranks."""
    service = Service(tmp_path, start_timeout_s=30.0).start()
    try:
        token = add_user(service.data, "alice")
        chosen = service.request("POST", "/api/matches", token, {**KUHN, "seed": 7})[2]["id"]
        remembered = service.request("POST", "/api/matches", token, {**KUHN, "duplicate": True})[2]["id"]
        for match_id in (chosen, remembered, remembered):
            assert agent("127.0.0.1", service.next_port(token, match_id)).returncode == 0
        cookie = session(log_in(service, token)[1])
        for match_id in (chosen, remembered):
            assert service.wait_status(token, match_id, ("finished",))["practice"] is True
            assert b"practice (on no leaderboard)" in service.request("GET", f"/matches/{match_id}", headers=cookie)[2]
        assert service.request("GET", "/api/leaderboard?game=kuhn", token)[2]["entries"] == []
        ranked = service.request("POST", "/api/matches", token, KUHN)[2]["id"]
        assert agent("127.0.0.1", service.next_port(token, ranked)).returncode == 0
        assert service.wait_status(token, ranked, ("finished",))["practice"] is False
        assert b"practice" not in service.request("GET", f"/matches/{ranked}", headers=cookie)[2]
        entries = service.request("GET", "/api/leaderboard?game=kuhn", token)[2]["entries"]
        assert [(entry["user"], entry["hands"]) for entry in entries] == [("alice", 5)]
        assert {m["id"]: m["practice"] for m in service.request("GET", "/api/matches", token)[2]["matches"]} == {
            chosen: True, remembered: True, ranked: False}
    finally:
        service.stop()


def test_a_revoked_users_running_match_ends_at_once_and_does_not_rank(tmp_path: Path) -> None:
    """``arena users revoke`` (another process, the database alone) ends the
    user's match while it plays: aborted with the reason, on no leaderboard."""
    service = Service(tmp_path, start_timeout_s=30.0).start()
    try:
        alice, bob = add_user(service.data, "alice"), add_user(service.data, "bob")
        match_id = service.request("POST", "/api/matches", alice, {**KUHN, "hands": 10000})[2]["id"]
        port = service.next_port(alice, match_id)
        command = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "always-call"]
        playing = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=seat_env(port))
        try:
            service.wait_status(alice, match_id, ("running",))
            revoked = subprocess.run([sys.executable, "-m", "arena", "users", "revoke", "alice", "--data", str(service.data)],
                                     capture_output=True, text=True, timeout=60)
            assert revoked.returncode == 0, revoked.stderr
            store = Store(service.data)
            try:
                deadline = time.monotonic() + 20
                while (row := store.match(match_id)) is not None and row.status != "aborted" and time.monotonic() < deadline:
                    time.sleep(0.1)
            finally:
                store.close()
            assert row is not None and row.status == "aborted" and "revoked" in (row.error or "")
            assert row.result is not None and row.result["hands"] < 10000
            playing.wait(timeout=20)  # its dealer is gone
        finally:
            if playing.poll() is None:
                playing.kill()
                playing.wait()
        assert service.request("GET", "/api/leaderboard?game=kuhn", bob)[2]["entries"] == []
    finally:
        service.stop()


def test_web_pages_share_the_apis_limit(tmp_path: Path) -> None:
    """A person's pages count against the same requests per minute as their
    API calls (a page costs the service as much), and the login page against
    the address."""
    service = Service(tmp_path, requests_per_minute=5).start()
    try:
        token = add_user(service.data, "alice")
        cookie = session(log_in(service, token)[1])  # the login counts too: 1 of 5
        assert [service.request("GET", "/", headers=cookie)[0] for _ in range(2)] == [200, 200]
        assert [service.request("GET", "/api/me", token)[0] for _ in range(2)] == [200, 200]
        status, headers, page = service.request("GET", "/leaderboard?game=kuhn", headers=cookie)
        assert status == 429 and 1 <= int(headers["retry-after"]) <= 60 and b"too many requests" in page
        assert service.request("GET", "/api/me", token)[0] == 429
        assert [service.request("GET", "/login")[0] for _ in range(6)] == [200] * 5 + [429]  # by address
    finally:
        service.stop()


def test_failed_logins_from_an_address_do_not_lock_out_the_right_token(tmp_path: Path) -> None:
    """Wrong tokens are counted by address (429 past the limit), but a right
    one from the same address (a NAT, a shared host) still logs in."""
    service = Service(tmp_path, requests_per_minute=3).start()
    try:
        token = add_user(service.data, "alice")
        wrong = [service.request("POST", "/api/login", body={"token": "x" * 43})[0] for _ in range(4)]
        assert wrong == [401, 401, 401, 429]
        assert log_in(service, token)[0] == 200
    finally:
        service.stop()


def test_the_cookie_is_secure_behind_the_tls_proxy_named(tmp_path: Path) -> None:
    """Behind the TLS proxy ``tls_proxy`` names, its ``X-Forwarded-Proto:
    https`` makes the session cookie ``Secure``; from anyone else the header
    means nothing."""
    https = {"X-Forwarded-Proto": "https"}
    for proxy, secure in ((None, False), ("127.0.0.1", True)):
        (tmp_path / str(proxy)).mkdir()
        service = Service(tmp_path / str(proxy), **({} if proxy is None else {"tls_proxy": proxy})).start()
        try:
            token = add_user(service.data, "alice")
            status, headers, _ = service.request("POST", "/api/login", body={"token": token}, headers=https)
            assert status == 200 and ("; secure" in headers["set-cookie"].lower()) is secure, (proxy, headers)
        finally:
            service.stop()
    (tmp_path / "bad.toml").write_text('[serve]\ntls_proxy = "proxy.example"\n')
    with pytest.raises(ConfigError, match="tls_proxy: the proxy's IP address, not 'proxy.example'"):
        load_config(tmp_path / "bad.toml", {})


class _FullDisk(Store):
    """A database whose disk fills as the first match ends."""

    def update_match(self, match_id: str, **fields: object) -> None:
        if "finished" in fields:
            raise sqlite3.OperationalError("database or disk is full")
        super().update_match(match_id, **fields)


async def test_a_database_error_as_a_match_ends_leaves_the_service_up(tmp_path: Path) -> None:
    """The match's end cannot be written (a full disk): that match is over all
    the same (its ports and its place free), and the host goes on."""
    store = _FullDisk(tmp_path)
    user, _ = store.add_user("alice")
    low = random.Random(os.getpid() + time.time_ns()).randrange(20000, 60000, 100)
    host = Host(ServeConfig(data=tmp_path, match_ports=(low, low + 9), start_timeout_s=0.2), store)
    request = match_request(dict(KUHN), 100)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            first = await host.create_match(user, request, "127.0.0.1")  # no agent comes: it aborts
            with trio.fail_after(30):
                while first.id in host.live:
                    await trio.sleep(0.05)
            assert not host.ports_used
            second = await host.create_match(user, request, "127.0.0.1")
            assert second.id in host.live
            nursery.cancel_scope.cancel()
    finally:
        store.close()


def test_no_new_match_while_the_disk_is_full(tmp_path: Path) -> None:
    """Below ``min_free_bytes`` free on the data directory's disk a new match
    is refused (507, until space returns); what plays goes on."""
    service = Service(tmp_path, min_free_bytes=2**62).start()  # more than any disk: "full"
    try:
        token = add_user(service.data, "alice")
        status, _, answer = service.request("POST", "/api/matches", token, KUHN)
        assert (status, answer["error"]) == (507, "the service's disk is full: no new match until space returns")
        assert service.request("GET", "/api/me", token)[0] == 200
    finally:
        service.stop()
