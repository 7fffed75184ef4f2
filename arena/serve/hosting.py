"""Hosting matches: the match API's work, from a request to its results.

A match is the user's agent against one hosted bot, heads-up, in one seating
or two (``duplicate``: the same cards with the seats swapped; the agent
connects once per seating). Its files live in ``DATA/matches/ID/``: the
dealer's ``seatingN.log`` (the ACPC log, a STATE line flushed as each hand
ends), ``seatingN.hands.msgpack`` (hand records), ``.err``/``.out`` and
``.events.jsonl``; in Texas hold'em the hand histories (PHH, PokerStars
text: :data:`HISTORIES`) are written from the logs when asked for. The
database holds the match's row and, once it is over, its result document,
so a service killed at any point loses no finished hand; on restart every
match not over is marked aborted and its result read from the files.

Fair play: the seed (drawn from :mod:`secrets`) and every file that shows
cards are served only once the match is over (:meth:`Host.shown_match`); a
chosen seed, or a remote agent's duplicate match (the agent remembers
seating 1's cards in seating 2), makes the match practice, on no
leaderboard; a revoked user's matches end at once, uncounted.

A match is an :class:`arena.match.MatchPlan` whose seatings are played one
by one (:func:`arena.match.play_seating`): the dealer in this process on the
match's reserved port, the hosted bot an in-process seat, the user's agent a
remote seat on that port, taken only with the seating's secret key (a
``#KEY:`` line before the version line: :func:`poker.protocol.key_line`;
the match's owner alone is told it, as ``seat_key``) and only from the
allowed peer (the address that asked, unless ``allow`` says otherwise)
within the start timeout, or a web table's person (:mod:`arena.serve.tables`)
under a person's limits; idle, garbage and keyless connections are dropped
as the dealer drops them. The key is what makes a seat its owner's: an
address is shared by everyone behind one NAT, on one host, or (in the compose
stack) behind Docker's proxy. Requests are checked before they reach the host
(:mod:`arena.serve.validation`). From its reservation until its seat is
taken a port is held by one socket: bound (without ``SO_REUSEADDR``, so no other
program can bind it too) and, until its seating starts, answered by the host
itself (:meth:`Host._answer_early`): a connection from the allowed peer is told,
in one ``#REFUSED:`` comment (:func:`agent.client.refused_line`, which our
agent prints as its error), that this port is not open yet and which is (a
duplicate match's second port while the first seating plays), then closed;
at its seating's start the same socket is handed to the dealer, which listens
on it (:class:`arena.match.Remote`'s ``listener``), so there is no moment
when a squatter could bind it and pose as the dealer. An agent connects once
``GET /api/matches/ID`` names the port as ``next_port`` with ``queued`` false,
or through the seat route (:mod:`arena.serve.relay`), which connects from
this machine and sends the key itself (:meth:`Host.relay_target`).

Limits: active matches per user (429), matches playing at once (more wait
in a fair queue: the next to start belongs to the user with the fewest
playing, the oldest first), queue length (503; both counted and taken in one
step, so racing requests cannot pass them), hands per match, log bytes
per user, the dealer's time limits with a whole-match cap
(:meth:`dealer.server.MatchConfig.with_match_deadline`).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import re
import secrets
import shutil
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio

from agent.client import refused_line
from analysis.hand_files import read_hands
from analysis.hands import concat
from analysis.holdem import holdem_problem
from analysis.phh import phh_problem, write_phh
from analysis.pokerstars import write_pokerstars
from arena.match import (
    PERSON_LIMITS,
    Bot,
    MatchPlan,
    Person,
    Remote,
    SeatingRun,
    agent_seed,
    our_address,
    play_seating,
)
from dealer.budget import TimeLimits
from dealer.seats import peer_address
from poker.gamedef import Game, GameDefError, load_game
from strategies.base import Spec
from strategies.bots import LIBRARY

from arena.serve.config import ServeConfig
from arena.serve.httpkit import RequestError
from arena.serve.leaderboard import leaderboard
from arena.serve.scoring import Scoring
from arena.serve.store import ACTIVE, MatchRow, Store, User
from arena.serve.validation import MatchRequest
from arena.serve.warming import Warming

__all__ = ["Host", "RESTARTED", "hosted_bot", "seat_names"]

#: Why a match not over when the service started again is aborted.
RESTARTED: Final = "the service stopped while the match was playing; its finished hands are kept"
#: Why a match of a user whose token was revoked is aborted (it does not count: no one's seat left it).
REVOKED: Final = "the user's token was revoked: the match ended at once and does not count"
#: Why a match has not begun while it waits for a place (:meth:`Host.waiting_for`).
QUEUED: Final = "the match waits in the queue for a free place"
#: In a match's ``result`` while its estimators are still being computed (:meth:`Host._estimate`).
PENDING: Final = "pending"
#: How often the host looks for users revoked (by ``arena users revoke``, another process) with matches not over.
REVOKED_POLL_S: Final = 1.0

#: How often the seat route looks whether the match's next seating waits for the agent.
RELAY_POLL_S: Final = 0.1
#: A port not open yet answers this many connections at once (more are closed unanswered: a flood holds few sockets).
EARLY_AT_ONCE: Final = 16
#: How long a port not open yet waits for a connection it answered to close (our agent closes at once).
EARLY_CLOSE_S: Final = 5.0

#: The hand-history downloads beside the ACPC log: each format's file name ending and media type.
HISTORIES: Final = {"phh": (".phhs", "application/toml; charset=utf-8"), "pokerstars": (".txt", "text/plain; charset=utf-8")}


def hosted_bot(opponent: str, name: str, seed: int) -> Bot:
    """The hosted bot ``opponent`` seated as ``name``: a task of the service's
    own event loop, or, for a bot that re-solves at every decision
    (``hunl-modicum``: up to a second or two of CPU a decision, which would
    stall every other match and request the loop serves), our agent in a
    process of its own, which also records its own values beside each
    seating's log for AIVAT (:func:`arena.match.agent_spec`)."""
    bot = LIBRARY.get(opponent)
    return Bot(Spec.parse(opponent), name, seed, process=bot is not None and bot.agent != "equilibrium")


