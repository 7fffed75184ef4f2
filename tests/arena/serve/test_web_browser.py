"""The hosted arena in a real browser: Playwright drives Chromium (as the
``arena play`` tests do, with their browser and page fixtures) against ``arena
serve`` run as a process: the login and its cookie, the lobby, a hand played
at a web table against a hosted bot, the match page, the leaderboard and the
replayer, and tournaments submitted by an admin (a non-admin is refused).

The deal is fixed by the seed and always-call is deterministic: leduc, seed
11, hand 1: you hold Qs, always-call Ks, board Qh (you win 7 raising twice);
hand 2: you hold Qs, always-call As, board Ks (you lose 1 checking through).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from arena.serve.pages import LOGGED_OUT
from arena.serve.httpkit import SESSION_COOKIE
from poker.gamedef import game_names
from tests.arena import test_play_browser
from arena.serve.hosting import REVOKED, REVOKED_POLL_S
from arena.serve.store import Store
from arena.serve.hosting import QUEUED
from arena.serve.tables import LEAVING, LEFT_BEFORE
from tests.arena.serve.service_process import TOURNAMENT, Service, add_user, served  # noqa: F401 (a fixture)
from tests.arena.test_play_browser import browser, expect, page, your_turn  # noqa: F401 (fixtures)

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

pytestmark = test_play_browser.pytestmark  # skipped, saying why, where no Chromium is found


def log_in(page: Page, served: Service, name: str, path: str = "/") -> None:
    page.goto(served.url + path)
    page.fill("#token", served.tokens[name])
    page.click("#login")
    # The login page moves on by script once the cookie is set: wait for it, or the caller's next
    # navigation races that one ("interrupted by another navigation").
    page.wait_for_url(lambda url: not url.startswith(served.url + "/login"))


def sit_at_leduc(page: Page, served: Service, name: str) -> None:
    """Log ``name`` in and open a 10-hand Leduc table against always-call from the lobby."""
    log_in(page, served, name)
    page.select_option("#game", "leduc")
    page.select_option("#opponent", "always-call")
    page.fill("#hands", "10")
    page.click("#sit-button")


def test_a_page_without_a_session_goes_to_the_login(served: Service, browser: BrowserContext, page: Page) -> None:
    browser.clear_cookies()
    page.goto(served.url + "/leaderboard?game=kuhn")
    assert page.url == served.url + "/login?next=%2Fleaderboard%3Fgame%3Dkuhn"
    page.fill("#token", "not-a-token")
    page.click("#login")
    expect(page.locator("#error")).to_have_text("wrong token: log in with the token arena users add printed")
    page.fill("#token", served.tokens["bob"])
    page.click("#login")
    expect(page.locator("h1")).to_have_text("Leaderboard: Kuhn poker")  # back where the person was going
    (cookie,) = [c for c in browser.cookies() if c["name"] == SESSION_COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    assert served.tokens["bob"] not in cookie["value"]  # a session id, not the token
    page.goto(served.url + "/admin")
    expect(page.locator("#error")).to_have_text("only an admin sees this page")
    page.click("#logout")
    expect(page.locator("h1")).to_have_text("Log in")
    page.goto(served.url + "/")
    assert page.url == served.url + "/login?next=%2F"
    refused = page.evaluate("""() => new Promise((ok) => {
        const socket = new WebSocket(`ws://${location.host}/tables/0123456789abcdef/ws`);
        socket.onclose = (e) => ok([e.code, e.reason]);
    })""")
    assert refused == [1008, LOGGED_OUT]  # a table's socket without a session: the page says why


def test_a_hand_at_a_web_table_then_the_match_the_leaderboard_and_the_replayer(
    served: Service, browser: BrowserContext, page: Page
) -> None:
    log_in(page, served, "alice")
    expect(page.locator("h1")).to_have_text("Lobby")
    expect(page.locator("#bots")).to_contain_text("leduc-cfr")
    page.select_option("#game", "leduc")
    page.select_option("#opponent", "always-call")
    page.fill("#hands", "2")
    page.fill("#seed", "11")
    page.click("#sit-button")
    expect(page.locator("#hand-number")).to_have_text("hand 1 of 2")  # arena play's table, in the service
    expect(page.locator("#title")).to_have_text("alice vs always-call · leduc")
    expect(page.locator("#me .card")).to_have_attribute("data-card", "Qs")
    your_turn(page)
    page.keyboard.press("r")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    your_turn(page)
    page.click("#btn-raise")
    expect(page.locator("#banner")).to_have_text("You won 7 at showdown")
    page.reload()  # the seat outlives the page
    expect(page.locator("#banner")).to_have_text("You won 7 at showdown")
    page.keyboard.press("n")
    your_turn(page)
    page.keyboard.press("c")
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#status")).to_have_text("The match is over.")
    match_id = page.url.rstrip("/").split("/")[-1]
    page.click("#lobby")
    expect(page.locator("#matches")).to_contain_text(match_id)
    # the match is over once it is scored with the bot's AIVAT: on a cold numba cache that compiles first (a minute or two, once)
    served.wait_status(served.tokens["alice"], match_id, ("finished",), timeout=240)
    page.click(f"text={match_id}")
    expect(page.locator("#summary")).to_contain_text("finished")
    expect(page.locator("#hands-played")).to_have_text("2 hands played")
    expect(page.locator("#result tr").nth(1)).to_contain_text("alice")
    expect(page.locator("#result tr").nth(1)).to_contain_text("+6")
    expect(page.locator("#estimators tr.best")).to_have_count(2)  # each player's best estimate marked
    aivat = page.locator("#estimators tr").last  # the bot's side: its AIVAT, of which alice's is the negative
    expect(aivat).to_contain_text("aivat")
    expect(aivat).to_contain_text("-1.600")
    # the replayer: hand 1, step by step; the board comes with round 2
    expect(page.locator("#replay-count")).to_have_text("of 2")
    expect(page.locator("#replay-board .card")).to_have_count(0)
    expect(page.locator("#replay-seats .card")).to_have_count(2)
    for _ in range(2):
        page.click("#step")
    expect(page.locator("#replay-actions li.current")).to_have_text("round 1: always-call call 2 (pot 6)")
    expect(page.locator("#replay-board .card")).to_have_count(0)
    page.click("#step")
    expect(page.locator("#replay-board .card")).to_have_attribute("data-card", "Qh")
    page.click("#step")
    expect(page.locator("#replay-result")).to_have_text("alice +7, always-call -7")
    page.click("#next-hand")
    expect(page.locator("#replay-title")).to_have_text("seating 1, hand 2: step 0 of 4")
    log = page.request.get(f"{served.url}/matches/{match_id}/log").text()
    assert "STATE:0:rc/rc:Qs|Ks/Qh:7|-7:alice|always-call" in log
    page.goto(served.url + "/leaderboard?game=leduc")  # the seed was chosen: practice, on no leaderboard
    expect(page.locator("#leaderboard tr").nth(1)).to_have_text("no finished match of this game yet")
    status, mine = served.api("GET", f"/api/matches/{match_id}", served.tokens["alice"])
    assert status == 200 and mine["status"] == "finished" and mine["result"]["hands"] == 2 and mine["practice"] is True
    assert served.api("GET", f"/api/matches/{match_id}", served.tokens["bob"])[0] == 404
    page.goto(f"{served.url}/matches/{match_id}")
    browser.clear_cookies()
    log_in(page, served, "bob", f"/matches/{match_id}")  # another person's match: not found
    expect(page.locator("#error")).to_have_text(f"no match '{match_id}'")


def test_tournaments_are_an_admins(served: Service, browser: BrowserContext, page: Page) -> None:
    status, refused = served.api("POST", "/api/tournaments", served.tokens["bob"], TOURNAMENT)
    assert (status, refused) == (403, {"error": "only an admin submits tournaments (arena users add NAME --admin)"})
    assert served.api("POST", "/api/tournaments", "wrong", TOURNAMENT)[0] == 401
    status, refused = served.api("POST", "/api/tournaments", served.tokens["alice"], b'output = "x"\n' + TOURNAMENT)
    assert status == 400 and "output" in refused["error"]
    status, taken = served.api("POST", "/api/tournaments", served.tokens["alice"], TOURNAMENT)
    assert status == 201 and taken["status"] == "queued" and taken["game"] == "kuhn" and taken["bots"] == 2
    deadline = time.monotonic() + 90
    while True:
        status, state = served.api("GET", f"/api/tournaments/{taken['id']}", served.tokens["bob"])
        if state["status"] not in ("queued", "running") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert state["status"] == "finished", state["output"]
    browser.clear_cookies()
    log_in(page, served, "alice", f"/tournaments/{taken['id']}")
    expect(page.locator("#tournament-status")).to_contain_text("finished")
    page.click("#report-link")
    expect(page.locator("body")).to_contain_text("caller")
    expect(page.locator("body")).to_contain_text("raiser")
    page.goto(served.url + "/admin")
    expect(page.locator("#tournaments")).to_contain_text(taken["id"])
    page.fill("#config", 'game = "kuhn"\nhands = 20\n[bots]\nonly = "always-call"\n')
    page.click("#submit-tournament")
    expect(page.locator("#error")).to_have_text("seed: missing (a whole number)")  # refused whole, in one line, before anything runs


def test_choosing_a_game_keeps_an_opponent_that_plays_it(served: Service, browser: BrowserContext, page: Page) -> None:
    """The lobby's default opponent (leduc-cfr) plays leduc only: another game
    chosen brings its own named bot, else a simple bot, never one the table
    refuses; the list offers only the bots that play the game chosen."""
    status, bots = served.api("GET", "/api/bots", served.tokens["alice"])
    assert status == 200
    plays = {bot["name"]: bot["game"] for bot in bots["bots"]}
    browser.clear_cookies()
    log_in(page, served, "alice")
    chosen = {}
    offered = {}
    for game in ("kuhn", "hunl", "leduc.nolimit", "hulhe", "leduc"):
        page.goto(served.url + "/")  # from the defaults: leduc against leduc-cfr
        page.select_option("#game", game)
        chosen[game] = page.locator("#opponent").input_value()
        offered[game] = page.eval_on_selector_all("#opponent option:not([disabled])", "options => options.map(o => o.value)")
    assert offered["kuhn"] == ["kuhn-cfr", "always-call", "always-raise", "always-fold", "random", "probe"]
    assert offered["leduc"][0] == "leduc-cfr" and "kuhn-cfr" not in offered["leduc"]
    stems = game_names()
    named = {game: next((n for n, g in plays.items() if g is not None and stems[g] == stems[game]), "always-call")
             for game in chosen}  # the first hosted bot of the game (which ones are hosted depends on files present)
    assert chosen == named
    assert (chosen["kuhn"], chosen["leduc"]) == ("kuhn-cfr", "leduc-cfr")
    page.select_option("#opponent", "always-raise")  # a simple bot chosen stays through a change of game
    page.select_option("#game", "kuhn")
    assert page.locator("#opponent").input_value() == "always-raise"


def test_two_tables_at_once(served: Service, browser: BrowserContext, page: Page) -> None:
    """Two tables of one person, each its own match: what happens at one leaves the other as it was."""
    browser.clear_cookies()
    log_in(page, served, "alice")
    other = browser.new_page()
    tables = []
    for tab in (page, other):
        tab.goto(served.url + "/")
        tab.select_option("#game", "leduc")
        tab.select_option("#opponent", "always-call")
        tab.fill("#hands", "2")
        tab.fill("#seed", "11")
        tab.click("#sit-button")
        your_turn(tab)
        tables.append(tab.url)
    assert tables[0] != tables[1]
    page.keyboard.press("r")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    expect(other.locator("#board .card")).to_have_count(0)  # the other table still waits in round 1
    other.keyboard.press("c")
    expect(other.locator("#board .card")).to_have_attribute("data-card", "Qh")
    expect(page.locator("#betting")).to_contain_text("alice bets 2")
    expect(other.locator("#betting")).not_to_contain_text("raise")
    other.close()


def test_leaving_a_table_frees_its_slot_at_once(browser: BrowserContext, page: Page, tmp_path: Path) -> None:
    """With one match a user: "leave the table" ends the match by the abort
    rule (aborted, the user the culprit, the hands not played charged), the
    page says so within 2 s, and "play again" opens a new table at once."""
    service = Service(tmp_path, max_matches_per_user=1)
    service.tokens = {"carol": add_user(service.data, "carol")}
    service.start()
    try:
        browser.clear_cookies()
        sit_at_leduc(page, service, "carol")
        your_turn(page)
        first = page.url.removeprefix(service.url + "/tables/").strip("/")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-leave")
        expect(page.locator("#status")).to_have_text(f"The match is over. {LEAVING}", timeout=2000)
        expect(page.locator("#end-match")).to_have_attribute("href", f"/matches/{first}")
        match = service.api("GET", f"/api/matches/{first}", service.tokens["carol"])[1]
        assert (match["status"], match["result"]["players"][0]["charged"]) == ("aborted", 10)
        page.click("#btn-again")  # the same game, bot and hands, at once: the slot is free
        your_turn(page)
        assert page.url != f"{service.url}/tables/{first}/"
        expect(page.locator("#hand-number")).to_have_text("hand 1 of 10")
    finally:
        service.stop()


def test_a_table_waiting_in_the_queue_can_be_left_uncharged(browser: BrowserContext, page: Page, tmp_path: Path) -> None:
    """One match plays at once, and an agent's match holds that place: the
    table's page says its match waits in the queue; "leave" cancels it (the
    page says so within 2 s), aborted with nothing charged, and its slot is
    free for another match."""
    service = Service(tmp_path, max_matches=1, max_matches_per_user=2)
    service.tokens = {"erin": add_user(service.data, "erin")}
    service.start()
    try:
        token = service.tokens["erin"]
        status, holding = service.api("POST", "/api/matches", token, b'{"game": "leduc", "opponent": "always-call", "hands": 10}')
        assert status == 201, holding
        browser.clear_cookies()
        sit_at_leduc(page, service, "erin")
        expect(page.locator("#status")).to_have_text(f"The match has not begun: {QUEUED}.")
        waiting = page.url.removeprefix(service.url + "/tables/").strip("/")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-leave")
        expect(page.locator("#fatal")).to_have_text(LEFT_BEFORE, timeout=2000)
        expect(page.locator("#btn-leave")).to_be_hidden()
        match = service.wait_status(token, waiting, ("aborted",), timeout=10)
        assert (match["status"], match["error"], match["result"]["hands"]) == ("aborted", LEFT_BEFORE, 0)
        assert match["result"]["players"][0]["charged"] == 0
        status, again = service.api("POST", "/api/matches", token, b'{"game": "leduc", "opponent": "always-call", "hands": 10}')
        assert status == 201, again  # the slot is free: 2 matches a user, the first one and this one
        board = service.api("GET", "/api/leaderboard?game=leduc", token)[1]
        assert board["entries"] == []  # the cancelled match counts for nothing
    finally:
        service.stop()


def test_an_aborted_table_says_why_within_two_seconds(served: Service, browser: BrowserContext, page: Page) -> None:
    """The match ends under the person (here their token is revoked, which the
    host sees within REVOKED_POLL_S): the table says so, with the reason, and
    its buttons go, within 2 s of the abort; no "Your turn." with live buttons."""
    served.tokens["dave"] = add_user(served.data, "dave")
    browser.clear_cookies()
    log_in(page, served, "dave")
    page.select_option("#game", "leduc")
    page.select_option("#opponent", "always-call")
    page.click("#sit-button")
    your_turn(page)
    store = Store(served.data)
    try:
        store.revoke("dave")
    finally:
        store.close()
    expect(page.locator("#status")).to_have_text(f"The match is over. {REVOKED}", timeout=(REVOKED_POLL_S + 2) * 1000)
    expect(page.locator("#actions")).to_be_hidden()
    expect(page.locator("#clock")).to_be_hidden()
    expect(page.locator("#end-result")).to_have_text("Your result: 0 chips over 0 hands")
