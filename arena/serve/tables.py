"""Web tables: a logged-in person against a hosted bot, in the browser.

A table is a hosted match like the API's (:meth:`arena.serve.hosting.Host.create_match`:
the same checks, quota, fair queue, match path, files and results, so it
shows in the person's matches and on the leaderboard), whose user seat is a
:class:`agent.human.seat.HumanSeat` played from this process (an
:class:`arena.match.Person` seat; its match port lets in only this machine)
instead of someone's agent, under a person's time limits
(:data:`arena.match.PERSON_LIMITS`, ``arena play``'s). The page is ``arena
play``'s own (:mod:`agent.human.web`), served per table; the seat outlives the
page (reloads resume), and is forgotten :data:`LINGER_S` after its match ends
(the match page keeps everything).

A table never goes stale: when its match ends otherwise than by playing out
(the dealer aborted, the user was revoked, the service stopped it) the seat
is told why at once, and "leave the table" closes the person's connection,
so the dealer aborts naming the person's seat and the match counts by the
abort rule (docs/hosting.md: the hands not played are charged as lost) and
frees its slot. Once the host has recorded the end (the slot is free), the
seat's end screen gets its links: the match page and another table like it.

Before its seat exists (the match waits in the queue, or for its bot to
start: minutes on a fresh install) the page is told why each second
(:meth:`Tables.seat_of`) and can be left too: the match is cancelled
(:meth:`arena.serve.hosting.Host.stop`, :data:`LEFT_BEFORE`), its place and
ports freed, and nothing is charged, as nothing was played.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

import trio
from starlette.websockets import WebSocket

from agent.human.seat import LEFT, HumanSeat, Leave, Limits, MessageError, parse_message
from agent.human.web import POLICY_VIOLATION
from arena.match import PERSON_LIMITS, Person
from arena.serve.hosting import Host
from arena.serve.httpkit import RequestError
from arena.serve.store import User
from arena.serve.validation import table_request

__all__ = ["Tables", "Table", "LINGER_S", "MAX_TABLE_HANDS", "LEAVING", "LEFT_BEFORE"]

#: Seconds a finished table stays open (its page shows the end) before it is forgotten.
LINGER_S: Final = 600.0
#: The most hands one table plays (a person's session, not an agent's run).
MAX_TABLE_HANDS: Final = 1000
#: What a table says once the person left it: the abort rule's charge (docs/hosting.md).
LEAVING: Final = f"{LEFT}: the match ended, and each hand not played counts as lost by the most a hand can cost"
#: Why a match ended that the person left before it began (a WebSocket close reason: at most 123 bytes).
LEFT_BEFORE: Final = "you left the table before the match began: it was cancelled, and nothing counts"
#: What closes a waiting table's page whose match ended otherwise before it began.
ENDED_BEFORE: Final = "the match ended before it began: see your matches"
#: How often a table whose seat is done looks whether the host has recorded the match's end.
_END_POLL_S: Final = 0.1
#: How often a page waiting for its seat is told why it waits.
_WAIT_POLL_S: Final = 1.0


@dataclass
class Table:
    """One person's seat at one hosted match."""

    match_id: str
    user_id: int
    seat: HumanSeat | None = None
    #: Set when the seat exists (the match may wait in the queue first).
    seated: trio.Event = field(default_factory=trio.Event)
    #: The lobby's fields that open another table like this one ("play again").
    again: dict[str, str | int] = field(default_factory=dict)


@dataclass
class _Sitting:
    """A table's seat as the match runs it (:class:`arena.match.PersonSeat`):
    the person's, forgotten a while after its connection ends."""

    tables: Tables
    table: Table
    seat: HumanSeat

    async def run(self, host: str, port: int, key: str | None = None) -> None:
        try:
            await self.seat.run(host, port, key)
        finally:
            assert self.tables.host.nursery is not None
            self.tables.host.nursery.start_soon(self.tables.forget, self.table.match_id)

    def end(self, message: str | None) -> None:
        self.seat.end(message)


