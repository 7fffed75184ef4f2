"""``arena play`` end to end in a real browser: Playwright drives Debian's
Chromium (headless, a fresh profile) against the real command, and the tests
check what the page shows and what the dealer logged.

The deals are fixed by the seed and the bots are deterministic, so each
outcome is known in advance (worked out from :class:`poker.deal.Dealer`):

* leduc, seed 11: hand 1 you hold Qs, always-call Ks, board Qh (you win);
  hand 2 you hold Qs, always-call As, board Ks (you lose); with ``--seat 2``
  you hold Ks in hand 1 and As in hand 2;
* leduc.nolimit, seed 5: hand 1 you hold As, always-call Ks, board Qs;
* leduc.limit.3p, seed 2: hand 1 you hold Jh against Ah and Qs, board Js;
* holdem.nolimit (HUNL, blinds 50/100, stacks 20,000), seed 5, ``--seat 2``:
  hand 1 you hold 6d Qc as the small blind, board Ah 4s 6h Ts Ac.

Position 0 acts first in every round of these games; the dealer moves the
button, so you act first in hand 1 and (heads-up) last in hand 2.

The browser tests skip, saying why, only when no Chromium can be found (``make
test`` installs Debian's where it can); in CI they fail instead (:mod:`needs`).
The showdown screenshot goes to the test's tmp_path and, when
``ARENA_PLAY_SCREENSHOT`` names a file, there too (that is how
``docs/table-showdown.png`` is made).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import needs
from agent.human.web import WRONG_TOKEN
from tests.arena.play_process import PlayProcess

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = needs.unless(
    CHROMIUM is not None, "Chromium", "no chromium on PATH (apt-get install chromium; `make test` does that when run as root)"
)

sync_api = needs.importorskip("playwright.sync_api", "Playwright", "playwright is not installed (pip install -e '.[test]')")
expect = sync_api.expect


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        context.set_default_timeout(15_000)
        expect.set_options(timeout=15_000)  # generous: the suite shares two cores with everything else
        yield context
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    if not page.is_closed():
        page.close()
    assert not errors, f"the page's script failed: {errors}"


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., PlayProcess]]:
    processes: list[PlayProcess] = []

    def start(*args: str) -> PlayProcess:
        process = PlayProcess(tmp_path, *args, "--linger", "0.5")
        processes.append(process)
        return process

    yield start
    for process in processes:
        process.stop()


def your_turn(page: Page) -> None:
    expect(page.locator("#status")).to_have_text("Your turn.")


def layout(page: Page) -> list[tuple[float, float]]:
    """Where the felt, the seats and the controls are, and their sizes: what must not move between hands."""
    boxes = [page.locator(selector).bounding_box() for selector in ("#felt", "#opponents .player", "#me .player", "#controls")]
    return [(box["y"] + page.evaluate("window.scrollY"), box["height"]) for box in boxes if box is not None]


def finish(page: Page, play: PlayProcess) -> str:
    """Close the page: the command, done with its match, then exits."""
    page.close()
    status, out, err = play.finish()
    assert status == 0, err
    return out


def test_limit_leduc_one_hand_won_and_one_lost(start: Callable[..., PlayProcess], page: Page) -> None:
    play = start("leduc", "--opponent", "always-call", "--hands", "2", "--seed", "11")
    page.goto(play.url())
    expect(page.locator("#hand-number")).to_have_text("hand 1 of 2")
    expect(page.locator("#me .card")).to_have_attribute("data-card", "Qs")
    expect(page.locator("#opponents .card.back")).to_have_count(1)  # the bot's card, face down
    your_turn(page)
    expect(page.locator("#opponents .seat-clock")).to_have_text("10:00")  # the bot's clock, while yours runs
    expect(page.locator("#btn-fold")).to_be_hidden()  # nothing to call: folding is not offered
    expect(page.locator("#btn-call")).to_have_text("Check")
    expect(page.locator("#raise-box")).to_be_hidden()  # limit: one raise size, no slider
    expect(page.locator("#keys")).to_have_text("keys: f fold · c check/call · r bet/raise · n/Enter next hand · y replay it")  # no sizes
    expect(page.locator("#note")).to_be_hidden()  # limit: no stacks to reset
    expect(page.locator("#btn-units")).to_be_hidden()  # antes, no blinds: chips only
    expect(page.locator("#pot")).to_have_text("pre-flop · pot 2")
    expect(page.locator("#me .front")).to_have_text("")  # antes are the pot's: nothing in front yet
    at_first = layout(page)
    expect(page.locator("#clock")).to_have_text(re.compile(r"(10:00|9:5\d) left"))  # 10 minutes an action
    expect(page.locator("#opponents .dealer")).to_have_count(1)  # the bot acts second: it has the button
    expect(page.locator("#me .dealer")).to_have_count(0)
    page.keyboard.press("r")
    # the bot's call comes with the flop: its bubble and chips stay up a moment before the card
    expect(page.locator("#opponents .bubble")).to_have_text("calls 2")
    expect(page.locator("#opponents .front")).to_have_text("2")
    expect(page.locator("#board .card")).to_have_count(0)
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    expect(page.locator("#opponents .bubble")).to_have_text("")  # a new street: no actions yet
    expect(page.locator("#pot")).to_have_text("flop · pot 6")
    expect(page.locator("#betting")).to_contain_text("pre-flop: you bet 2, always-call calls 2")
    your_turn(page)
    expect(page.locator("#btn-raise")).to_have_text("Bet 4")  # the flop's chips: 3 each were in before it
    page.click("#btn-raise")
    expect(page.locator("#banner")).to_have_text("You won 7 at showdown")
    assert layout(page) == at_first  # the result screen, with its hand names and values, keeps the table in place
    expect(page.locator("#opponents .card")).to_have_attribute("data-card", "Ks")
    expect(page.locator("#me .best")).to_have_text("pair of queens")
    expect(page.locator("#opponents .best")).to_have_text("king-queen high")
    expect(page.locator("#result")).to_have_text("+7 chips over 1 hand · no 95% interval under 30 hands")
    expect(page.locator("#history li")).to_have_count(1)
    expect(page.locator("#figures")).to_have_text("1 hand · net +7 chips · no 95% interval under 30 hands")
    page.click("#btn-replay")  # the hand again, action by action, on the felt
    expect(page.locator("#status")).to_have_text("Replay of hand 1: 0 of 4 actions")
    expect(page.locator("#opponents .card.back")).to_have_count(1)  # the bot's card face down again
    expect(page.locator("#board .card")).to_have_count(0)
    expect(page.locator("#status")).to_have_text("Replay of hand 1: 2 of 4 actions")
    expect(page.locator("#opponents .bubble")).to_have_text("calls 2")
    expect(page.locator("#pot")).to_have_text("pre-flop · pot 6")
    expect(page.locator("#status")).to_have_text("Replay of hand 1: 3 of 4 actions")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    expect(page.locator("#me .bubble")).to_have_text("bet 4")
    expect(page.locator("#opponents .front")).to_have_text("")
    expect(page.locator("#banner")).to_have_text("You won 7 at showdown")  # the end: the hand as it finished
    expect(page.locator("#status")).to_have_text("Hand finished.")
    expect(page.locator("#graph polyline")).to_have_attribute("points", "0.0,58.0 200.0,2.0")  # from 0 to +7 after hand 1
    page.wait_for_timeout(1000)  # hand 2 has begun behind the finished one: the bot checked, your turn is open
    # its clock runs from now (the dealer's), so it shows on this screen too
    expect(page.locator("#clock")).to_have_text(re.compile(r"next hand: (10:00|9:5\d) left to act"))
    page.keyboard.press("n")
    expect(page.locator("#hand-number")).to_have_text("hand 2 of 2")
    expect(page.locator("#clock")).to_be_visible()
    expect(page.locator("#me .dealer")).to_have_count(1)  # the dealer moved the button
    your_turn(page)
    assert layout(page) == at_first
    page.keyboard.press("c")
    expect(page.locator("#betting")).to_contain_text("flop: K♠ always-call checks")
    expect(page.locator("#opponents .bubble")).to_have_text("checks")  # the bot acted first: its bubble is up
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#banner")).to_have_text("You lost 1 at showdown")
    expect(page.locator("#history li").first).to_contain_text("pre-flop: always-call checks, you check; flop: always-call checks, you check")
    expect(page.locator("#opponents .card")).to_have_attribute("data-card", "As")
    expect(page.locator("#status")).to_have_text("The match is over.")
    expect(page.locator("#result")).to_have_text("+6 chips over 2 hands · no 95% interval under 30 hands")
    out = finish(page, play)
    assert play.states() == [
        "STATE:0:rc/rc:Qs|Ks/Qh:7|-7:you|always-call",
        "STATE:1:cc/cc:As|Qs/Ks:1|-1:always-call|you",
    ]
    assert re.search(r"^you +6 +3\.000 +-$", out, re.M), out  # no interval under 30 hands, as the page said


def test_no_limit_raise_chosen_on_the_slider(start: Callable[..., PlayProcess], page: Page) -> None:
    play = start("leduc.nolimit", "--opponent", "always-call", "--hands", "2", "--seed", "5")
    page.goto(play.url())
    your_turn(page)
    expect(page.locator("#keys")).to_contain_text("r bet/raise · digits type an amount · m h t p x a min, ½, ⅔, pot, 2.5×, all-in")
    expect(page.locator("#note")).to_have_text("Stacks reset to 1200 chips at the start of every hand (the ACPC rule).")
    slider = page.locator("#raise-slider")
    expect(slider).to_have_attribute("min", "0")
    expect(slider).to_have_attribute("max", "1000")  # a notch a chip, from a bet of 100 to 1100
    # the antes of 100 are the pot's: a bet, and no 2.5x of a bet that is not there
    expect(page.locator("#presets button")).to_have_text(["min", "½ pot", "⅔ pot", "pot", "all-in"])
    page.click("#presets [data-preset='pot']")  # nothing to call, 200 in the pot: a pot-sized bet is 200
    expect(page.locator("#raise-to")).to_have_value("200")
    expect(slider).to_have_value("100")
    slider.fill("450")
    expect(page.locator("#raise-to")).to_have_value("550")
    expect(page.locator("#btn-raise")).to_have_text("Bet 550")
    page.click("#btn-raise")
    expect(page.locator("#betting")).to_contain_text("pre-flop: you bet 550, always-call calls 550")
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#banner")).to_have_text("You won 650 at showdown")
    page.keyboard.press("Enter")
    your_turn(page)
    page.keyboard.press("a")  # the all-in shortcut
    expect(page.locator("#raise-to")).to_have_value("1100")
    page.keyboard.press("h")  # half the pot after calling (100 + 100) is the minimum here
    expect(page.locator("#raise-to")).to_have_value("100")
    page.keyboard.type("1200")  # digits type an amount into the box: above the stack, refused on the page
    page.keyboard.press("Enter")
    expect(page.locator("#error")).to_have_text("bet an amount from 100 to 1100")
    page.fill("#raise-to", "")
    page.keyboard.type("1100")
    page.keyboard.press("Enter")
    expect(page.locator("#banner")).to_have_text("You won 1200 at showdown")
    finish(page, play)
    assert play.states() == [
        "STATE:0:r650c/cc:As|Ks/Qs:650|-650:you|always-call",
        "STATE:1:cr1200c/:Qs|Kh/Ah:-1200|1200:always-call|you",
    ]


def test_fold_then_the_next_hand(start: Callable[..., PlayProcess], page: Page) -> None:
    play = start("leduc", "--opponent", "always-raise", "--hands", "2", "--seed", "11", "--seat", "2", "--t-response", "30000")
    page.goto(play.url())
    your_turn(page)
    expect(page.locator("#clock")).to_have_text(re.compile(r"0:(30|2\d) left"))  # the dealer's 30 s per action
    expect(page.locator("#betting")).to_contain_text("pre-flop: always-raise bets 2")
    expect(page.locator("#btn-call")).to_have_text("Call 2")
    page.keyboard.press("f")
    expect(page.locator("#banner")).to_have_text("You lost 1 (you folded)")
    expect(page.locator("#opponents .card.back")).to_have_count(1)  # a fold shows no cards
    # hand 2 is dealt at once and you act first: its clock runs, and shows, over hand 1's result
    expect(page.locator("#clock")).to_have_text(re.compile(r"next hand: 0:(30|2\d) left to act"))
    page.click("#btn-next")
    expect(page.locator("#hand-number")).to_have_text("hand 2 of 2")
    your_turn(page)
    expect(page.locator("#btn-call")).to_have_text("Check")
    page.keyboard.press("c")
    expect(page.locator("#betting")).to_contain_text("you check, always-raise bets 2")
    your_turn(page)
    page.keyboard.press("f")
    expect(page.locator("#status")).to_have_text("The match is over.")
    finish(page, play)
    assert play.states() == [
        "STATE:0:rf:Qs|Ks:1|-1:always-raise|you",
        "STATE:1:crf:As|Qs:-1|1:you|always-raise",
    ]


def test_an_abort_is_shown_with_its_reason_at_once(start: Callable[..., PlayProcess], page: Page) -> None:
    """The dealer's clock runs out on the person (1.5 s to act): within 2 s the
    page says the match is over and why, its buttons and clock gone, and shows
    the result; no "Your turn." at 0:00 with live buttons."""
    play = start("leduc", "--opponent", "always-call", "--hands", "3", "--seed", "11", "--t-response", "1500")
    page.goto(play.url())
    your_turn(page)
    expect(page.locator("#status")).to_contain_text("ERROR: could not get action from seat 1", timeout=1500 + 2000)
    expect(page.locator("#status")).to_contain_text("The match is over. the dealer aborted after 0 hands")
    expect(page.locator("#actions")).to_be_hidden()
    expect(page.locator("#clock")).to_be_hidden()
    expect(page.locator("#btn-leave")).to_be_hidden()
    expect(page.locator("#end-result")).to_have_text("Your result: 0 chips over 0 hands")
    expect(page.locator("#end-links")).to_be_hidden()  # arena play has no match page to go to
    page.close()
    status, _, err = play.finish()
    assert status == 1 and "could not get action from seat 1" in err


def test_leaving_the_table_ends_the_match(start: Callable[..., PlayProcess], page: Page) -> None:
    """"Leave the table" (confirmed) ends the match at once, as q does at the terminal table."""
    play = start("leduc", "--opponent", "always-call", "--hands", "3", "--seed", "11")
    page.goto(play.url())
    your_turn(page)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#btn-leave")
    expect(page.locator("#status")).to_have_text("The match is over. you left the table", timeout=2000)
    expect(page.locator("#actions")).to_be_hidden()
    page.close()
    status, _, err = play.finish()
    assert status == 130 and "you left the table" in err


def test_a_dropped_connection_and_a_reload_mid_hand_resume(start: Callable[..., PlayProcess], page: Page) -> None:
    play = start("leduc", "--opponent", "always-call", "--hands", "2", "--seed", "11")
    url = play.url()
    page.goto(url)
    your_turn(page)
    page.keyboard.press("r")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    your_turn(page)
    assert page.evaluate("connections") == 1
    page.evaluate("socket.close()")  # the connection drops: the page reconnects by itself
    page.wait_for_function("connections === 2")
    expect(page.locator("#conn")).to_have_text("connected")
    your_turn(page)
    page.reload()
    expect(page.locator("#conn")).to_have_text("connected")
    expect(page.locator("#hand-number")).to_have_text("hand 1 of 2")
    expect(page.locator("#me .card")).to_have_attribute("data-card", "Qs")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Qh")
    expect(page.locator("#betting")).to_contain_text("pre-flop: you bet 2, always-call calls 2")
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#banner")).to_have_text("You won 3 at showdown")
    page.goto("about:blank")  # the page goes away altogether, then comes back
    page.goto(url)
    expect(page.locator("#banner")).to_have_text("You won 3 at showdown")  # still waiting for "next"
    page.keyboard.press("n")
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#betting")).to_contain_text("flop: K♠ always-call checks")
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#status")).to_have_text("The match is over.")
    finish(page, play)
    assert play.states()[0] == "STATE:0:rc/cc:Qs|Ks/Qh:3|-3:you|always-call"


def test_three_players_to_showdown(start: Callable[..., PlayProcess], page: Page, tmp_path: Path) -> None:
    play = start("leduc.limit.3p", "--opponent", "always-call", "--opponent", "always-call", "--hands", "2", "--seed", "2")
    page.goto(play.url())
    expect(page.locator("#opponents .player")).to_have_count(2)
    for _ in range(2):
        your_turn(page)
        page.keyboard.press("c")
    expect(page.locator("#banner")).to_have_text("You won 2 at showdown")
    expect(page.locator("#board .card")).to_have_attribute("data-card", "Js")
    shown = page.locator("#opponents .card")
    expect(shown).to_have_count(2)
    assert sorted(shown.nth(i).get_attribute("data-card") or "" for i in range(2)) == ["Ah", "Qs"]
    screenshot = tmp_path / "table-showdown.png"
    page.screenshot(path=str(screenshot))
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("ARENA_PLAY_SCREENSHOT"):
        shutil.copyfile(screenshot, os.environ["ARENA_PLAY_SCREENSHOT"])
    page.keyboard.press("n")
    for _ in range(2):
        your_turn(page)
        page.keyboard.press("c")
    expect(page.locator("#status")).to_have_text("The match is over.")
    play.process.send_signal(signal.SIGINT)  # with the page still open: after the match, Ctrl-C just closes up
    status, _, err = play.finish()
    assert status == 0, err
    first = play.states()[0]
    assert first.startswith("STATE:0:ccc/ccc:Jh|Ah|Qs/Js:2|-1|-1:you|always-call-1|always-call-2")


def test_bad_messages_are_refused_and_the_match_goes_on(start: Callable[..., PlayProcess], page: Page) -> None:
    play = start("leduc", "--opponent", "always-call", "--hands", "2", "--seed", "11")
    url = play.url()
    page.goto(url)
    your_turn(page)
    replies = page.evaluate(
        """async () => {
        const ws = new WebSocket(`ws://${location.host}/ws${location.search}`);
        const replies = [];
        ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === "error") replies.push(m.message); };
        await new Promise((ok) => { ws.onopen = ok; });
        const decision = await new Promise((ok) => {
            ws.addEventListener("message", (e) => { const m = JSON.parse(e.data); if (m.legal) ok(m.legal.decision); });
        });
        for (const text of ["not json", "[1, 2]", '{"type": "act"}', '{"type": "next", "x": 1}',
                            JSON.stringify({type: "act", decision: decision + 1, action: "call"}),
                            JSON.stringify({type: "act", decision: decision, action: "fold"}),
                            JSON.stringify({type: "act", decision: decision, action: "call", size: true}),
                            JSON.stringify({type: "act", decision: decision, action: "call", size: 999}),
                            JSON.stringify({type: "next"}),
                            "x".repeat(5000)]) {
            ws.send(text);
        }
        ws.send(new Uint8Array([0, 255, 1]));
        await new Promise((ok) => setTimeout(ok, 500));
        const closed = new Promise((ok) => { ws.onclose = (e) => ok(e.code); });
        ws.send("x".repeat(70000));
        const code = await closed;
        const stranger = new WebSocket(`ws://${location.host}/ws?token=wrong`);
        const refused = await new Promise((ok) => { stranger.onclose = (e) => ok([e.code, e.reason]); });
        return {replies, code, refused};
    }"""
    )
    assert replies["replies"] == [
        "message is not JSON",
        "message is not a JSON object",
        "an act message has the fields type, decision, action and, for a raise, size",
        "a next message has no other fields",
        "that decision is over; the table has moved on",
        "fold is not legal when a check is free",
        "size must be a whole number of chips below 2147483648",
        "size is only for a no-limit raise, not to call",
        "there is no finished hand to move on from",
        "message longer than 1024 bytes",  # refused like the others: the connection stays
        "message is not JSON",
    ]
    assert replies["code"] == 1009  # past 64 KiB: that connection is closed, nothing else
    assert replies["refused"] == [1008, WRONG_TOKEN]
    your_turn(page)  # the seat and the page's own connection are untouched
    page.keyboard.press("c")
    expect(page.locator("#board .card")).to_have_count(1)
    your_turn(page)
    page.keyboard.press("c")
    expect(page.locator("#banner")).to_have_text("You won 1 at showdown")


def test_a_page_without_its_token_says_so(start: Callable[..., PlayProcess], page: Page) -> None:
    """Without the token (or with a wrong one) the page says what is wrong and
    stops reconnecting, instead of an empty felt and "reconnecting..." for ever."""
    play = start("leduc", "--opponent", "always-call", "--hands", "1", "--seed", "11")
    url = play.url()
    for address in (url.split("?")[0], url.split("?")[0] + "?token=wrong"):
        page.goto(address)
        expect(page.locator("#fatal")).to_have_text(WRONG_TOKEN)
        expect(page.locator("#conn")).to_have_text("refused")
        page.wait_for_timeout(1000)  # no reconnecting
        expect(page.locator("#conn")).to_have_text("refused")
        expect(page.locator("#status")).to_have_text("")
    page.goto(url)  # the right address still works
    expect(page.locator("#fatal")).to_be_hidden()
    your_turn(page)


def test_hunl_on_a_phone_in_big_blinds(start: Callable[..., PlayProcess], page: Page, tmp_path: Path) -> None:
    """HUNL at 390x844 on a touch screen: amounts in big blinds (chips on the
    toggle), the presets set the slider, the side panel goes below the felt,
    nothing sticks out sideways, and no keyboard hints."""
    play = start("holdem.nolimit", "--opponent", "always-call", "--hands", "1", "--seed", "5", "--seat", "2")
    page.set_viewport_size({"width": 390, "height": 844})
    cdp = page.context.new_cdp_session(page)  # a phone's pointer: coarse, no hover
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    page.goto(play.url())
    your_turn(page)
    expect(page.locator("#note")).to_have_text("Stacks reset to 20000 chips (200 BB) at the start of every hand (the ACPC rule).")
    expect(page.locator("#keys")).to_be_hidden()
    expect(page.locator("#pot")).to_have_text("pre-flop · pot 1.5 BB")
    expect(page.locator("#opponents .front")).to_have_text("1 BB")  # the blinds, in front of each seat
    expect(page.locator("#me .front")).to_have_text("0.5 BB")
    expect(page.locator("#btn-call")).to_have_text("Call 0.5 BB")
    queen = page.locator("#me .card[data-card='Qc']")
    expect(queen).to_have_css("color", "rgb(17, 17, 17)")  # two colours: clubs black
    page.click("#btn-colours")
    expect(queen).to_have_css("color", "rgb(18, 122, 52)")  # four: clubs green
    expect(page.locator("#me .card[data-card='6d']")).to_have_css("color", "rgb(29, 85, 196)")  # diamonds blue
    expect(page.locator("#btn-raise")).to_have_text("Raise to 2 BB")  # the minimum
    slider = page.locator("#raise-slider")
    expect(slider).to_have_attribute("max", "198")  # a big blind a notch, 2 BB to 200 BB
    for preset, box, notch in [("pot", "3", "1"), ("2.5×", "2.5", "1"), ("all-in", "200", "198"), ("½ pot", "2", "0")]:
        page.click(f"#presets [data-preset='{preset}']")
        expect(page.locator("#raise-to")).to_have_value(box)
        expect(slider).to_have_value(notch)
    slider.fill("4")
    expect(page.locator("#btn-raise")).to_have_text("Raise to 6 BB")
    felt, panel = page.locator("#felt").bounding_box(), page.locator("aside").bounding_box()
    assert felt is not None and panel is not None
    assert panel["y"] >= felt["y"] + felt["height"], (felt, panel)  # below, not over
    assert felt["width"] > 340 and panel["width"] > 340, (felt, panel)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sticks out sideways
    page.screenshot(path=str(tmp_path / "table-390.png"), full_page=True)
    page.click("#btn-units")  # chips instead
    expect(page.locator("#btn-call")).to_have_text("Call 50")
    expect(page.locator("#raise-to")).to_have_value("600")
    assert page.evaluate("beeps") == 0  # sound is off unless turned on
    page.click("#btn-sound")
    page.click("#btn-raise")
    expect(page.locator("#betting")).to_contain_text("pre-flop: you raise to 600, always-call calls 500")
    page.click("#btn-units")
    expect(page.locator("#betting")).to_contain_text("pre-flop: you raise to 6 BB, always-call calls 5 BB")
    for _ in range(3):  # check it down: flop, turn, river
        your_turn(page)
        page.click("#btn-call")
    expect(page.locator("#status")).to_have_text("The match is over.")
    assert page.evaluate("beeps") == 3  # a tone at each of your turns since: flop, turn, river
    expect(page.locator("#history li")).to_contain_text("river: always-call checks, you check")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finish(page, play)
    assert play.states() == ["STATE:0:r600c/cc/cc/cc:3h7d|6dQc/Ah4s6h/Ts/Ac:-600|600:always-call|you"]
