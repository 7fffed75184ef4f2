"""The tournament config's submitted agents (``{ sandboxed = FOLDER }``) and
``duplicate = false``: checked before anything is played, and scheduled as
they say (the matches themselves: tests/arena/serve/test_events.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import ConfigError, parse_config
from arena.tournament.play import schedule

BASE: dict[str, Any] = {"game": "kuhn", "hands": 10, "series": 3, "seed": 5, "bots": {"a": "always-call", "b": "always-raise"}}


def test_one_seating_a_match_takes_the_seatings_in_turn_by_series(tmp_path: Path) -> None:
    config = parse_config({**BASE, "duplicate": False}, tmp_path)
    assert [(job.key, job.seatings) for job in schedule(config)] == [
        ("s0:a:b", ((0, 1),)), ("s1:a:b", ((1, 0),)), ("s2:a:b", ((0, 1),))]
    assert config.identity()["duplicate"] is False
    duplicate = parse_config(BASE, tmp_path)
    assert schedule(duplicate)[0].seatings == ((0, 1), (1, 0))
    assert "duplicate" not in duplicate.identity()  # a tournament from before the key resumes as it was


def test_a_submitted_agent_is_its_folder_seated_in_the_sandbox(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / "startme.sh").write_text("#!/bin/sh\n")
    (folder / "startme.sh").chmod(0o755)
    try:
        config = parse_config({**BASE, "bots": {**BASE["bots"], "c": {"sandboxed": "theirs"}}}, tmp_path)
    except ConfigError as error:  # only where the sandbox cannot be set up, saying so
        assert str(error).startswith("bots.c.sandboxed: submitted agents cannot run here: ")
        return
    assert config.bots[2].sandboxed == str(folder) and config.bots[2].identity() == ["c", {"sandboxed": str(folder)}]
    job = next(job for job in schedule(config) if job.key == "s0:a:c")
    assert job.bots[1].sandboxed == str(folder) and job.seatings == ((0, 1), (1, 0))


@pytest.mark.parametrize(("change", "message"), [
    ({"duplicate": "yes"}, "duplicate: must be true or false, got 'yes'"),
    ({"bots": {"a": "always-call", "c": {"sandboxed": "nowhere"}}}, "bots.c.sandboxed: {base}/nowhere: no executable startme.sh in it"),
    ({"bots": {"a": "always-call", "c": {"sandboxed": "x", "command": "y"}}},
     'bots.c.command: unknown key (a submitted agent\'s table has only sandboxed = "path/folder")'),
    ({"bots": {"a": "always-call", "c": {"sandboxed": 3}}}, "bots.c.sandboxed: must be the path of the agent's folder, got 3"),
])
def test_a_bad_entrant_or_duplicate_is_one_line_naming_its_key(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({**BASE, **change}, tmp_path)
    assert str(refused.value) == message.format(base=tmp_path)
