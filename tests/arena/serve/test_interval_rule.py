"""One rule for when a 95% interval is shown (:func:`poker.stats.interval_shown`:
30 hands, or duplicate pairs), held by the five places a match's figure is
shown: the web table and the terminal table (a seat holding the match's own
hands), the match page, the API's ``result`` and the leaderboard (its JSON
and its page). Two Kuhn matches played by our agent through the API, one of
29 hands (no interval anywhere, the note in its place) and one of 30 (the
interval everywhere, the same numbers)."""

from __future__ import annotations

import re

import pytest

from agent.human.seat import HumanSeat, Limits
from agent.human.tui import _print_end
from poker.gamedef import load_game
from tests.arena.serve.service_process import Service, add_user, agent
from tests.arena.serve.test_web_pages import log_in, session

KUHN = load_game("kuhn")
NOTE = "a 95% interval after 30 hands"


def _played(service: Service, token: str, hands: int) -> str:
    status, answer = service.api(
        "POST", "/api/matches", token, f'{{"game": "kuhn", "opponent": "always-raise", "hands": {hands}}}'.encode()
    )
    assert status == 201, answer
    assert agent("127.0.0.1", service.next_port(token, answer["id"])).returncode == 0
    assert service.wait_status(token, answer["id"], ("finished",))["status"] == "finished"
    return str(answer["id"])


def _values(log: bytes, name: str) -> list[float]:
    """The user's value in each hand of an ACPC log (STATE:id:betting:cards:values:names)."""
    fields = [line.split(":") for line in log.decode().splitlines() if line.startswith("STATE:")]
    return [float(f[4].split("|")[f[5].split("|").index(name)]) for f in fields]


def _row(page: bytes, first_cells: str) -> str:
    """The table row of a page that begins with ``first_cells`` (its cells' text, as HTML)."""
    found = re.search(rf"<tr><td>{first_cells}</td>.*?</tr>", page.decode(), re.S)
    assert found is not None, page
    return found.group(0)


@pytest.mark.parametrize(("name", "hands"), [("short", 29), ("long", 30)])
def test_the_interval_rule_holds_on_the_tables_the_page_the_api_and_the_leaderboard(
    service: Service, name: str, hands: int
) -> None:
    shown = hands == 30
    token = add_user(service.data, name)
    match_id = _played(service, token, hands)
    user = service.api("GET", f"/api/matches/{match_id}", token)[1]["result"]["players"][0]
    estimate = user["estimate"]
    assert (estimate["hands"], estimate["interval_shown"]) == (hands, shown)  # the API
    assert user["aivat"]["interval_shown"] is shown  # every estimate of the match by the same rule

    cookie = session(log_in(service, token)[1])
    row = _row(service.request("GET", f"/matches/{match_id}", headers=cookie)[2], name)  # the match page
    assert (NOTE in row, "[" in row) == (not shown, shown), row

    board = service.api("GET", "/api/leaderboard?game=kuhn", token)[1]  # the leaderboard
    entry = next(e for e in board["entries"] if e["user"] == name)
    assert (entry["estimate"]["interval_shown"], entry["aivat"]["interval_shown"]) == (shown, shown)
    assert (entry["ranked"], "rank" in entry) == (shown, shown)  # the service's min_rank_hands is 10: the rule decides
    row = _row(service.request("GET", "/leaderboard?game=kuhn", headers=cookie)[2], rf"[^<]*</td><td>{name}")
    assert (row.count(NOTE), row.count("[")) == ((0, 2) if shown else (2, 0)), row  # AIVAT and the estimate

    # the web table and the terminal table, holding the match's own hands
    values = _values(service.request("GET", f"/api/matches/{match_id}/log", token)[2], name)
    seat = HumanSeat(KUHN, (name, "always-raise"), 0, hands=hands, limits=Limits(1, 1, 1), title="")
    seat._values = values  # what observe() appends, hand by hand
    result = seat.result()
    if shown:
        assert result["interval_note"] is None
        assert result["mean"] == pytest.approx(estimate["mean"])
        assert result["ci95"] == pytest.approx((estimate["interval"][1] - estimate["interval"][0]) / 2)
    else:
        assert (result["mean"], result["ci95"], result["interval_note"]) == (None, None, "no 95% interval under 30 hands")
    lines: list[str] = []
    _print_end(seat.snapshot(), lines.append)
    assert ("±" in lines[0], "no 95% interval under 30 hands" in lines[0]) == (shown, not shown), lines
