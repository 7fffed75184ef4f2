"""The leaderboard's fair-play rules on hand-made Kuhn seating logs (issue 44): a
match the user's agent left counts, charged; ranks are per hosted bot; a game's
aliases are one game; the estimate uses every hand; nothing unranked is ranked;
and the database an older version made gains the column that records who left."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trio

from agent.client import play

from arena.serve.leaderboard import leaderboard
from arena.serve.scoring import Scoring
from arena.serve.store import MatchRow, Store
from poker.gamedef import load_game
from strategies.base import make_strategy
from tests.arena.serve.service_process import Service, add_user, seat_key

KUHN = load_game("kuhn")


def line(hand: int, cards: tuple[str, str], names: tuple[str, str], bot: str) -> str:
    """A Kuhn hand (``cards`` and ``names`` by position) of always-call against ``bot``, which bets its king alone."""
    bets = cards[names.index(bot)] == "Ks"
    betting = ("rc" if names[0] == bot else "crc") if bets else "cc"
    value = (1 if "JQK".index(cards[0][0]) > "JQK".index(cards[1][0]) else -1) * (2 if bets else 1)
    return f"{hand}:{betting}:{'|'.join(cards)}:{value}|{-value}:{'|'.join(names)}"


def dealt(rng: np.random.Generator, user: str, bot: str, hands: int) -> list[str]:
    """``hands`` random Kuhn hands of always-call (``user``, position 0 in even hands) against ``bot``."""
    lines = []
    for hand in range(hands):
        cards = tuple(str(card) for card in rng.choice(["Js", "Qs", "Ks"], 2, replace=False))
        names = (user, bot) if hand % 2 == 0 else (bot, user)
        lines.append(line(hand, (cards[0], cards[1]), names, bot))
    return lines


def value_of(text: str, name: str) -> float:
    """``name``'s chips in the hand ``text``."""
    _, _, _, values, names = text.split(":")
    return float(values.split("|")[names.split("|").index(name)])


def match(
    folder: Path, match_id: str, seatings: list[list[str]], *, hands: int, user_id: int = 1, bot: str = "always-raise",
    game: str = "kuhn", status: str = "finished", culprit: str | None = None,
) -> MatchRow:
    """A match whose seating logs hold ``seatings`` (a full seating gets its SCORE line)."""
    directory = folder / match_id
    directory.mkdir(parents=True)
    for index, lines in enumerate(seatings):
        totals: dict[str, float] = {}
        for text in lines:
            for name in text.split(":")[4].split("|"):
                totals[name] = totals.get(name, 0.0) + value_of(text, name)
        score = f"SCORE:{'|'.join(f'{v:g}' for v in totals.values())}:{'|'.join(totals)}\n" if len(lines) == hands else ""
        text = "".join(f"STATE:{line}\n" for line in lines)
        (directory / f"seating{index}.log").write_text(f"# name/game/hands/seed seating{index} kuhn {hands} 1\n{text}{score}")
    return MatchRow(
        match_id, user_id, game, bot, hands, 1, len(seatings) == 2, status, None,
        tuple(range(9000, 9000 + len(seatings))), 0, None, None, 0.0, None, culprit,
    )


def scoring(folder: Path) -> Scoring:
    return Scoring(lambda row: [folder / row.id / f"seating{k}.log" for k in range(2 if row.duplicate else 1)])


def test_quitting_when_behind_ranks_no_better_than_playing_out(tmp_path: Path) -> None:
    """30 fixed deals of 6 hands, played out by "stays" and by "quits", who hangs
    up before the last hand whenever behind: every hand of "quits" counts (the
    ones it left charged) and it ranks below "stays"."""
    rng = np.random.default_rng(44)
    rows, left = [], 0
    for number in range(30):
        lines = dealt(rng, "stays", "bot", 6)
        rows.append((match(tmp_path, f"s{number}", [lines], hands=6), ("stays", "bot")))
        behind = sum(value_of(text, "stays") for text in lines[:5]) < 0
        left += behind
        quitter = [line.replace("stays", "quits") for line in (lines[:5] if behind else lines)]
        row = match(tmp_path, f"q{number}", [quitter], hands=6, user_id=2,
                    status="aborted" if behind else "finished", culprit="user" if behind else None)
        rows.append((row, ("quits", "bot")))
    assert 5 < left < 30
    board = leaderboard("kuhn", KUHN, rows, scoring(tmp_path), 60)
    quits, stays = board["entries"]
    assert (quits["user"], quits["hands"], stays["hands"]) == ("quits", 180, 180)
    assert quits["estimate"]["mean"] <= stays["estimate"]["mean"] < 0
    assert (stays["rank"], quits["rank"]) == (1, 2)


