"""``arena tournament`` with external-command bots (ACPC ``startme.sh HOST PORT``):
a real ``arena agent`` process behind a shell script plays as our own agent does;
a bot that crashes, or never connects, forfeits its seatings (its blinds for the
hands it did not finish) and the tournament goes on; nothing it started lingers."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.commands.tournament import main
from arena.tournament import parse_config, run_tournament
from arena.match import KEEP_BYTES, MatchPlan, keep_output, seating_config
from arena.tournament.external import forfeit_charges
from dealer.log import read_log
from poker.gamedef import load_game

HANDS = 30


def script(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path.relative_to(path.parent.parent))


def startme_body(strategy: str) -> str:
    """The line of a startme.sh that plays: `arena agent GAME HOST PORT`."""
    return f'exec "{sys.executable}" -m arena agent leduc "$1" "$2" --strategy {strategy} --seed 5\n'


def startme(directory: Path, strategy: str) -> str:
    """An ACPC-style submission: a shell script that runs `arena agent GAME HOST PORT`."""
    return script(directory / "sub" / "startme.sh", startme_body(strategy))


def tournament(directory: Path, bots: dict[str, Any], output: str, **extra: Any) -> tuple[dict[str, Any], list[str]]:
    document = {"game": "leduc", "hands": HANDS, "seed": 4, "workers": 2, "output": output, "bots": bots, **extra}
    return run_tournament(parse_config(document, directory), progress=False)


def running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan waits for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def forfeits(output: Path) -> dict[str, list[str]]:
    with sqlite3.connect(output / "tournament.db") as connection:
        return {m: json.loads(f) for m, f in connection.execute("SELECT match, forfeits FROM matches")}


def test_a_startme_script_plays_as_our_agent_does(tmp_path: Path) -> None:
    """cfr vs a startme.sh running `arena agent --strategy always-raise` (one process per
    seating, output kept per seat) gives the chips cfr vs in-process always-raise gives."""
    command = {"command": startme(tmp_path, "always-raise")}
    ours, failures = tournament(tmp_path, {"cfr": "leduc-cfr", "raiser": command}, "external")
    assert failures == []
    theirs, failures = tournament(tmp_path, {"cfr": "leduc-cfr", "raiser": "always-raise"}, "internal")
    assert failures == []
    assert ours == theirs and sum(v for _, v, _ in ours["s0:cfr:raiser"]) == 0
    # our bot as a `python -m agent` process beside the command: the same again
    processes, failures = tournament(tmp_path, {"cfr": "leduc-cfr", "raiser": command}, "processes", agents="process")
    assert failures == [] and processes == ours
    assert (tmp_path / "processes" / "matches" / "s0_cfr_raiser" / "match.1.player1.std").exists()
    assert forfeits(tmp_path / "external") == {"s0:cfr:raiser": []}
    run = tmp_path / "external" / "matches" / "s0_cfr_raiser"
    assert (run / "match.1.player2.err").exists() and (run / "match.2.player1.err").exists()
    assert "SCORE:" in (run / "match.1.log").read_text()


@pytest.mark.slow  # about 10 s: each never-connecting seating waits out the 1.5 s start timeout
def test_a_bot_that_crashes_or_never_connects_forfeits_and_the_tournament_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = script(tmp_path / "crash" / "startme.sh", 'echo "crash: no model file" >&2\nexit 3\n')
    # never connects, and leaves a child behind: both must be gone after its match
    sleeper = script(tmp_path / "sleeper" / "startme.sh", 'sleep 60 &\necho $$ $! >> pids\nwait\n')
    config = tmp_path / "t.toml"
    config.write_text(
        f'game = "leduc"\nhands = {HANDS}\nseed = 4\nworkers = 2\noutput = "out"\n'
        f'[bots]\ncfr = "leduc-cfr"\n'
        f'crash = {{ command = "{crash}" }}\nsleeper = {{ command = "{sleeper}" }}\n'
        "[limits]\nstart_timeout_ms = 1500\n"
    )
    assert main([str(config), "--bootstrap", "0"]) == 0  # forfeits are results, not failures
    out = capsys.readouterr().out
    lost = forfeits(tmp_path / "out")
    assert len(lost) == 3  # every pairing played
    for match in ("s0:cfr:crash", "s0:cfr:sleeper"):
        assert [line.split(": ")[1].split(" forfeits")[0] for line in lost[match]] == [
            f"{match.split(':')[2]} (seat 2)",  # seating 1: cfr in seat 1
            f"{match.split(':')[2]} (seat 1)",
        ]
    assert {line.split(": ")[1].split(" (")[0] for line in lost["s0:crash:sleeper"]} <= {"crash", "sleeper"}
    # (when both fail the dealer names one seat: the first it waits for)
    assert all(f"forfeits hands 1..{HANDS}: " in line for lines in lost.values() for line in lines)
    text = " ".join(lost["s0:cfr:crash"])
    assert "exited with status 3 before the match was over: crash: no model file" in text
    assert "the dealer: ERROR: timed out waiting for seat" in " ".join(lost["s0:cfr:sleeper"])
    # each forfeited hand costs the culprit its ante (Leduc: 1 chip), paid to the other seat
    with sqlite3.connect(tmp_path / "out" / "tournament.db") as connection:
        values = dict(connection.execute("SELECT match, \"values\" FROM matches").fetchall())
    assert json.loads(values["s0:cfr:crash"]) == [2 * HANDS, -2 * HANDS]
    assert json.loads(values["s0:cfr:sleeper"]) == [2 * HANDS, -2 * HANDS]
    assert sum(json.loads(values["s0:crash:sleeper"])) == 0
    assert f"forfeited seatings ({sum(map(len, lost.values()))}):" in out
    for rule in ("total bankroll", "bankroll instant run-off", "series instant run-off"):
        assert "\n1     cfr " in out.split(f"\n{rule} ")[1]  # the one bot that played wins every ranking
    pids = [int(pid) for pid in (tmp_path / "sleeper" / "pids").read_text().split()]
    assert len(pids) >= 2 and not any(map(running, pids))  # each script and its child were killed with their seating


@pytest.mark.parametrize(
    ("failed", "first", "hands", "expected"),
    [
        ({1}, 0, 4, (4.0, -4.0)),  # Leduc antes of 1: one chip a hand
        ({0}, 3, 4, (-1.0, 1.0)),
        ({0, 1}, 0, 4, (0.0, 0.0)),
        (set(), 0, 4, (0.0, 0.0)),
    ],
)
def test_forfeit_charges_leduc(failed: set[int], first: int, hands: int, expected: tuple[float, ...]) -> None:
    assert forfeit_charges(load_game("leduc"), failed, first, hands) == expected


def test_forfeit_charges_follow_the_button() -> None:
    """Heads-up reverse blinds (10 5): seat s has position (s - h) mod 2 in hand h, and
    position 0 posts the big blind; a seat that fails from hand 1 of 4 pays 5+10+5."""
    game = load_game("hulhe")
    assert game.blind == (10, 5)
    assert forfeit_charges(game, {0}, 1, 4) == (-20.0, 20.0)  # hands 1, 2, 3: positions 1, 0, 1
    assert forfeit_charges(game, {1}, 1, 4) == (25.0, -25.0)  # positions 0, 1, 0
    three = load_game("kuhn3p")
    charges = forfeit_charges(three, {2}, 0, 3)  # one hand in each position, ante 1 each
    assert charges == (1.5, 1.5, -3.0)


@pytest.mark.parametrize("then", ["exits", "hangs"])
def test_a_bot_that_leaves_or_hangs_mid_match_forfeits_what_it_did_not_finish(then: str, tmp_path: Path) -> None:
    """A submission that connects, reads its first state, then exits (the dealer sees a
    dead peer) or never answers (the dealer's t_response runs out): the dealer aborts and
    the bot pays its ante for every hand the log does not hold."""
    leave = (
        "import socket, sys, time; s = socket.create_connection((sys.argv[1], int(sys.argv[2])));"
        f' s.sendall(b"VERSION:2.0.0\\r\\n"); s.recv(1); time.sleep({60 if then == "hangs" else 0})'
    )
    quitter = script(tmp_path / "quitter" / "startme.sh", f'exec "{sys.executable}" -c \'{leave}\' "$1" "$2"\n')
    bots = {"cfr": "leduc-cfr", "quitter": {"command": quitter}}
    stored, failures = tournament(tmp_path, bots, "out", limits={"t_response_ms": 2000})
    assert failures == []
    lines = forfeits(tmp_path / "out")["s0:cfr:quitter"]
    assert [line.split(": ")[1].split(" forfeits")[0] for line in lines] == ["quitter (seat 2)", "quitter (seat 1)"]
    if then == "hangs":
        assert all("the dealer: ERROR: could not get action from seat" in line for line in lines)
    with sqlite3.connect(tmp_path / "out" / "tournament.db") as connection:
        (seat_values,) = connection.execute("SELECT seat_values FROM matches").fetchone()
    logs = sorted((tmp_path / "out" / "matches" / "s0_cfr_quitter").glob("match.*.log"))
    assert len(logs) == 2
    for seating, (log, totals) in enumerate(zip(logs, json.loads(seat_values))):
        hands = read_log(log, load_game("leduc"))
        assert hands.score is None and len(hands.hands) < HANDS
        culprit = 1 - seating  # the quitter's seat
        finished = sum(dict(zip(h.names, h.values))["quitter"] for h in hands.hands)
        assert totals[culprit] == finished - (HANDS - len(hands.hands))  # then an ante per hand it left
        assert totals[seating] == -totals[culprit]
    assert dict((p, v) for p, v, _ in stored["s0:cfr:quitter"])["quitter"] < 0


def test_a_database_from_before_forfeits_gains_the_column(tmp_path: Path) -> None:
    from arena.tournament import runner as tournament

    old = tournament._SCHEMA.replace("    forfeits TEXT NOT NULL DEFAULT '[]',", "    -- (no forfeits yet)")
    assert "forfeits TEXT" not in old
    with sqlite3.connect(tmp_path / "tournament.db") as connection:
        connection.executescript(old)
        connection.execute(
            'INSERT INTO matches (match, series, seed, players, "values", hands, seatings, seat_values, logs, warnings)'
            " VALUES ('s0:a:b', 0, 1, '[]', '[]', 2, '[]', '[]', '[]', 0)"
        )
    connection = tournament._connect(tmp_path / "tournament.db")
    try:
        assert tournament._forfeits(connection) == []  # the old match: no forfeits
    finally:
        connection.close()


class Flood(trio.abc.ReceiveStream):
    """``total`` bytes of a bot's output, in chunks of one reused buffer (so
    that tracemalloc sees only what the capture allocates): ``b"<"`` first,
    ``b">"`` last, ``b"."`` between."""

    def __init__(self, total: int, chunk: int = 65536) -> None:
        self.left = total
        self.middle = b"." * chunk
        self.first = True

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        size = min(self.left, len(self.middle), max_bytes or len(self.middle))
        self.left -= size
        if size == 0:
            return b""
        chunk = self.middle if size == len(self.middle) else self.middle[:size]
        if self.first:
            self.first = False
            return b"<" + chunk[1:]
        return chunk[:-1] + b">" if self.left == 0 else chunk

    async def aclose(self) -> None:
        pass


def test_a_flooded_stream_keeps_its_head_and_tail_in_bounded_memory(tmp_path: Path) -> None:
    """256 MiB through the capture: 64 KiB at each end and the count of the rest
    on disk, and no more than a few chunks in memory at any time."""
    total = 256 * 2**20
    path = tmp_path / "flood.std"
    tracemalloc.start()
    try:
        trio.run(keep_output, Flood(total), path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 * 2**20
    saved = path.read_bytes()
    head, marker, tail = saved[:KEEP_BYTES], saved[KEEP_BYTES:-KEEP_BYTES], saved[-KEEP_BYTES:]
    assert head.startswith(b"<") and tail.endswith(b">") and set(head[1:] + tail[:-1]) == {ord(".")}
    assert marker.decode() == f"\n[arena: {total - 2 * KEEP_BYTES} bytes dropped here: only the first and the last {KEEP_BYTES} are kept]\n"
    small = tmp_path / "small.std"
    trio.run(keep_output, Flood(3 * KEEP_BYTES // 2), small)
    assert small.stat().st_size == 3 * KEEP_BYTES // 2  # nothing dropped: kept whole


def test_a_bot_that_floods_stdout_and_stderr_keeps_the_cap_on_disk_and_plays(tmp_path: Path) -> None:
    """A startme.sh that writes 64 MiB to each stream before it plays (`timeout 2 yes`
    wrote 2.2 GB): each .std/.err keeps at most its head, tail and the dropped count,
    and the match is played out."""
    flood = 64 * 2**20
    body = f"head -c {flood} /dev/zero\nhead -c {flood} /dev/zero >&2\n{startme_body('always-raise')}"
    loud = script(tmp_path / "loud" / "startme.sh", body)
    started = time.monotonic()
    stored, failures = tournament(tmp_path, {"cfr": "leduc-cfr", "loud": {"command": loud}}, "out")
    assert time.monotonic() - started < 120
    assert failures == [] and forfeits(tmp_path / "out") == {"s0:cfr:loud": []}
    assert sum(v for _, v, _ in stored["s0:cfr:loud"]) == 0
    kept = list((tmp_path / "out" / "matches" / "s0_cfr_loud").glob("match.*.player*.*[dr]"))
    assert len(kept) == 4  # .std and .err of the loud seat in each seating
    for path in kept:
        data = path.read_bytes()
        after = len(data) - 1 - data.rindex(b"\0")  # what the agent wrote after the flood (.err: its closing line)
        assert path.stat().st_size <= 2 * KEEP_BYTES + 200
        assert f"[arena: {flood + after - 2 * KEEP_BYTES} bytes dropped here" in data.decode(errors="replace")


def test_results_csv_follows_the_schedule_so_identical_runs_give_identical_files(tmp_path: Path) -> None:
    """results.csv listed the matches as they finished: here the slow bot's matches come
    first in the schedule and finish last (3 workers, all at once)."""
    slow = {"command": script(tmp_path / "slow" / "startme.sh", "sleep 3\n" + startme_body("always-call"))}
    bots = {"slow": slow, "caller": "always-call", "raiser": "always-raise"}
    files = []
    for output in ("first", "second"):
        stored, failures = tournament(tmp_path, bots, output, workers=3)
        assert failures == []
        files.append((tmp_path / output / "results.csv").read_bytes())
    assert files[0] == files[1]
    rows = files[0].decode().splitlines()[1:]
    assert [row.split(",")[0] for row in rows[::2]] == ["s0:slow:caller", "s0:slow:raiser", "s0:caller:raiser"]


def test_each_seating_of_an_external_bot_is_capped_at_what_its_limits_allow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24 item 2: the dealer charges every line to the seat's clock, and the
    match itself gets a wall-clock cap derived from the limits (a seat that stalls
    the dealer some other way, e.g. by never reading, cannot hold a tournament)."""
    from arena.tournament import play as tournament_play
    from dealer.budget import match_deadline_s

    seen: list[Any] = []

    def capture(plan: MatchPlan) -> Any:
        seen.extend(seating_config(plan, index) for index in range(len(plan.seatings)))
        raise RuntimeError("captured")

    monkeypatch.setattr(tournament_play, "play_seatings", capture)
    bots = {"cfr": "leduc-cfr", "raiser": {"command": startme(tmp_path, "always-raise")}}
    config = parse_config({"game": "leduc", "hands": HANDS, "seed": 4, "output": "o", "bots": bots}, tmp_path)
    (job,) = tournament_play.schedule(config)
    with pytest.raises(RuntimeError, match="captured"):
        tournament_play.play_match(job)
    assert len(seen) == 2
    for seating in seen:
        expected = match_deadline_s(seating.limits, num_hands=HANDS, num_seats=2)
        assert 10 < expected < float("inf") and seating.match_limit_s == expected
