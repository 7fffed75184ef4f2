"""The match API of ``arena serve`` as a script sees it: the contract, tokens,
other users' matches, bad requests, and duplicate matches played by our
``arena agent`` from other processes through the ports the API gave (a
hold'em one for the hand histories, PHH and PokerStars text)."""

from __future__ import annotations

import socket
from pathlib import Path

import msgpack

from analysis.hands import concat
from analysis.logs import read_log
from analysis.phh import read_phh
from arena.serve.config import ServeConfig
from arena.serve.hosting import hosted_bot
from tests.arena.serve.service_process import Service, add_user, agent, seat_key
from tests.holdem_matches import assert_same_hands

UNAUTHORIZED = "missing or wrong token: send Authorization: Bearer TOKEN (arena users add NAME prints one)"


def _routes(match_id: str) -> list[tuple[str, str]]:
    return [
        ("GET", "/api/me"),
        ("POST", "/api/logout"),
        ("GET", "/api/bots"),
        ("POST", "/api/matches"),
        ("GET", "/api/matches"),
        ("GET", f"/api/matches/{match_id}"),
        ("GET", f"/api/matches/{match_id}/log"),
        ("GET", f"/api/matches/{match_id}/hands"),
        ("GET", f"/api/matches/{match_id}/phh"),
        ("GET", f"/api/matches/{match_id}/pokerstars"),
        ("GET", "/api/leaderboard?game=kuhn"),
    ]


def test_a_duplicate_match_played_through_the_ports(service: Service) -> None:
    token = add_user(service.data, "alice")
    status, _, answer = service.request(
        "POST", "/api/matches", token, {"game": "kuhn", "opponent": "always-call", "hands": 10, "seed": 7, "duplicate": True}
    )
    assert status == 201
    assert sorted(answer) == ["host", "id", "ports", "seat_keys"] and answer["host"] == "127.0.0.1" and len(answer["ports"]) == 2
    match_id, ports = answer["id"], answer["ports"]
    assert len(set(answer["seat_keys"])) == 2 and all(len(key) == 32 for key in answer["seat_keys"])  # one per seating
    assert service.next_port(token, match_id) == ports[0]
    assert seat_key(ports[0]) == answer["seat_keys"][0]
    assert service.request("GET", f"/api/matches/{match_id}", token)[2]["status"] == "waiting"

    first = agent("127.0.0.1", ports[0])
    assert first.returncode == 0, first.stderr
    assert service.next_port(token, match_id) == ports[1]
    shown = service.request("GET", f"/api/matches/{match_id}", token)[2]
    assert shown["status"] == "running" and shown["result"]["seatings"][0] == {"port": ports[0], "hands": 10, "complete": True}
    second = agent("127.0.0.1", ports[1])
    assert second.returncode == 0, second.stderr

    shown = service.wait_status(token, match_id, ("finished", "aborted"))
    assert shown["status"] == "finished" and shown["error"] is None and shown["next_port"] is None
    result = shown["result"]
    assert result["hands"] == 20
    # Both seats always call with the same cards swapped: each hand's duplicate value is exactly 0.
    assert result["duplicate"]["alice"] == {
        "mean": 0.0, "interval": [0.0, 0.0], "hands": 10, "unit": "chips/hand", "interval_shown": False
    }
    alice, bot = result["players"]
    assert (alice["name"], bot["name"]) == ("alice", "always-call") and alice["chips"] == 0.0 == bot["chips"]
    assert alice["estimate"]["hands"] == 20

    status, headers, log = service.request("GET", f"/api/matches/{match_id}/log", token)
    assert status == 200 and headers["content-type"].startswith("text/plain")
    lines = log.decode().splitlines()
    assert sum(line.startswith("STATE:") for line in lines) == 20 and sum(line.startswith("SCORE:") for line in lines) == 2
    status, _, hands = service.request("GET", f"/api/matches/{match_id}/hands", token)
    records = list(msgpack.Unpacker(__import__("io").BytesIO(hands), raw=False))
    assert status == 200 and len(records) == 22  # a header and ten hands per seating

    status, _, listing = service.request("GET", "/api/matches", token)
    assert status == 200 and [m["id"] for m in listing["matches"]] == [match_id]
    assert listing["matches"][0]["status"] == "finished"

    assert [p["best"]["estimator"] for p in result["players"]] == ["-aivat of always-call", "aivat"]
    # A remote agent remembers seating 1's cards in seating 2 (and the seed was chosen): practice, never ranked.
    assert shown["practice"] is True
    status, _, board = service.request("GET", "/api/leaderboard?game=kuhn", token)
    assert (status, board["entries"]) == (200, [])


