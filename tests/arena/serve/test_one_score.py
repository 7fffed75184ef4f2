"""One match, one score: the same Leduc match played by ``arena match`` and
by the hosted arena gives the same figures, to the last digit, in the command
line's table, ``results.json``, ``GET /api/matches/ID`` and the match page.

The user "random" plays our seeded random agent (the seed ``arena match``
gives its first agent), the hosted bot "always-fold" (no randomness): the
dealer deals the match seed's cards, so both runs write the same hands. The
bot's policy is known, so its AIVAT is the best estimate on both sides
(``arena match`` knows random's too, and keeps the narrower: always-fold's
here, with this seed)."""

from __future__ import annotations

import json
import subprocess
import sys
from html import escape
from pathlib import Path
from typing import Any

import pytest

from arena.commands.match import main as arena_match
from arena.match import agent_seed
from poker.stats import format_chips
from tests.arena.serve.service_process import Service, add_user, seat_env

HANDS, SEED = 40, 5
NAMES = ("random", "always-fold")


def cells(mean: float, low: float, high: float) -> str:
    """The match page's two cells of an estimate."""
    return f"<td>{mean:+.3f}</td><td>[{low:+.3f}, {high:+.3f}]</td>"


def command_line(tmp_path: Path, duplicate: bool, capsys: pytest.CaptureFixture[str]) -> tuple[list[list[str]], dict[str, Any]]:
    """``arena match``'s table rows (split into cells) and results.json."""
    run_dir = tmp_path / f"cli-{duplicate}"
    argv = ["leduc", "--hands", str(HANDS), "--seed", str(SEED), *NAMES, "--in-process", "--run-dir", str(run_dir)]
    capsys.readouterr()
    assert arena_match(argv + (["--duplicate"] if duplicate else [])) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.split()[:1] in (["random"], ["always-fold"])]
    return rows, json.loads((run_dir / "results.json").read_text())


def hosted(service: Service, token: str, cookie: dict[str, str], duplicate: bool) -> tuple[dict[str, Any], str]:
    """The hosted match's ``GET /api/matches/ID`` once it is over, and its page."""
    body = {"game": "leduc", "opponent": NAMES[1], "hands": HANDS, "seed": SEED, "duplicate": duplicate}
    status, _, answer = service.request("POST", "/api/matches", token, body)
    assert status == 201, answer
    for _ in answer["ports"]:
        port = service.next_port(token, answer["id"])
        played = subprocess.run(
            [sys.executable, "-m", "arena", "agent", "leduc", "127.0.0.1", str(port), "--strategy", "random",
             "--seed", str(agent_seed(SEED, 0))],
            capture_output=True, text=True, timeout=120, env=seat_env(port),
        )
        assert played.returncode == 0, played.stderr
    shown = service.wait_status(token, answer["id"], ("finished", "aborted"))
    assert shown["status"] == "finished", shown
    status, _, page = service.request("GET", f"/matches/{answer['id']}", headers=cookie)
    assert status == 200
    return shown["result"], page.decode()


@pytest.mark.parametrize("duplicate", [True, False])
def test_the_table_results_json_the_api_and_the_page_agree(
    service: Service, tmp_path: Path, duplicate: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    rows, document = command_line(tmp_path, duplicate, capsys)
    token = add_user(service.data, NAMES[0])
    status, headers, _ = service.request("POST", "/api/login", body={"token": token})
    assert status == 200
    cookie = {"Cookie": headers["set-cookie"].split(";", 1)[0]}
    result, page = hosted(service, token, cookie, duplicate)

    assert result["hands"] == sum(document["hands_played"]) == HANDS * (2 if duplicate else 1)
    table, best_rows = rows[:2], rows[2:]
    for k, (agent_row, player) in enumerate(zip(document["agents"], result["players"])):
        name = NAMES[k]
        assert agent_row["name"] == player["name"] == name
        # the headline figure: the duplicate estimate in a duplicate match, else the raw one
        headline = result["duplicate"][name] if duplicate else player["estimate"]
        mean, ci95 = agent_row["mean"], agent_row["ci95"]
        assert (headline["mean"], headline["interval"], headline["hands"]) == (mean, [mean - ci95, mean + ci95], agent_row["hands"])
        assert agent_row["total_chips"] == player["chips"]
        assert table[k] == [name, name, format_chips(player["chips"]), f"{mean:.3f}", f"±{ci95:.3f}"]
        # the page: the raw row, the duplicate row
        raw = player["estimate"]
        assert f"<tr><td>{name}</td><td>{player['chips']:+g}</td>{cells(raw['mean'], *raw['interval'])}</tr>" in page
        if duplicate:
            assert f"<tr><td>{escape(name)}</td>{cells(mean, mean - ci95, mean + ci95)}</tr>" in page
        # the best lower-variance estimate: AIVAT on always-fold's side
        best, best_row = player["best"], document["best_estimates"][k]
        assert best["estimator"] == best_row["estimator"] == ("aivat" if k else "-aivat of always-fold")
        low, high = best_row["mean"] - best_row["ci95"], best_row["mean"] + best_row["ci95"]
        assert (best["mean"], best["interval"], best["hands"]) == (best_row["mean"], [low, high], best_row["hands"])
        assert best_rows[k][-2:] == [f"{best_row['mean']:.3f}", f"±{best_row['ci95']:.3f}"]
        assert f'<tr class="best"><td>{name}</td><td>{escape(best["estimator"])}</td>{cells(best["mean"], low, high)}' in page