class Tables:
    """The web tables of one service, by match id."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.tables: dict[str, Table] = {}

    async def open(self, user: User, game_name: str, opponent: str, hands: int, seed: int | None = None) -> str:
        """Sit ``user`` at a new table against ``opponent`` (cards dealt from
        ``seed``; None: a random one); its match id.

        Raises:
            RequestError: the match cannot be had (the request's checks, the host's limits).
        """
        if hands > MAX_TABLE_HANDS:
            raise RequestError(400, f"a table plays at most {MAX_TABLE_HANDS} hands, not {hands}")
        request = table_request(game_name, opponent, hands, seed, self.host.config.max_hands)
        table = Table("", user.id)
        limits = Limits(PERSON_LIMITS.response_ms, PERSON_LIMITS.hand_ms, PERSON_LIMITS.per_hand_ms * request.hands)
        title = f"{user.name} vs {opponent} · {game_name}"

        def sit(names: tuple[str, ...], index: int) -> _Sitting:
            seat = HumanSeat(request.game, names, index, hands=request.hands, limits=limits, title=title, leaving=LEAVING)
            table.seat = seat
            table.seated.set()
            return _Sitting(self, table, seat)

        row = await self.host.create_match(user, request, None, person=Person(sit))
        table.match_id = row.id
        table.again = {"game": game_name, "opponent": opponent, "hands": hands}
        self.tables[table.match_id] = table
        return table.match_id

    async def forget(self, match_id: str) -> None:
        """Once the host has recorded the match's end: tell the seat why it
        ended (when it did not play out; a seat the dealer's abort already
        told keeps that reason) and give its end screen its links; forget
        the table :data:`LINGER_S` later."""
        while match_id in self.host.live:
            await trio.sleep(_END_POLL_S)
        table = self.tables.get(match_id)
        if table is not None and table.seat is not None:
            row = await self.host.store.call(self.host.store.match, match_id)
            table.seat.links = {"match": f"/matches/{match_id}", "again": {"action": "/tables", "fields": table.again}}
            table.seat.end(None if row is None else row.error)
        await trio.sleep(LINGER_S)
        self.tables.pop(match_id, None)

    async def seat_of(self, table: Table, websocket: WebSocket) -> HumanSeat | None:
        """The table's seat once its match makes it. Until then the page gets
        ``{"type": "waiting", "message": WHY}`` each :data:`_WAIT_POLL_S`
        (:meth:`arena.serve.hosting.Host.waiting_for`, or the dealer starting)
        and its ``leave`` cancels the match (:data:`LEFT_BEFORE`: uncounted;
        one that comes once the seat exists is ignored, as the page's confirm
        promised nothing would count: the page then gets the table, whose own
        leave says what it costs). None: the page went, or the match ended
        before it began (the socket closed with why)."""
        host = self.host
        left = False
        gone = False

        async def read(cancel: trio.CancelScope) -> None:
            nonlocal left, gone
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    gone = True
                    cancel.cancel()
                    return
                try:
                    parsed = parse_message(message.get("text") or message.get("bytes") or b"")
                except MessageError as error:
                    await websocket.send_text(json.dumps({"type": "error", "message": str(error)}))
                    continue
                if isinstance(parsed, Leave) and table.seat is None:
                    left = True
                    host.stop(table.match_id, LEFT_BEFORE)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read, nursery.cancel_scope)
            while table.seat is None and table.match_id in host.live:
                why = host.waiting_for(table.match_id) or "the dealer is starting"
                await websocket.send_text(json.dumps({"type": "waiting", "message": why}))
                with trio.move_on_after(_WAIT_POLL_S):
                    await table.seated.wait()
            nursery.cancel_scope.cancel()
        if gone:
            return None
        if table.seat is None:
            await websocket.close(code=POLICY_VIOLATION, reason=LEFT_BEFORE if left else ENDED_BEFORE)
        return table.seat

    def of(self, user: User, match_id: str) -> Table | None:
        """``user``'s table ``match_id`` while it is open (None for anyone else's)."""
        table = self.tables.get(match_id)
        if table is not None and table.seat is None and match_id not in self.host.live:
            del self.tables[match_id]  # its match ended before it began
            return None
        return table if table is not None and table.user_id == user.id else None
