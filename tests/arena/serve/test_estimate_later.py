"""The estimators of a match that is over come after its place is free
(:meth:`arena.serve.hosting.Host._estimate`): AIVAT with a hold'em bot's own
values costs about half a second a hand, minutes for a long match, and the
next match in the queue must not wait for it. Until they are in, the match's
``result`` is its money marked ``pending``, and the leaderboard leaves it out."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
import trio

from agent.client import play
from analysis.hands import Hands
from analysis.match_score import Alternative
from arena.serve import scoring
from arena.serve.config import ServeConfig
from arena.serve.hosting import PENDING, Host
from arena.serve.leaderboard import counts
from arena.serve.store import MatchRow, Store
from arena.serve.validation import match_request
from poker.gamedef import load_game
from strategies.base import make_strategy

KUHN = {"game": "kuhn", "opponent": "always-call", "hands": 20}


def _row(store: Store, match_id: str) -> MatchRow:
    row = store.match(match_id)
    assert row is not None
    return row


async def test_the_next_match_plays_while_the_last_ones_estimators_are_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    estimated: list[int] = []

    def slow(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
        """An estimator that takes as long as the test says (as AIVAT over a long hold'em match)."""
        gate.wait(60)
        estimated.append(every.hand_id.size)
        return []

    monkeypatch.setattr(scoring, "DEFAULT_ESTIMATORS", (slow,))
    store = Store(tmp_path)
    user, _ = store.add_user("alice")
    low = random.Random(os.getpid() + time.time_ns()).randrange(20000, 60000, 100)
    host = Host(ServeConfig(data=tmp_path, match_ports=(low, low + 9), max_matches=1, warm_bots=False), store)
    game = load_game("kuhn")

    async def agent_plays(match_id: str) -> None:
        """Our always-call through the match's port and key, once it waits for the agent."""
        with trio.fail_after(30):
            while not (described := await host.describe(user, match_id))["next_port"]:
                await trio.sleep(0.02)
        await play("127.0.0.1", described["next_port"], game, make_strategy("always-call", game, seed=1),
                   key=described["seat_key"])

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            first = await host.create_match(user, match_request(dict(KUHN), 100), "127.0.0.1")
            second = await host.create_match(user, match_request(dict(KUHN), 100), "127.0.0.1")
            assert (await host.describe(user, second.id))["queued"]  # one match plays at a time
            await agent_plays(first.id)
            await agent_plays(second.id)  # it starts while the first one's estimators still run
            with trio.fail_after(30):
                while second.id in host.live:
                    await trio.sleep(0.02)
            shown = await host.describe(user, first.id)
            assert shown["status"] == "finished" and shown["result"][PENDING] is True
            assert shown["result"]["hands"] == 20 and shown["result"]["players"][0]["chips"] is not None
            assert not counts(_row(store, first.id))  # not on the leaderboard until its estimators are in
            gate.set()
            with trio.fail_after(30):
                while PENDING in (await host.describe(user, first.id))["result"]:
                    await trio.sleep(0.02)
            assert counts(_row(store, first.id)) and estimated == [20, 20]
            nursery.cancel_scope.cancel()
    finally:
        gate.set()
        store.close()
