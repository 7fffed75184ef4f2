"""Web tables: a logged-in person against a hosted bot, in the browser.

A table is a hosted match like the API's (:meth:`arena.serve.hosting.Host.create_match`:
the same checks, quota, fair queue, seat runner, files and results, so it
shows in the person's matches and on the leaderboard), whose user seat is a
:class:`agent.human.seat.HumanSeat` played from this process (its match port
lets in only this machine) instead of someone's agent, under a person's time
limits (``arena play``'s). The
page is ``arena play``'s own (:mod:`agent.human.web`), served per table; the
seat outlives the page (reloads resume), and is forgotten
:data:`LINGER_S` after its match ends (the match page keeps everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import trio

from agent.human.seat import HumanSeat, Limits
from arena.play import DEFAULT_T_HAND_MS, DEFAULT_T_PER_HAND_MS, DEFAULT_T_RESPONSE_MS
from arena.serve.hosting import Host, seat_names
from arena.serve.httpkit import RequestError
from arena.serve.store import User
from poker.gamedef import load_game

__all__ = ["Tables", "Table", "LINGER_S", "MAX_TABLE_HANDS"]

#: Seconds a finished table stays open (its page shows the end) before it is forgotten.
LINGER_S: Final = 600.0
#: The most hands one table plays (a person's session, not an agent's run).
MAX_TABLE_HANDS: Final = 1000


@dataclass
class Table:
    """One person's seat at one hosted match."""

    match_id: str
    user_id: int
    seat: HumanSeat | None = None
    #: Set when the seat exists (the match may wait in the queue first).
    seated: trio.Event = field(default_factory=trio.Event)


class Tables:
    """The web tables of one service, by match id."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.tables: dict[str, Table] = {}

    async def open(self, user: User, game_name: str, opponent: str, hands: int, seed: int | None = None) -> str:
        """Sit ``user`` at a new table against ``opponent`` (cards dealt from
        ``seed``; None: a random one); its match id.

        Raises:
            RequestError: the match cannot be had (the host's checks and limits).
        """
        if hands > MAX_TABLE_HANDS:
            raise RequestError(400, f"a table plays at most {MAX_TABLE_HANDS} hands, not {hands}")
        table = Table("", user.id)
        limits = (DEFAULT_T_RESPONSE_MS, DEFAULT_T_HAND_MS, DEFAULT_T_PER_HAND_MS)

        async def run_seat(index: int, address: str, port: int) -> None:
            await self._run(table, user, game_name, opponent, hands, index, address, port)

        document: dict[str, Any] = {"game": game_name, "opponent": opponent, "hands": hands}
        if seed is not None:
            document["seed"] = seed
        answer = await self.host.create_match(user, document, None, seat=run_seat, limits=limits)
        table.match_id = answer["id"]
        self.tables[table.match_id] = table
        return table.match_id

    async def _run(
        self, table: Table, user: User, game_name: str, opponent: str, hands: int, index: int, address: str, port: int
    ) -> None:
        game = load_game(game_name)
        ours, bot = seat_names(user.name, opponent)
        names = (ours, bot) if index == 0 else (bot, ours)
        limits = Limits(DEFAULT_T_RESPONSE_MS, DEFAULT_T_HAND_MS, DEFAULT_T_PER_HAND_MS * hands)
        seat = HumanSeat(game, names, index, hands=hands, limits=limits, title=f"{user.name} vs {opponent} · {game_name}")
        table.seat = seat
        table.seated.set()
        try:
            await seat.run(address, port)
        finally:
            assert self.host.nursery is not None
            self.host.nursery.start_soon(self._forget, table.match_id)

    async def _forget(self, match_id: str) -> None:
        await trio.sleep(LINGER_S)
        self.tables.pop(match_id, None)

    def of(self, user: User, match_id: str) -> Table | None:
        """``user``'s table ``match_id`` while it is open (None for anyone else's)."""
        table = self.tables.get(match_id)
        if table is not None and table.seat is None and match_id not in self.host.live:
            del self.tables[match_id]  # its match ended before it began
            return None
        return table if table is not None and table.user_id == user.id else None
