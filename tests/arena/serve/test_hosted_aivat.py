"""A hosted HUNL match against ``hunl-modicum`` is scored by AIVAT with the
bot's own values (issue 45): the bot, our agent in a process of its own,
records its policy and values beside each seating's log as it plays, and the
match's ``result`` gives each player an ``aivat`` figure naming that value
function. (The variance cut itself is a benchmark's: benchmarks/variance_hunl.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.arena.serve.service_process import Service, add_user, agent


def test_a_hosted_hunl_match_is_scored_with_the_bots_own_values(tmp_path: Path) -> None:
    service = Service(tmp_path, t_response_ms=20000).start()
    try:
        token = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", token, {"game": "hunl", "opponent": "hunl-modicum", "hands": 4})[2]
        played = agent("127.0.0.1", service.next_port(token, match["id"], timeout=120), game="hunl")
        assert played.returncode == 0, played.stderr
        shown = service.wait_status(token, match["id"], ("finished", "aborted"), timeout=120)
        assert (shown["status"], shown["result"]["hands"]) == ("finished", 4), shown
        assert (service.data / "matches" / match["id"] / "seating0.hunl-modicum.values.msgpack").is_file()
        alice, bot = shown["result"]["players"]
        assert bot["aivat"]["value_function"].startswith("RecordedValues: the bot's own re-solve values"), bot["aivat"]
        assert alice["aivat"]["mean"] == -bot["aivat"]["mean"]
    finally:
        service.stop()