def test_a_hold_em_match_as_phh_and_pokerstars_text(service: Service, tmp_path: Path) -> None:
    """The ``.phhs`` download is the seatings' logs hand by hand, with the seats' names."""
    token = add_user(service.data, "alice")
    status, _, answer = service.request(
        "POST", "/api/matches", token, {"game": "holdem.limit", "opponent": "always-call", "hands": 3, "seed": 7, "duplicate": True}
    )
    assert status == 201
    match_id = answer["id"]
    for port in answer["ports"]:
        assert service.next_port(token, match_id) == port
        played = agent("127.0.0.1", port, "holdem.limit", "random")
        assert played.returncode == 0, played.stderr
    assert service.wait_status(token, match_id, ("finished", "aborted"))["status"] == "finished"

    status, headers, phh = service.request("GET", f"/api/matches/{match_id}/phh", token)
    assert status == 200 and headers["content-type"] == "application/toml; charset=utf-8"
    (tmp_path / "match.phhs").write_bytes(phh)
    hands = read_phh(tmp_path / "match.phhs")
    logs = [service.data / "matches" / match_id / f"seating{index}.log" for index in (0, 1)]
    assert_same_hands(concat([read_log(log) for log in logs]), hands)
    assert len(hands) == 6 and {frozenset(hands.names_at(row)) for row in range(6)} == {frozenset({"alice", "always-call"})}

    status, headers, text = service.request("GET", f"/api/matches/{match_id}/pokerstars", token)
    assert status == 200 and headers["content-type"] == "text/plain; charset=utf-8"
    blocks = text.decode().split("\n\n\n")
    assert len(blocks) == 7 and blocks[-1] == ""  # six hands, each followed by two blank lines
    assert [block.split(":", 1)[0] for block in blocks[:6]] == [f"PokerStars Hand #{n}" for n in (0, 1, 2) * 2]


def test_a_re_solving_bot_plays_in_a_process_of_its_own(tmp_path: Path) -> None:
    """``hunl-modicum`` re-solves at every decision (up to seconds of CPU): the
    service seats it as our agent in another process, so its event loop keeps
    serving; the match plays out as any other. The service keeps the shipped
    limits here (60 s to connect, 10 s a decision), not the other tests' short
    ones: the bot's process solves the pre-flop root before it connects, which
    on a loaded 2-core machine (a test run beside a benchmark) took over 10 s."""
    assert hosted_bot("hunl-modicum", "hunl-modicum", 1).process  # our agent in a process of its own
    assert not hosted_bot("hulhe-ir50", "hulhe-ir50", 1).process and not hosted_bot("random", "random", 1).process
    shipped = ServeConfig()
    service = Service(tmp_path, start_timeout_s=shipped.start_timeout_s, t_response_ms=shipped.t_response_ms).start()
    try:
        token = add_user(service.data, "alice")
        status, _, answer = service.request("POST", "/api/matches", token, {"game": "hunl", "opponent": "hunl-modicum", "hands": 2, "seed": 5})
        assert status == 201
        played = agent("127.0.0.1", service.next_port(token, answer["id"]), "hunl", "always-call")
        assert played.returncode == 0, played.stderr
        shown = service.wait_status(token, answer["id"], ("finished", "aborted"))
    finally:
        service.stop()
    folder = service.data / "matches" / answer["id"]
    assert shown["status"] == "finished" and shown["result"]["hands"] == 2, (shown, sorted(p.name for p in folder.iterdir()))
    assert (folder / "seating0.player2.err").is_file()  # the bot's process kept its output there