#: An absolute path in an error's words (what a page must not show of the server).
_PATH: Final = re.compile(r"(?<![\w.])/[^\s'\"]+")


def failure_text(problem: Exception) -> str:
    """What a match that failed says on its page and in the API: what failed,
    never where on the server (a system error's reason without its file, any
    other's words with their paths cut to "…"); the service's log keeps the
    whole exception."""
    if isinstance(problem, OSError):
        return f"the match failed: {problem.strerror or type(problem).__name__}"
    return f"the match failed: {_PATH.sub('…', str(problem))}"


def history_problem(game: Game, form: str) -> str | None:
    """Why the hand history ``form`` (one of :data:`HISTORIES`) cannot hold
    ``game``'s hands (Kuhn and Leduc poker have neither); None when it can."""
    return phh_problem(game) if form == "phh" else holdem_problem(game)


_log = logging.getLogger(__name__)


@dataclass
class _Door:
    """A reserved port's answer to connections until its seating starts
    (:meth:`Host._answer_early`): ``scope`` ends it, ``closed`` says it has
    ended, so that the socket has no one waiting on it when the dealer takes it."""

    scope: trio.CancelScope = dataclasses.field(default_factory=trio.CancelScope)
    closed: trio.Event = dataclasses.field(default_factory=trio.Event)

    async def shut(self) -> None:
        self.scope.cancel()
        await self.closed.wait()


@dataclass
class _Live:
    """A match this process hosts, from its request to its end."""

    row: MatchRow
    game: Game
    names: tuple[str, str]  # the user's seat name, the bot's
    reserved: list[socket.socket | None]  # each seating's port, bound until its dealer takes it
    keys: tuple[str, ...]  # each seating's seat key, which the user's agent sends (never stored)
    seating: int = 0  # the seating playing or next
    listening: bool = False  # the seating's dealer waits for the agents
    status: str = "queued"
    person: Person | None = None  # a web table: the user's seat is a person's, in this process
    stop: trio.CancelScope = dataclasses.field(default_factory=trio.CancelScope)  # ends the match (a revoked user)
    culprit: str | None = None  # whose agent aborted a seating: "user" (charged for leaving) or "bot"
    stopped: str = REVOKED  # why ``stop`` ended the match, once it has (:meth:`Host.stop`)
    doors: list[_Door] = dataclasses.field(default_factory=list)  # each seating's port's answer until it starts


def seat_names(user: str, opponent: str) -> tuple[str, str]:
    """Seat names: the user's and the bot's (the bot's marked when they would be the same)."""
    return user, opponent if opponent != user else f"{opponent}-bot"