def test_only_a_match_the_users_agent_aborted_counts_among_aborted_ones(tmp_path: Path) -> None:
    lines = dealt(np.random.default_rng(1), "alice", "bot", 4)
    rows = [
        match(tmp_path, "user", [lines[:1]], hands=4, status="aborted", culprit="user"),  # 1 hand played, 3 charged
        match(tmp_path, "service", [lines[:2]], hands=4, status="aborted"),  # a restart: not the user's doing
        match(tmp_path, "bot", [lines[:3]], hands=4, status="aborted", culprit="bot"),
    ]
    (entry,) = leaderboard("kuhn", KUHN, [(row, ("alice", "bot")) for row in rows], scoring(tmp_path), 1)["entries"]
    assert entry["hands"] == 4 and entry["raw"]["mean"] == (value_of(lines[0], "alice") - 3 * 2) / 4


def test_ranks_are_per_bot_and_aliases_are_one_game(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    rows = []
    for user_id, user in enumerate(["alice", "bob", "carol"], 1):
        for bot in ("always-raise", "always-call"):
            game = "kuhn.limit.2p" if user == "bob" else "kuhn"  # the same game under its two names
            lines = dealt(rng, user, bot, 30)  # the fewest hands whose interval is shown: ranked
            rows.append((match(tmp_path, f"{user}-{bot}", [lines], hands=30, user_id=user_id, bot=bot, game=game), (user, bot)))
    rows.append((match(tmp_path, "leduc", [dealt(rng, "dave", "x", 10)], hands=10, user_id=4, game="leduc"), ("dave", "x")))
    board = leaderboard("kuhn", KUHN, rows, scoring(tmp_path), 10)
    assert sorted({e["user"] for e in board["entries"]}) == ["alice", "bob", "carol"]
    for bot in ("always-raise", "always-call"):
        against = sorted((e for e in board["entries"] if e["bot"] == bot), key=lambda e: e["rank"])
        assert [e["rank"] for e in against] == [1, 2, 3]
        means = [e["estimate"]["mean"] for e in against]
        assert means == sorted(means, reverse=True)
    # arena rank's rankings, one per bot, each of the matches against that bot alone
    assert sorted(board["rankings"]) == ["always-call", "always-raise"]
    assert "always-call" not in str(board["rankings"]["always-raise"]) and "raise" not in str(board["rankings"]["always-call"])


def test_the_estimate_uses_every_hand_and_the_unranked_are_not_ranked(tmp_path: Path) -> None:
    """40 raw hands and a 2-hand duplicate match: the estimate is over all 42
    hand values (the duplicate match's as their duplicate values), never the 2
    duplicate ones alone."""
    rng = np.random.default_rng(3)
    first = dealt(rng, "alice", "bot", 2)
    second = []  # the same cards by position, the seats swapped
    for text in first:
        hand, _, cards, _, names = text.split(":")
        pos0, pos1 = cards.split("|")
        second.append(line(int(hand), (pos0, pos1), ("bot", "alice") if names == "alice|bot" else ("alice", "bot"), "bot"))
    rows = [
        match(tmp_path, "raw", [dealt(rng, "alice", "bot", 40)], hands=40),
        match(tmp_path, "dup", [first, second], hands=2),
        match(tmp_path, "few", [dealt(rng, "bob", "bot", 4)], hands=4, user_id=2),
    ]
    board = leaderboard("kuhn", KUHN, [(row, (("alice", "bob")[row.user_id - 1], "bot")) for row in rows], scoring(tmp_path), 20)
    alice, bob = board["entries"]
    assert (alice["hands"], alice["duplicate"]["hands"], alice["estimate"]["hands"]) == (44, 2, 42)
    assert alice["ranked"] and alice["rank"] == 1
    assert not bob["ranked"] and "rank" not in bob
    assert sorted(board["rankings"]["always-raise"]["bankroll"]) == ["alice", "bot:always-raise"]  # bob unranked: left out


@pytest.mark.parametrize("min_hands", [1, 10, 29])
def test_nothing_is_ranked_before_its_interval_is_shown_whatever_the_minimum(tmp_path: Path, min_hands: int) -> None:
    """A service's ``min_rank_hands`` under 30: a pair of 29 hands, whose
    estimate shows no interval (poker.stats.interval_shown), is not ranked nor
    in the rankings; one of 30 is."""
    rng = np.random.default_rng(5)
    rows = [
        (match(tmp_path, f"short{min_hands}", [dealt(rng, "short", "bot", 29)], hands=29), ("short", "bot")),
        (match(tmp_path, f"long{min_hands}", [dealt(rng, "long", "bot", 30)], hands=30, user_id=2), ("long", "bot")),
    ]
    board = leaderboard("kuhn", KUHN, rows, scoring(tmp_path), min_hands)
    long, short = board["entries"]
    assert (short["hands"], short["estimate"]["interval_shown"], short["ranked"]) == (29, False, False)
    assert "rank" not in short
    assert (long["hands"], long["estimate"]["interval_shown"], long["ranked"], long["rank"]) == (30, True, True, 1)
    assert sorted(board["rankings"]["always-raise"]["bankroll"]) == ["bot:always-raise", "long"]


def test_an_older_database_gains_the_culprit_column(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / "arena.db")
    old.execute(
        "CREATE TABLE matches (id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, game TEXT NOT NULL, opponent TEXT NOT NULL,"
        " hands INTEGER NOT NULL, seed INTEGER NOT NULL, duplicate INTEGER NOT NULL, status TEXT NOT NULL, peer TEXT,"
        " ports TEXT NOT NULL DEFAULT '[]', seating INTEGER NOT NULL DEFAULT 0, error TEXT, result TEXT,"
        " created REAL NOT NULL, finished REAL)"
    )
    old.execute("INSERT INTO matches (id, user_id, game, opponent, hands, seed, duplicate, status, created)"
                " VALUES ('m1', 1, 'kuhn', 'always-call', 10, 1, 0, 'aborted', 0)")
    old.commit()
    old.close()
    store = Store(tmp_path)
    row = store.match("m1")
    assert row is not None and row.culprit is None
    store.update_match("m1", culprit="user")
    assert store.match("m1").culprit == "user"  # type: ignore[union-attr]
    store.close()
    assert Store(tmp_path).match("m1").culprit == "user"  # type: ignore[union-attr]  # opened again: no second ALTER


class _HungUp(Exception):
    pass


async def test_a_match_the_agent_left_is_on_the_leaderboard_charged(service: Service) -> None:
    """Live: always-call hangs up after a few hands of a 30-hand match; the dealer
    blames its seat, the result charges it the 2 chips of each hand it left,
    and the leaderboard (asked by the game's other name) counts all 30 hands
    (enough for its interval: ranked)."""
    token = add_user(service.data, "alice")
    created = service.request("POST", "/api/matches", token, {"game": "kuhn", "opponent": "always-call", "hands": 30})[2]
    port = service.next_port(token, created["id"])
    game = load_game("kuhn")
    strategy = make_strategy("always-call", game, seed=1)
    actions = 0

    async def decide(view: Any) -> Any:
        nonlocal actions
        actions += 1
        if actions > 6:
            raise _HungUp
        return strategy.act(view)

    with pytest.raises(_HungUp):
        await play("127.0.0.1", port, game, strategy, decide=decide, key=seat_key(port))
    shown = await trio.to_thread.run_sync(service.wait_status, token, created["id"], ("finished", "aborted"))
    assert shown["status"] == "aborted" and "seat 1" in shown["error"]
    alice = shown["result"]["players"][0]
    played = shown["result"]["hands"]
    assert 1 <= played < 30 and alice["charged"] == 30 - played and alice["estimate"]["hands"] == 30
    board = service.request("GET", "/api/leaderboard?game=kuhn.limit.2p", token)[2]
    (entry,) = board["entries"]
    assert (entry["user"], entry["hands"], entry["rank"]) == ("alice", 30, 1)
    assert entry["raw"]["mean"] == pytest.approx(alice["chips"] / 30) and alice["chips"] <= played * 2 - 2 * (30 - played)
