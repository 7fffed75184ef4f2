"""My agents in a real browser (Playwright, Chromium, as the other page
tests): the navigation's link, an archive chosen and uploaded through the
form, the page following the version's check until it is ready, and a
refused archive's reason shown beside the form."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.arena import test_play_browser
from tests.arena.serve.service_process import Service
from tests.arena.serve.test_agents import agent_archive, entry, served, tar_gz, world  # noqa: F401 (fixtures)
from tests.arena.test_play_browser import browser, expect, page  # noqa: F401 (fixtures)
from tests.sandbox.harness import NEEDS_SANDBOX

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [test_play_browser.pytestmark, NEEDS_SANDBOX]


def test_an_agent_uploaded_through_the_page_is_checked_ready(served: Service, page: Page, tmp_path: Path) -> None:
    page.goto(served.url + "/login?next=/")
    page.fill("#token", served.tokens["bob"])
    page.click("#login")
    page.wait_for_url(served.url + "/")
    page.click("nav >> text=my agents")
    expect(page.locator("h1")).to_have_text("My agents")
    page.fill("#agent-name", "browsed")
    page.select_option("#agent-game", "kuhn")
    page.set_input_files("#archive", str(tar_gz(tmp_path / "bad.tar.gz", [entry("startme.sh"), entry("/etc/x")])))
    page.click("#upload")
    expect(page.locator("#agent-error")).to_have_text("the archive holds an absolute path: '/etc/x'")
    page.set_input_files("#archive", str(agent_archive(tmp_path / "caller.tar.gz")))
    page.click("#upload")
    row = page.locator("#agents tr", has_text="browsed")
    expect(row.locator(".status")).to_have_text("ready", timeout=60_000)  # the page looks again while it is checking
    expect(row.locator("td").nth(1)).to_have_text("1")
    expect(page.locator("#agents tr.output pre")).to_contain_text("caller: the match is over")