def test_tokens_owners_and_bad_requests(service: Service) -> None:
    alice = add_user(service.data, "alice")
    bob = add_user(service.data, "bob")
    status, _, answer = service.request("POST", "/api/matches", alice, {"game": "kuhn", "opponent": "always-fold", "hands": 5})
    assert status == 201
    match_id = answer["id"]
    for method, path in _routes(match_id):
        body = {"game": "kuhn", "opponent": "always-call", "hands": 5} if method == "POST" else None
        for token in (None, "x" * 43, alice[:-1] + ("A" if alice[-1] != "A" else "B")):
            status, headers, document = service.request(method, path, token, body)
            assert (status, document) == (401, {"error": UNAUTHORIZED}), (method, path)
            assert headers["www-authenticate"] == "Bearer"
    for suffix in ("/phh", "/pokerstars"):  # Kuhn poker has no hand history but its ACPC log
        status, _, document = service.request("GET", f"/api/matches/{match_id}{suffix}", alice)
        assert (status, document) == (404, {"error": f"no {suffix[1:]} hand history of a kuhn match: only Texas hold'em has "
                                                     "this format (not Kuhn, Leduc or other decks and boards)"})
    for suffix in ("", "/log", "/hands", "/phh", "/pokerstars"):
        mine = service.request("GET", f"/api/matches/{match_id}{suffix}", bob)
        missing = service.request("GET", f"/api/matches/{'0' * 16}{suffix}", bob)
        assert mine[0] == missing[0] == 404
        assert mine[2]["error"].replace(match_id, "X") == missing[2]["error"].replace("0" * 16, "X")
    for trick in ("/api/matches/..%2F..%2Farena.db/log", "/api/matches/../../arena.db", "/api/matches/%00/log",
                  "/api/matches/" + "a" * 5000, "/api/../data/arena.db", "/api/matches/x/log/../../../arena.db"):
        status, _, document = service.request("GET", trick, alice)
        assert status == 404 and list(document) == ["error"] and "\n" not in document["error"], trick

    bad = [
        (b"{", 400, "malformed JSON"),
        (b"[1, 2]", 400, "the body must be a JSON object"),
        (b'{"game": "kuhn", "opponent": "always-call"}', 400, "missing 'hands'"),
        (b'{"game": "kuhn", "opponent": "always-call", "hands": 1}', 400, "'hands' must be a whole number in 2..10000, got 1"),
        (b'{"game": "kuhn", "opponent": "always-call", "hands": 5, "x": 1}', 400, "unknown field 'x'"),
        (b'{"game": "../../etc/passwd", "opponent": "always-call", "hands": 5}', 400, "unknown game '../../etc/passwd'"),
        (b'{"game": "kuhn", "opponent": "leduc-cfr", "hands": 5}', 400, "bot leduc-cfr plays leduc, not kuhn"),
        (b'{"game": "kuhn", "opponent": "nobody", "hands": 5}', 400, "no hosted bot 'nobody'"),
        (b'{"game": "kuhn3p", "opponent": "always-call", "hands": 5}', 400, "kuhn3p is a 3-player game"),
        (b'{"game": "kuhn", "opponent": "always-call", "hands": 5, "duplicate": 1}', 400, "'duplicate' must be true or false"),
        (b"[" * 100000, 413, "request body over 16384 bytes"),
        (b'{"a": "' + b"x" * 20000 + b'"}', 413, "request body over 16384 bytes"),
    ]
    for raw, expected, words in bad:
        status, _, document = service.request("POST", "/api/matches", alice, raw=raw)
        assert status == expected and document["error"].startswith(words) and "\n" not in document["error"], raw[:60]
    assert service.request("GET", "/api/me", alice)[2] == {"name": "alice", "admin": False}
    assert service.request("GET", "/api/leaderboard", alice)[0] == 400
    assert service.request("DELETE", "/api/me", alice)[0] == 405
    status, _, document = service.request("GET", "/nothing", alice)
    assert status == 404 and document == {"error": "no such route: GET /nothing"}

    # A connection from the allowed address only: this one asked from 127.0.0.1.
    with socket.create_connection(("127.0.0.1", answer["ports"][0]), timeout=5):
        pass
    assert service.request("GET", f"/api/matches/{match_id}", alice)[2]["status"] == "waiting"


def test_a_web_login_keeps_a_session_cookie(service: Service) -> None:
    token = add_user(service.data, "alice")
    status, _, document = service.request("POST", "/api/login", body={"token": token[:-2]})
    assert (status, document) == (401, {"error": "wrong token: log in with the token arena users add printed"})
    status, headers, document = service.request("POST", "/api/login", body={"token": token})
    assert (status, document) == (200, {"name": "alice", "admin": False})
    cookie = headers["set-cookie"]
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes and "samesite=strict" in attributes and "path=/" in attributes
    session = cookie.split(";")[0]
    assert session.startswith("arena_session=") and token not in session
    assert service.request("GET", "/api/me", cookie=session)[2] == {"name": "alice", "admin": False}
    assert service.request("GET", "/api/me", cookie="arena_session=" + "x" * 43)[0] == 401
    assert service.request("GET", "/api/me", "wrong", cookie=session)[0] == 401  # a wrong token is not made good
    status, headers, _ = service.request("POST", "/api/logout", cookie=session)
    assert status == 200 and "arena_session=" in headers["set-cookie"]
    assert service.request("GET", "/api/me", cookie=session)[0] == 401
