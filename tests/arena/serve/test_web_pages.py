"""The hosted arena's pages without a browser: what the session cookie is and
when it stops working, where a login may send a person, forms from other
sites, other people's matches, path tricks, the hand-history downloads a
hold'em match offers, tournament configs that are refused (each with one
line), and markup in what users write shown as text on every page."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from markupsafe import escape  # the templates' escaping

from arena.serve.httpkit import SESSION_COOKIE
from arena.serve.config import ConfigError, load_config
from arena.serve.store import MatchRow, Store, User
from arena.serve.tournaments import EXAMPLE, Tournaments
from tests.arena.serve.service_process import TOURNAMENT, Service, add_user, agent, served  # noqa: F401 (a fixture)

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def log_in(served: Service, token: str) -> tuple[int, str]:
    """POST /api/login: the status and the Set-Cookie line."""
    status, headers, _ = served.request("POST", "/api/login", body={"token": token})
    return status, headers.get("set-cookie", "")


def session(cookie_line: str) -> dict[str, str]:
    value = cookie_line.split(";", 1)[0].split("=", 1)[1]
    return {"Cookie": f"{SESSION_COOKIE}={value}"}


def test_the_session_ends_with_its_token_and_pages_send_you_to_the_login(served: Service) -> None:
    store = Store(served.data)
    _, token = store.add_user("carol")
    status, line = log_in(served, token)
    assert status == 200 and "HttpOnly" in line and "SameSite=strict" in line and token not in line
    cookie = session(line)
    status, headers, page = served.request("GET", "/", headers=cookie)
    assert status == 200 and b"carol" in page
    assert (headers["x-frame-options"], headers["content-security-policy"]) == ("DENY", "frame-ancestors 'none'")
    store.rotate("carol")  # a new token ends the sessions the old one opened
    status, headers, _ = served.request("GET", "/matches/x?y=1", headers=cookie)
    assert (status, headers["location"]) == (303, "/login?next=" + quote("/matches/x?y=1", safe=""))
    store.close()


def test_a_login_stays_on_this_site_and_forms_from_others_are_refused(served: Service) -> None:
    for target, kept in (("//evil.example/", "/"), ("https://evil.example/", "/"), ("/\\evil.example", "/"),
                         ("", "/"), ("/leaderboard?game=kuhn", "/leaderboard?game=kuhn")):
        status, _, page = served.request("GET", "/login?" + urlencode({"next": target}))
        assert status == 200 and f'data-next="{kept}"'.encode() in page, (target, page)
    cookie = session(log_in(served, served.tokens["bob"])[1])
    status, _, page = served.request("POST", "/tables", headers={**cookie, **FORM, "Origin": "http://evil.example"},
                                     raw=b"game=leduc&opponent=always-call&hands=2")
    assert status == 403 and b"a form from another site" in page


def test_other_peoples_matches_and_path_tricks_are_not_found(served: Service) -> None:
    alice, bob = (session(log_in(served, served.tokens[name])[1]) for name in ("alice", "bob"))
    status, headers, _ = served.request("POST", "/tables", headers={**alice, **FORM},
                                        raw=b"game=leduc&opponent=always-call&hands=2&seed=1")
    assert status == 303
    match_id = headers["location"].split("/")[2]
    assert served.request("GET", f"/tables/{match_id}/", headers=alice)[0] == 200
    status, _, page = served.request("GET", f"/matches/{match_id}", headers=alice)
    assert status == 200 and b'id="downloads-later"' in page and b'id="download-log"' not in page  # cards: once over
    for path in (f"/matches/{match_id}", f"/matches/{match_id}/log", f"/matches/{match_id}/hands",
                 f"/matches/{match_id}/phh", f"/matches/{match_id}/pokerstars",
                 f"/matches/{match_id}/replay.json", f"/tables/{match_id}/static/table.js"):
        status, _, page = served.request("GET", path, headers=bob)
        assert status == 404 and (b"no match" in page or b"no such file" in page), (path, page)
    status, headers, _ = served.request("GET", f"/tables/{match_id}/", headers=bob)  # not bob's: his matches say no
    assert (status, headers["location"]) == (303, f"/matches/{match_id}")
    for path in ("/web/..%2Fpages.py", "/web/pages.py", f"/tables/{match_id}/static/..%2Findex.html",
                 "/matches/..%2F..%2Farena.db/log", "/tournaments/..%2F..%2Farena.db"):
        status, _, page = served.request("GET", path, headers=alice)
        assert status == 404, (path, page)
    status, _, page = served.request("POST", "/tables", headers={**alice, **FORM}, raw=b"game=leduc&opponent=nobody&hands=x")
    assert (status, page.count(b'id="error"')) == (400, 1)


def test_a_hold_em_match_page_offers_its_hand_histories(served: Service) -> None:
    store = Store(served.data)
    _, token = store.add_user("dave")
    store.close()
    status, answer = served.api("POST", "/api/matches", token, b'{"game": "hunl", "opponent": "always-call", "hands": 2}')
    assert status == 201
    match_id = answer["id"]
    cookie = session(log_in(served, token)[1])
    assert served.request("GET", f"/matches/{match_id}/phh", headers=cookie)[0] == 409  # not over: no cards yet
    assert agent("127.0.0.1", served.next_port(token, match_id), "hunl").returncode == 0
    served.wait_status(token, match_id, ("finished",))
    status, _, page = served.request("GET", f"/matches/{match_id}", headers=cookie)
    assert status == 200
    assert f'<a href="/matches/{match_id}/phh" id="download-phh">hand history (PHH)</a>'.encode() in page
    assert f'<a href="/matches/{match_id}/pokerstars" id="download-pokerstars">PokerStars text</a>'.encode() in page
    for form, name in (("phh", f"{match_id}.phhs"), ("pokerstars", f"{match_id}.txt")):
        status, headers, data = served.request("GET", f"/matches/{match_id}/{form}", headers=cookie)
        assert status == 200 and data  # the two hands played
        assert headers["content-disposition"] == f'attachment; filename="{name}"'


def test_tournament_configs_refused_with_one_line(served: Service) -> None:
    admin = served.tokens["alice"]
    assert served.api("POST", "/api/tournaments", admin, b"game = [") == (
        400, {"error": "the tournament config is not TOML: Invalid value (at end of document)"}
    )
    assert served.api("POST", "/api/tournaments", admin, b"colour = 1\n" + TOURNAMENT) == (
        400, {"error": "colour: unknown key (known: game, hands, series, seed, duplicate, bots, limits, workers, agents, output)"}
    )
    status, refused = served.api("POST", "/api/tournaments", admin, b"\xff\xfe")
    assert (status, refused) == (400, {"error": "the tournament config is not UTF-8 text"})
    status, refused = served.api("POST", "/api/tournaments", admin, b"#" * 100_000)
    assert (status, refused) == (413, {"error": "request body over 65536 bytes"})
    assert served.api("GET", "/api/tournaments/0123456789abcdef", admin) == (404, {"error": "no tournament '0123456789abcdef'"})
    assert served.api("GET", "/api/tournaments/..%2F..", admin)[0] == 404
    bob = session(log_in(served, served.tokens["bob"])[1])
    status, _, page = served.request("POST", "/admin/tournaments", headers={**bob, **FORM},
                                     raw=urlencode({"config": TOURNAMENT.decode()}).encode())
    assert status == 403 and b"only an admin submits tournaments" in page


def test_the_dask_address_tournaments_run_on(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text('[serve]\ndask = "tcp://scheduler:8786"\n')
    assert load_config(config, {}).dask == "tcp://scheduler:8786"
    assert load_config(None, {}).dask is None  # a local pool
    config.write_text("dask = 8786\n")
    with pytest.raises(ConfigError, match=r"^dask: not a scheduler address \(tcp://HOST:8786\): 8786$"):
        load_config(config, {})


#: What a page must show as text, never run (no slash: it goes in a URL's path too).
SCRIPT = "<img src=x onerror=alert(1)>"


def test_markup_that_users_write_is_text_on_every_page(served: Service) -> None:
    """A bot's name and a match's error (as a store could hold them), a
    tournament's game, submitter and output, a path, a query, a refused form and
    a refused config, each holding a script: every page shows it escaped."""
    store = Store(served.data)
    user, token = store.add_user("mallory", admin=True)
    match_id = secrets.token_hex(8)
    store.add_match(MatchRow(match_id, user.id, "kuhn", SCRIPT, 2, 1, False, "aborted", None, (), 0, None, None,
                             time.time(), None))
    store.update_match(match_id, error=SCRIPT)
    store.close()
    tournament_id = secrets.token_hex(8)
    folder = served.data / "tournaments" / tournament_id
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(json.dumps({
        "id": tournament_id, "by": SCRIPT, "game": SCRIPT, "bots": 2, "status": "finished",
        "submitted": time.time(), "finished": time.time(), "exit_status": 0,
    }))
    (folder / "stdout.txt").write_text(SCRIPT)
    cookie = session(log_in(served, token)[1])
    pages = {
        "lobby": served.request("GET", "/", headers=cookie),
        "match": served.request("GET", f"/matches/{match_id}", headers=cookie),
        "admin": served.request("GET", "/admin", headers=cookie),
        "tournament": served.request("GET", f"/tournaments/{tournament_id}", headers=cookie),
        "a path": served.request("GET", "/matches/" + quote(SCRIPT, safe=""), headers=cookie),
        "a query": served.request("GET", "/leaderboard?" + urlencode({"game": SCRIPT}), headers=cookie),
        "the login's next": served.request("GET", "/login?" + urlencode({"next": "/" + SCRIPT})),
        "a refused table": served.request("POST", "/tables", headers={**cookie, **FORM},
                                          raw=urlencode({"game": "kuhn", "opponent": SCRIPT, "hands": "2"}).encode()),
        "a refused config": served.request("POST", "/admin/tournaments", headers={**cookie, **FORM},
                                           raw=urlencode({"config": SCRIPT}).encode()),
    }
    for name, (status, _, page) in pages.items():
        assert status in (200, 400, 404), (name, status)
        assert b"<img" not in page and b"&lt;img src=x onerror=alert(1)&gt;" in page, (name, page)
    bob = session(log_in(served, served.tokens["bob"])[1])
    status, _, page = served.request("GET", f"/tournaments/{tournament_id}", headers=bob)
    assert status == 200 and b'id="tournament-status"' in page and b'id="tournament-output"' not in page  # an admin's
    assert served.api("GET", f"/api/tournaments/{tournament_id}", served.tokens["bob"])[1]["output"] is None  # the API's too
    assert served.api("GET", f"/api/tournaments/{tournament_id}", token)[1]["output"] == SCRIPT


def test_a_refused_table_or_config_comes_back_in_place(served: Service) -> None:
    """The lobby's form and the admin's box come back as they were filled, the reason beside them."""
    cookie = session(log_in(served, served.tokens["alice"])[1])
    status, _, page = served.request("POST", "/tables", headers={**cookie, **FORM},
                                     raw=b"game=kuhn&opponent=leduc-cfr&hands=7")
    assert status == 400
    assert b'<p class="error" id="error">bot leduc-cfr plays leduc, not kuhn</p>' in page
    assert b'<option value="kuhn" data-stem="kuhn.limit.2p" selected>Kuhn poker</option>' in page
    assert b'id="hands" value="7"' in page and b'<h2>Sit at a table</h2>' in page
    config = 'game = "kuhn"\nhands = 20\n'
    status, _, page = served.request("POST", "/admin/tournaments", headers={**cookie, **FORM},
                                     raw=urlencode({"config": config}).encode())
    assert status == 400 and b'<p class="error" id="error">seed: missing (a whole number)</p>' in page
    assert str(escape(config)).encode() + b"</textarea>" in page
    status, _, page = served.request("GET", "/admin", headers=cookie)  # at first the box holds the example
    assert status == 200 and str(escape(EXAMPLE)).encode() + b"</textarea>" in page


def test_the_admins_example_is_a_tournament_the_service_takes(tmp_path: Path) -> None:
    tournaments = Tournaments(tmp_path, None)
    admin = User(1, "alice", True, False, 0.0)
    status = tournaments.submit(admin, EXAMPLE.encode(), by_token=False)  # as the admin page's box sends it
    assert (status["game"], status["bots"], status["status"]) == ("leduc", 3, "queued")
    manual = (Path(__file__).parents[3] / "docs" / "hosting-web.md").read_text()
    assert f"```toml\n# leduc.toml\n{EXAMPLE}```" in manual  # the manual shows the example as the page does (named for its walk)


def test_the_match_list_and_the_match_page_say_one_status(tmp_path: Path) -> None:
    """One match playing at a time: a web table's, whose person's seat has
    joined (``running``, where the list once said ``waiting``), and an agent's
    waiting in the queue (``queued``, where both once said ``waiting``): the
    lobby's list and each match's page say the same word."""
    service = Service(tmp_path, max_matches=1).start()
    try:
        token = add_user(service.data, "alice")
        cookie = session(log_in(service, token)[1])
        status, headers, _ = service.request("POST", "/tables", headers={**cookie, **FORM},
                                             raw=b"game=kuhn&opponent=always-call&hands=2")
        assert status == 303
        table = headers["location"].split("/")[2]
        queued = service.api("POST", "/api/matches", token, b'{"game": "kuhn", "opponent": "always-call", "hands": 2}')[1]["id"]

        def words(path: str) -> list[str]:
            return re.findall(r'<span class="status (\w+)">', service.request("GET", path, headers=cookie)[2].decode())

        deadline = time.monotonic() + 30
        while words(f"/matches/{table}") != ["running"] and time.monotonic() < deadline:
            time.sleep(0.1)  # the table's seat joins as its dealer starts
        assert (words(f"/matches/{table}"), words(f"/matches/{queued}")) == (["running"], ["queued"])
        assert words("/") == ["queued", "running"]  # the newest first
    finally:
        service.stop()