class Host:
    """The matches of one service: creation, the queue, the ports, the results."""

    def __init__(self, config: ServeConfig, store: Store) -> None:
        self.config = config
        self.store = store
        self.matches_dir = config.data / "matches"
        self.live: dict[str, _Live] = {}
        self.queue: list[_Live] = []
        self.ports_used: set[int] = set()
        self.nursery: trio.Nursery | None = None
        #: The hosted bots that compile kernels, each made ready before its first match.
        self.warming = Warming()
        #: How matches ended that the database could not record (a full disk):
        #: shown from here and written again each :data:`REVOKED_POLL_S` until it takes them.
        self.unrecorded: dict[str, dict[str, Any]] = {}
        #: The matches' scores, read from their seating logs.
        self.scoring = Scoring(self.seating_paths)

    # -- lifetime ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Mark what a previous run left unfinished as aborted (results from its
        files), then host matches until cancelled."""
        self.matches_dir.mkdir(parents=True, exist_ok=True)
        left = await self.store.call(self.store.matches, status=ACTIVE)
        await self.store.call(self.store.abort_unfinished, RESTARTED)
        for row in left:
            result = await trio.to_thread.run_sync(self._money, row, self.seat_names(row))
            await self.store.call(self.store.update_match, row.id, result=result)
        over = await self.store.call(self.store.matches, status=("finished", "aborted"))
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started()
            for row in over:  # the estimators of the matches above, and of any a stop cut short
                if (row.result or {}).get(PENDING):
                    nursery.start_soon(self._estimate, row, self.seat_names(row))
            if self.config.warm_bots:
                nursery.start_soon(self.warming.warm_all)
            await self._end_revoked()

    async def _end_revoked(self) -> None:
        """Forever: end the matches of users whose token was revoked, at once
        (``arena users revoke`` writes the database from another process, so
        the host looks every :data:`REVOKED_POLL_S`): a playing match's seating
        is cancelled, a queued one leaves the queue; both are aborted with
        :data:`REVOKED` and no culprit, so they do not count."""
        assert self.nursery is not None
        while True:
            await trio.sleep(REVOKED_POLL_S)
            await self._record_ends()
            if not self.live:
                continue
            revoked = {user.id for user in await self.store.call(self.store.users) if user.revoked}
            for live in list(self.live.values()):
                if live.row.user_id in revoked and not live.stop.cancel_called:
                    self.stop(live.row.id, REVOKED)

    def stop(self, match_id: str, why: str) -> None:
        """End match ``match_id`` at once, aborted with ``why`` and no culprit,
        so that it does not count: a playing seating is cancelled, a queued
        match leaves the queue (its place was never taken) and ends unplayed."""
        assert self.nursery is not None
        live = self.live.get(match_id)
        if live is None or live.stop.cancel_called:
            return
        live.stopped = why
        live.stop.cancel()
        if live in self.queue:  # never started: play it now, to its immediate end
            self.queue.remove(live)
            live.status = "waiting"
            self.nursery.start_soon(self._play, live)

    def waiting_for(self, match_id: str) -> str | None:
        """Why match ``match_id`` has not begun: :data:`QUEUED`, or its bot
        still starting (:attr:`arena.serve.warming.Warming.starting`); None
        once neither holds it (or it is over)."""
        live = self.live.get(match_id)
        if live is None:
            return None
        return QUEUED if live.status == "queued" else self.warming.starting.get(live.row.opponent)

    async def _record_ends(self) -> None:
        """Write the ends the database refused when their matches ended, while it takes them."""
        for match_id, fields in list(self.unrecorded.items()):
            try:
                await self.store.call(self.store.update_match, match_id, **fields)
            except Exception:  # still full: the next poll tries again
                return
            del self.unrecorded[match_id]

    def _as_recorded(self, row: MatchRow) -> MatchRow:
        """``row`` with its end, where the database could not record it yet."""
        fields = self.unrecorded.get(row.id)
        return row if fields is None else dataclasses.replace(row, **fields)

    # -- the API -------------------------------------------------------------

    async def create_match(
        self, user: User, request: MatchRequest, peer: str | None, *, person: Person | None = None
    ) -> MatchRow:
        """Take a checked request's ports (one per seating), queue or start it;
        its row. Its port takes only ``peer``'s connection (or as ``allow``
        says). ``person``: a web table's seat played in this process instead
        (its port lets in only this machine's address), under a person's limits.

        Raises:
            RequestError: the user's quota, a full queue or no free port.
        """
        await self._check_space(user)
        self._check_quota(user)  # from here to the match's entry in self.live, no await: racing requests see it
        allowed = {"asker": peer, "any": None}.get(self.config.allow, self.config.allow)
        if person is not None:  # this machine's address (none to check for a host name)
            local, address = our_address(self.config.host)
            allowed = local if address is not None else None
        match_id = secrets.token_hex(8)
        reserved = self._take_ports(2 if request.duplicate else 1)
        ports = tuple(int(sock.getsockname()[1]) for sock in reserved)
        # Practice: a seed the user chose, or a remote agent's duplicate (it remembers seating 1's cards).
        practice = request.chosen or (request.duplicate and person is None)
        row = MatchRow(match_id, user.id, request.game_name, request.opponent, request.hands, request.seed,
                       request.duplicate, "queued", allowed, ports, 0, None, None, time.time(), None, practice=practice)
        keys = tuple(secrets.token_hex(16) for _ in ports)
        live = _Live(row, request.game, self.seat_names(row, user.name), list(reserved), keys, person=person)
        self.live[match_id] = live  # counted from now on; queued once stored
        try:
            (self.matches_dir / match_id).mkdir()
            await self.store.call(self.store.add_match, row)
        except BaseException:
            del self.live[match_id]
            self._release(live.reserved)
            raise
        assert self.nursery is not None
        live.doors = [_Door() for _ in reserved]
        for index in range(len(reserved)):
            self.nursery.start_soon(self._answer_early, live, index)
        self.queue.append(live)
        self._start_next()
        return row

    def seat_keys(self, row: MatchRow) -> list[str]:
        """Each seating's seat key, for the answer that created the match (its owner's alone)."""
        live = self.live.get(row.id)
        return list(live.keys) if live is not None else []

    def _check_quota(self, user: User) -> None:
        """The user's matches not over and the queue's length, counted in
        memory (every match not over is in ``self.live``, queued from its
        entry until it starts: a restart aborts the rest) so that the check
        and the match's entry need no await between them (20 racing requests
        with a limit of 4 make 4).

        Raises:
            RequestError: 429 past the user's limit, 503 past the queue's.
        """
        active = sum(1 for live in self.live.values() if live.row.user_id == user.id)
        if active >= self.config.max_matches_per_user:
            raise RequestError(
                429, f"you have {active} matches not over (the limit); request more when one ends", {"Retry-After": "10"}
            )
        if sum(1 for live in self.live.values() if live.status == "queued") >= self.config.max_queued:
            raise RequestError(503, "the service is full: try again later", {"Retry-After": "60"})

    async def _check_space(self, user: User) -> None:
        """Refuse a new match while the data directory's disk has less than
        ``min_free_bytes`` free (507: a match that could not write its log
        would end at once), and a user whose matches' files hold the bytes
        allowed per user (403)."""
        free = (await trio.to_thread.run_sync(shutil.disk_usage, self.matches_dir)).free
        if free < self.config.min_free_bytes:
            raise RequestError(507, "the service's disk is full: no new match until space returns", {"Retry-After": "60"})
        mine = await self.store.call(self.store.matches, user.id)
        used = await trio.to_thread.run_sync(self._log_bytes_of, mine)
        if used >= self.config.max_log_bytes_per_user:
            raise RequestError(403, f"your matches' logs hold {used} bytes, the limit per user")

    def _log_bytes_of(self, rows: Sequence[MatchRow]) -> int:
        total = 0
        for row in rows:
            directory = self.matches_dir / row.id
            if directory.is_dir():
                total += sum(path.stat().st_size for path in directory.iterdir())
        return total

    def _take_ports(self, count: int) -> list[socket.socket]:
        """``count`` ports of the range, bound (answered by :meth:`_answer_early`
        until their seatings start) without ``SO_REUSEADDR``, so that nothing
        else binds them before then: not even a local program that asks for
        address reuse, which could then pose as the dealer to an agent.

        Raises:
            RequestError: 503, not enough free ports.
        """
        low, high = self.config.match_ports
        taken: list[socket.socket] = []
        for port in range(low, high + 1):
            if len(taken) == count:
                break
            if port in self.ports_used:
                continue
            sock = socket.socket(socket.AF_INET6 if ":" in self.config.host else socket.AF_INET, socket.SOCK_STREAM)
            try:  # no SO_REUSEADDR: with it, another program asking the same could bind the port beside ours
                sock.bind((self.config.host, port))
            except OSError:
                sock.close()
                continue  # taken by another program (or a closed connection's TIME_WAIT: another port serves)
            self.ports_used.add(port)
            taken.append(sock)
        if len(taken) < count:
            self._release(taken)
            raise RequestError(503, "no free match port: try again later", {"Retry-After": "30"})
        return taken

    async def _answer_early(self, live: _Live, index: int) -> None:
        """Until seating ``index`` starts (its door shut): listen on its
        reserved port and answer each connection from the match's allowed
        peer with one ``#REFUSED:`` line saying why the port is not open yet
        and which to use (:meth:`_not_open`), then close it; a connection from
        anyone else is closed unanswered, as the dealer would drop it. The
        socket is never closed here: the dealer listens on it next."""
        door = live.doors[index]
        try:
            with door.scope:
                sock = live.reserved[index]
                assert sock is not None
                sock.listen(EARLY_AT_ONCE)
                listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
                async with trio.open_nursery() as nursery:
                    while True:
                        stream = await listener.accept()
                        if len(nursery.child_tasks) >= EARLY_AT_ONCE:
                            await stream.aclose()
                        else:
                            nursery.start_soon(self._turn_away, live, index, stream)
        except OSError as problem:  # no file descriptor left, say: the port stays bound, unanswered, for its dealer
            _log.warning("match %s: port %d answers no more early connections (%s)", live.row.id, live.row.ports[index], problem)
        finally:
            door.closed.set()

    async def _turn_away(self, live: _Live, index: int, stream: trio.SocketStream) -> None:
        """One early connection: answered when it comes from the allowed peer,
        read to its end (so closing sends no reset over the answer) within
        :data:`EARLY_CLOSE_S`, closed."""
        async with stream:
            with trio.move_on_after(EARLY_CLOSE_S):
                try:
                    if not self._allowed(live, stream):
                        return
                    await stream.send_all(refused_line(self._not_open(live, index)))
                    await stream.send_eof()
                    while await stream.receive_some():
                        pass
                except trio.BrokenResourceError:
                    pass  # gone already

    @staticmethod
    def _allowed(live: _Live, stream: trio.SocketStream) -> bool:
        """Whether the connection comes from the match's allowed peer (anyone where there is none)."""
        if live.row.peer is None:
            return True
        try:
            return peer_address(stream.socket.getpeername()[0]) == peer_address(live.row.peer)
        except (OSError, ValueError):  # no address to compare
            return False

    def _not_open(self, live: _Live, index: int) -> str:
        """Why seating ``index``'s port is not open yet, and where to connect instead."""
        row = live.row
        port = row.ports[index]
        which = f"seating {index + 1}'s port of match {row.id}" if len(row.ports) > 1 else f"the port of match {row.id}"
        if live.person is not None:
            return f"port {port} is {which}, a web table's: its seat is played on the table's page"
        why = self.waiting_for(row.id)
        if why is None:
            why = (f"seating {live.seating + 1} plays first, on port {row.ports[live.seating]}: connect there"
                   if live.seating < index else "its seating is starting")
        return f"port {port} is {which}, not open yet: {why}; connect when GET /api/matches/{row.id} names it as next_port"

    def _release(self, reserved: Sequence[socket.socket | None]) -> None:
        for sock in reserved:
            if sock is not None and sock.fileno() != -1:  # the dealer closes one it listened on
                self.ports_used.discard(sock.getsockname()[1])
                sock.close()

    def seat_names(self, row: MatchRow, user_name: str | None = None) -> tuple[str, str]:
        """The match's seat names (:func:`seat_names`)."""
        return seat_names(user_name if user_name is not None else self.store.user_name(row.user_id), row.opponent)

    def owned_match(self, user: User, match_id: str) -> MatchRow:
        """The user's match; another's is "not found" as much as a missing one, so ids cannot be probed."""
        row = self.store.match(match_id) if len(match_id) <= 64 else None
        if row is None or row.user_id != user.id:
            raise RequestError(404, f"no match {match_id[:64]!r}")
        return self._as_recorded(row)

    async def list_matches(self, user: User) -> list[dict[str, Any]]:
        """``GET /api/matches``: each match's summary, with the status
        :meth:`describe` gives it (:meth:`_status`)."""
        rows = await self.store.call(self.store.matches, user.id)
        documents = [self._summary(self._as_recorded(row)) for row in rows]
        for document in documents:
            live = self.live.get(document["id"])
            if live is not None:
                document["status"] = self._status(document["status"], live, await trio.to_thread.run_sync(self._joined, live))
        return documents

    @staticmethod
    def _status(status: str, live: _Live, joined: bool) -> str:
        """A match not over, in the list and the detail alike: ``running`` once
        the agent has taken its seat (or a later seating plays), else its
        summary's status (``waiting``: queued, or its dealer waits for the agent)."""
        return "running" if joined or live.seating else status

    def _summary(self, row: MatchRow) -> dict[str, Any]:
        """The match's facts; its ``seed`` (which deals every card) only once it is over."""
        live = self.live.get(row.id)
        status = live.status if live is not None else row.status
        return {
            "id": row.id,
            "game": row.game,
            "opponent": row.opponent,
            "hands": row.hands,
            "seed": row.seed if live is None else None,
            "duplicate": row.duplicate,
            "practice": row.practice,
            "status": "waiting" if status == "queued" else status,
            "ports": list(row.ports),
            "created": row.created,
        }

    async def describe(self, user: User, match_id: str) -> dict[str, Any]:
        """``GET /api/matches/ID``: the summary, the result so far and, while the
        agent has a seating left to join, the port for it and (as soon as the
        match is asked for) ``seat_key``, the key of the seating playing or
        next. Only here and in the answer that created the match: the owner's
        alone, never in a list, a log or a page."""
        row = await self.store.call(self.owned_match, user, match_id)
        document = self._summary(row)
        live = self.live.get(row.id)
        document["host"] = self.config.advertised_host
        if live is not None:
            result, joined = await trio.to_thread.run_sync(self._progress, live)
            document["status"] = self._status(document["status"], live, joined)
            document["next_port"] = row.ports[live.seating] if live.listening and not joined else None
            document["queued"] = live.status == "queued"
            document["starting"] = self.warming.starting.get(row.opponent)  # why the bot is not ready, while it is not
            document["seat_key"] = live.keys[live.seating] if live.person is None else None
            document["result"] = result
        else:
            document["next_port"] = document["seat_key"] = None
            document["queued"] = False
            document["starting"] = None
            document["result"] = row.result
        document["error"] = row.error
        return document

    async def relay_target(self, user: User, match_id: str) -> tuple[str, int, str] | None:
        """Where the seat route (:mod:`arena.serve.relay`) takes the user's
        agent: the address of this machine its dealer listens on, the port
        and key of the seating waiting for the agent, once one waits (the
        match may still be queued); None once the match is over.

        Raises:
            RequestError: 404, not the user's match; 409, a web table's (a person plays it here).
        """
        row = await self.store.call(self.owned_match, user, match_id)
        while (live := self.live.get(row.id)) is not None:
            if live.person is not None:
                raise RequestError(409, f"match {row.id} is a web table's: its seat is played on the table's page")
            if live.listening and not await trio.to_thread.run_sync(self._joined, live):
                return our_address(self.config.host)[0], row.ports[live.seating], live.keys[live.seating]
            await trio.sleep(RELAY_POLL_S)
        return None

    async def shown_match(self, user: User, match_id: str) -> MatchRow:
        """The user's match, once it is over: what shows its cards (the logs,
        the hands, the hand histories, the replayer) is served no sooner, as
        a duplicate match's second seating deals the first's cards again and
        the log's header names the seed that deals them all.

        Raises:
            RequestError: 404, not the user's match; 409, not over.
        """
        row = await self.store.call(self.owned_match, user, match_id)
        self._check_over(row)
        return row

    def _check_over(self, row: MatchRow) -> None:
        if row.id in self.live:
            raise RequestError(409, f"match {row.id} is not over: its cards (log, hands, hand histories, replay) "
                                    "are shown once it is")

    async def log_bytes(self, user: User, match_id: str) -> bytes:
        """The ACPC log of each seating played, one after the other, once the match is over."""
        row = await self.shown_match(user, match_id)
        return await trio.to_thread.run_sync(self._concat, row, ".log")

    async def hand_bytes(self, user: User, match_id: str) -> bytes:
        """The msgpack hand records of each seating played, one after the other
        (each seating's file starts with its header record), once the match is over."""
        row = await self.shown_match(user, match_id)
        return await trio.to_thread.run_sync(self._concat, row, ".hands.msgpack")

    async def history_bytes(self, user: User, match_id: str, form: str) -> bytes:
        """The hands of each seating played as the hand history ``form``
        (:data:`HISTORIES`: PHH's ``.phhs`` or PokerStars text) with the seats'
        names, for the poker world's tools. A game the format does not have is
        a 404, as a match that is not there (whether it is over or not); a
        match not over, a 409."""
        row = await self.store.call(self.owned_match, user, match_id)
        game = load_game(row.game)
        problem = history_problem(game, form)
        if problem is not None:
            raise RequestError(404, f"no {form} hand history of a {row.game} match: {problem}")
        self._check_over(row)
        return await trio.to_thread.run_sync(self._history, row, game, form)

    def _history(self, row: MatchRow, game: Game, form: str) -> bytes:
        logs = self._files(row, ".log")
        if not logs:
            return b""
        hands = concat([read_hands(path, game, skip_damaged=True) for path in logs])  # a line still being written
        if form == "phh":
            blocks = write_phh(hands)
        else:  # an ACPC log has no clock: the newest log's time
            blocks = write_pokerstars(hands, datetime.datetime.fromtimestamp(max(p.stat().st_mtime for p in logs), datetime.UTC))
        return "".join(blocks).encode()

    def seating_paths(self, row: MatchRow, suffix: str = ".log") -> list[Path]:
        """The match's ``seatingN{suffix}`` of each seating, there or not yet."""
        return [self.matches_dir / row.id / f"seating{index}{suffix}" for index in range(2 if row.duplicate else 1)]

    def _files(self, row: MatchRow, suffix: str) -> list[Path]:
        """The match's file of each seating played that has one (``seatingN{suffix}``)."""
        return [path for path in self.seating_paths(row, suffix) if path.is_file()]

    def _concat(self, row: MatchRow, suffix: str) -> bytes:
        return b"".join(path.read_bytes() for path in self._files(row, suffix))

    # -- the queue -----------------------------------------------------------

    def _start_next(self) -> None:
        """Start queued matches while there is room, fairly: the user with the
        fewest playing first, then the oldest request."""
        assert self.nursery is not None
        playing = [live for live in self.live.values() if live.status in ("waiting", "running")]
        while self.queue and len(playing) < self.config.max_matches:
            count: dict[int, int] = {}
            for live in playing:
                count[live.row.user_id] = count.get(live.row.user_id, 0) + 1
            chosen = min(self.queue, key=lambda live: (count.get(live.row.user_id, 0), live.row.created))
            self.queue.remove(chosen)
            chosen.status = "waiting"
            playing.append(chosen)
            self.nursery.start_soon(self._play, chosen)

    async def _play(self, live: _Live) -> None:
        """Play a match's seatings in turn, then record how it ended. A match
        that fails, or that the service's shutdown cuts short, is aborted; it
        never takes the service down."""
        row = live.row
        directory = self.matches_dir / row.id
        error: str | None = RESTARTED  # unless the seatings end
        await self.store.call(self.store.update_match, row.id, status="waiting")
        try:
            with live.stop:
                await self.warming.ready(row.opponent)  # a bot compiling its kernels: no seating's clock runs yet
                for index in range(len(row.ports)):
                    live.seating = index
                    error = await self._play_seating(live, self._plan(live, directory, index), index)
                    if error is not None:
                        break
            if live.stop.cancelled_caught:
                error, live.culprit = live.stopped, None
        except Exception as problem:  # a bot that cannot be seated, a disk that fails: this match only
            _log.exception("match %s failed", row.id)
            error = failure_text(problem)
        finally:
            with trio.CancelScope(shield=True):
                for door in live.doors:  # none is waiting on its socket as it closes
                    await door.shut()
                self._release(live.reserved)
                for port in row.ports:
                    self.ports_used.discard(port)
                fields: dict[str, Any] = {
                    "status": "finished" if error is None else "aborted", "error": error,
                    "culprit": live.culprit, "finished": time.time(),
                }
                charged = dataclasses.replace(row, culprit=live.culprit)
                try:
                    fields["result"] = await trio.to_thread.run_sync(self._money, charged, live.names)
                    await self.store.call(self.store.update_match, row.id, **fields)
                except Exception as problem:  # a full disk, a database error: this match's record, never the service
                    _log.warning("match %s: its end is not recorded yet (%s); kept in memory and written again"
                                 " when the database takes it", row.id, problem)
                    self.unrecorded[row.id] = fields
                finally:
                    del self.live[row.id]
                    self._start_next()
        await self._estimate(charged, live.names)  # its place is free: the next match plays meanwhile

    def _plan(self, live: _Live, directory: Path, seating: int) -> MatchPlan:
        """The match as :mod:`arena.match` plays it, for playing seating
        ``seating``: the user in seat ``k`` of seating ``k`` on the seating's
        reserved port (its socket and key those of ``seating``), the hosted
        bot in the other (its strategy seed fixed by the card seed, as
        ``arena match`` seeds its bots), every seating capped at what its
        limits allow.

        Raises:
            ValueError: the allowed peer is not an IP address.
        """
        row, config = live.row, self.config
        user_name, bot_name = live.names
        limits = PERSON_LIMITS if live.person is not None else TimeLimits(config.t_response_ms, config.t_hand_ms, config.t_per_hand_ms)
        seed = agent_seed(row.seed, 1)
        listener = live.reserved[seating]
        own = Remote(row.peer, key=live.keys[seating], listener=listener, relayed=True)
        user = Bot.seated(user_name, own if live.person is None else dataclasses.replace(live.person, listener=listener))
        bot = hosted_bot(row.opponent, bot_name, seed)
        seatings = ((0, 1), (1, 0))[: len(row.ports)]
        return MatchPlan(
            game=live.game,
            game_arg=row.game,
            hands=row.hands,
            seed=row.seed,
            bots=(user, bot),
            seatings=seatings,
            run_dir=directory,
            in_process=True,
            limits=dataclasses.replace(limits, start_timeout_ms=int(config.start_timeout_s * 1000)),
            host=config.host,
            ports=tuple((port, 0) if index == 0 else (0, port) for index, port in enumerate(row.ports)),
            match_names=tuple(f"seating{index}" for index in range(len(seatings))),
            tlog=False,
            match_deadline=True,
        )

    async def _play_seating(self, live: _Live, plan: MatchPlan, index: int) -> str | None:
        """One seating (the user in seat ``index``); why it did not finish, or
        None. The seating's reserved socket goes to its dealer (through the
        plan's remote seat), which listens on it and closes it."""
        port = live.row.ports[index]
        runs: list[SeatingRun] = []
        await live.doors[index].shut()  # the port's early answers end: the dealer listens on it next

        async def play(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
            runs.append(await play_seating(plan, index, task_status=task_status))

        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(play)
                live.listening = True
            except RuntimeError:
                pass  # the dealer could not start: its result says so
        live.listening = False
        run = runs[0]
        if run.result is None:
            return f"the dealer could not start on port {port} (see the match's seating{index}.err)"
        if run.result.aborted is None:
            return None
        culprits = run.culprits()  # the user sits in seat ``index``
        live.culprit = "user" if index in culprits else "bot" if culprits else None
        return run.result.aborted.removeprefix("ERROR: ")

    # -- results -------------------------------------------------------------

    def _progress(self, live: _Live) -> tuple[dict[str, Any], bool]:
        """The result so far, and whether the user's agent has taken its seat
        in the seating now playing (:meth:`_joined`)."""
        return self.scoring.result(live.row, live.names, over=False), self._joined(live)

    def _joined(self, live: _Live) -> bool:
        """Whether the user's agent has taken its seat in the seating now
        playing (the dealer's ``connected`` event)."""
        events = self.matches_dir / live.row.id / f"seating{live.seating}.events.jsonl"
        if live.status == "queued" or not events.is_file():
            return False
        for line in events.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line the dealer is still writing
            if event.get("event") == "connected" and event.get("seat") == live.seating:
                return True
        return False

    def _money(self, row: MatchRow, names: tuple[str, str]) -> dict[str, Any]:
        """The ``result`` a match that is over has at once: the money (raw and
        duplicate, cheap), marked :data:`PENDING` until :meth:`_estimate` adds
        the estimators."""
        return {**self.scoring.result(row, names, over=False), PENDING: True}

    async def _estimate(self, row: MatchRow, names: tuple[str, str]) -> None:
        """The full ``result`` of a match that is over, with the estimators
        that need the bot's policy (AIVAT with a hold'em bot's own values: about
        half a second a hand, minutes for a long match), computed after the
        match's place and ports are free and written in place of its money
        alone. A failure keeps the money, logged; a stop leaves it pending,
        and the next start estimates it."""
        try:
            # A stop does not wait for it (minutes): the thread is left to end with the process.
            result = await trio.to_thread.run_sync(self._result, row, names, abandon_on_cancel=True)
            fields = self.unrecorded.get(row.id)
            if fields is not None:  # the database refused its end: the fuller result goes with it
                fields["result"] = result
            else:
                await self.store.call(self.store.update_match, row.id, result=result)
        except Exception as problem:
            _log.warning("match %s: its estimators could not be computed (%s); its result is the money alone",
                         row.id, problem)

    def _result(self, row: MatchRow, names: tuple[str, str]) -> dict[str, Any]:
        """The ``result`` of a match that is over, from its seatings' logs, with
        the estimators that need the bot's policy (:meth:`arena.serve.scoring.Scoring.result`)."""
        return self.scoring.result(row, names, over=True)

    # -- the leaderboard -----------------------------------------------------

    async def leaderboard(self, game_name: str | None) -> dict[str, Any]:
        """``GET /api/leaderboard?game=G``: each user's agent against each hosted
        bot over the finished matches of ``game``, and the rankings."""
        if game_name is None:
            raise RequestError(400, "name the game: /api/leaderboard?game=G")
        try:
            game = load_game(game_name) if "/" not in game_name and not game_name.startswith(".") else None
        except GameDefError:
            game = None
        if game is None:
            raise RequestError(400, f"unknown game {game_name[:60]!r}: name a shipped game (arena games)")
        rows = await self.store.call(self.store.matches, status=("finished", "aborted"))
        users = {user.id: user.name for user in await self.store.call(self.store.users)}
        matches = [(row, self.seat_names(row, users[row.user_id])) for row in rows]  # the leaderboard picks
        return await trio.to_thread.run_sync(leaderboard, game_name, game, matches, self.scoring, self.config.min_rank_hands)
