"""``arena connect`` (issue 44): the reference ``example_player``, which knows
nothing of seat keys, plays a hosted duplicate match through the local relay,
which takes each seat with its key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from arena.commands._kit import EXIT_USAGE
from tests.arena.serve.service_process import Service, add_user
from tests.needs import missing

ROOT = Path(__file__).resolve().parents[3]
#: Where the reference programs are built (``make example_player`` in a clone of
#: project_acpc_server, as docs/results.md builds its dealer), unless $ACPC_SERVER names another folder.
EXAMPLE_PLAYER = Path(os.environ.get("ACPC_SERVER", "/tmp/acpc_server")) / "example_player"
KUHN_GAME = ROOT / "poker" / "games" / "kuhn.limit.2p.game"


def _connect(service: Service, match_id: str, token: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "arena", "connect", service.url, match_id]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ARENA_TOKEN": token})


def test_example_player_plays_a_hosted_match_through_the_relay(tmp_path: Path) -> None:
    if not EXAMPLE_PLAYER.is_file():
        missing("example_player", f"no reference example_player at {EXAMPLE_PLAYER} (make example_player in a clone of"
                                  " github.com/dmorrill10/project_acpc_server there, or name its folder in $ACPC_SERVER)")
    service = Service(tmp_path).start()
    try:
        alice = add_user(service.data, "alice")
        match = service.request("POST", "/api/matches", alice,
                                {"game": "kuhn", "opponent": "always-call", "hands": 10, "duplicate": True})[2]
        relay = _connect(service, match["id"], alice)
        try:
            assert relay.stdout is not None
            first = relay.stdout.readline()
            listening = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", first)
            assert listening, first
            for _ in match["ports"]:  # one connection per seating, as against the reference dealer
                played = subprocess.run([str(EXAMPLE_PLAYER), str(KUHN_GAME), "127.0.0.1", listening[1]],
                                        capture_output=True, text=True, timeout=120)
                assert played.returncode == 0, played.stderr
            out, err = relay.communicate(timeout=60)
        finally:
            relay.kill()
        shown = service.wait_status(alice, match["id"], ("finished", "aborted"))
    finally:
        service.stop()
    assert (relay.returncode, err) == (0, "")
    players = ", ".join(f"{player['name']} {player['chips']:+g}" for player in shown["result"]["players"])
    assert out == f"match {match['id']} finished: 20 hands; chips: {players}\n"
    assert shown["status"] == "finished" and shown["result"]["hands"] == 20


def test_a_wrong_token_is_one_line_before_anything_listens(service: Service) -> None:
    relay = _connect(service, "0123abcd", "not-a-token")
    out, err = relay.communicate(timeout=60)
    assert (relay.returncode, out) == (EXIT_USAGE, "")
    assert err.startswith("arena connect: error: ") and err.count("\n") == 1 and " 401 " in err, err
