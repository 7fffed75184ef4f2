"""Every page of the hosted arena on a phone (390 x 844) and on a desktop
(1280 x 800), in Chromium: none is wider than its viewport (a wide table
scrolls inside its own box, never the page), the web table included, and on
the phone every button, field and menu link of the site's pages is a 44 px
touch target, as are the table's (fold, call, raise, its settings, leave). Each page's screenshot is kept in the test's tmp_path (test
artefacts, not committed), to look at."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from tests.arena import test_play_browser
from tests.arena.serve.service_process import TOURNAMENT, Service, agent, served  # noqa: F401 (a fixture)
from tests.arena.serve.test_web_browser import log_in
from tests.arena.test_play_browser import browser, expect, page, your_turn  # noqa: F401 (fixtures)

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

pytestmark = test_play_browser.pytestmark  # skipped, saying why, where no Chromium is found

VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 800)}
#: The controls a thumb must hit, and their smallest side on the phone.
CONTROLS = "button, input, select, nav a, .games a, .links a"
TOUCH_PX = 44


def _finished_match(served: Service) -> str:
    """A ranked Kuhn match an agent played through the API (a leaderboard row; a page with every table)."""
    token = served.tokens["alice"]
    status, answer = served.api("POST", "/api/matches", token, b'{"game": "kuhn", "opponent": "always-call", "hands": 20}')
    assert status == 201, answer
    assert agent("127.0.0.1", served.next_port(token, answer["id"])).returncode == 0
    assert served.wait_status(token, answer["id"], ("finished",), timeout=240)["status"] == "finished"
    return str(answer["id"])


def _finished_tournament(served: Service) -> str:
    status, taken = served.api("POST", "/api/tournaments", served.tokens["alice"], TOURNAMENT)
    assert status == 201, taken
    _wait_over(served, f"/api/tournaments/{taken['id']}", ("queued", "running"))
    return str(taken["id"])


def _wait_over(served: Service, path: str, busy: tuple[str, ...]) -> None:
    """Until the tournament or event at ``path`` is no longer ``busy``: it must have finished."""
    deadline = time.monotonic() + 120
    while (state := served.api("GET", path, served.tokens["alice"])[1])["status"] in busy and time.monotonic() < deadline:
        time.sleep(0.5)
    assert state["status"] == "finished", state


def _finished_event(served: Service) -> str:
    """An event of three hosted bots (no sandbox needed), over: its page shows the rankings and the crosstable."""
    event = {"name": "Layout cup", "game": "kuhn", "hands": 10, "series": 1,
             "entrants": ["bot:always-call", "bot:always-raise", "bot:random"]}
    status, _, taken = served.request("POST", "/api/events", served.tokens["alice"], event)
    assert status == 201, taken
    _wait_over(served, f"/api/events/{taken['id']}", ("waiting", "running"))
    return str(taken["id"])


def test_every_page_fits_a_phone_and_a_desktop(served: Service, browser: BrowserContext, page: Page, tmp_path: Path) -> None:
    match_id, tournament_id, event_id = _finished_match(served), _finished_tournament(served), _finished_event(served)
    pages = {
        "login": "/login",
        "lobby": "/",
        "leaderboard": "/leaderboard?game=kuhn",
        "match": f"/matches/{match_id}",
        "admin": "/admin",
        "tournament": f"/tournaments/{tournament_id}",
        "report": f"/tournaments/{tournament_id}/report",
        "events": "/events",
        "event": f"/events/{event_id}",
        "not found": "/matches/0123456789abcdef",
    }
    browser.clear_cookies()
    log_in(page, served, "alice")
    page.select_option("#game", "kuhn")
    page.select_option("#opponent", "always-call")
    page.click("#sit-button")  # a table too: arena play's page, served by the arena
    expect(page.locator("#hand-number")).to_have_text("hand 1 of 10")
    pages["table"] = page.url.removeprefix(served.url)
    overflowing, small = [], []
    for size, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        for name, path in pages.items():
            page.goto(served.url + path)
            if name == "match":
                expect(page.locator("#replay-count")).to_have_text("of 20")  # the replayer has drawn its hand
            if name == "table":
                expect(page.locator("#hand-number")).to_have_text("hand 1 of 10")
                your_turn(page)  # its fold, call and raise buttons are up
            page.screenshot(path=str(tmp_path / f"{name.replace(' ', '-')}-{size}.png"), full_page=True)
            scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                overflowing.append(f"{name} at {size}: {scroll} px wide in {inner}")
            if size == "phone":
                found = page.eval_on_selector_all(
                    CONTROLS,
                    """(controls, least) => controls
                        .filter((c) => c.offsetParent !== null)
                        .map((c) => [c.id || c.textContent.trim() || c.name, c.getBoundingClientRect()])
                        .filter(([, box]) => Math.min(box.width, box.height) < least)
                        .map(([what, box]) => `${what} ${Math.round(box.width)}x${Math.round(box.height)}`)""",
                    TOUCH_PX,
                )
                small += [f"{name}: {what}" for what in found]
    assert overflowing == []
    assert small == []
    expect(page.locator("#tournament-output")).to_have_count(0)  # the report's page; only the tournament's shows output
    page.goto(f"{served.url}/tournaments/{tournament_id}/report")
    expect(page.locator("nav")).to_contain_text("leaderboard")  # the report in the site's layout, with its way back
    expect(page.locator("#back-to-tournament")).to_have_attribute("href", f"/tournaments/{tournament_id}")
    assert str(served.data) not in page.content()  # no folder of the server on a page a user sees
