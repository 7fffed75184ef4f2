"""Submitted agents: a user's upload of an ACPC agent, one version per
upload, checked by a short match in the sandbox before any event or
challenge may seat it.

``POST /api/agents?name=NAME&game=GAME`` carries the archive as its raw body
(:mod:`arena.serve.archives` says what it may hold). In order, each refusal
one line: a bad name or game (400), no sandbox on this machine (503, with
:func:`arena.sandbox.unavailable`'s reason: a submitted agent never runs
unconfined), more of the user's uploads being checked than
``max_matches_per_user`` (429), a disk short of ``min_free_bytes`` (507), a
body past ``max_agent_bytes`` (413: received to a file with that cap, never
held in memory), an archive refused (400). A valid one is unpacked into
``DATA/agents/ID/files/`` (``ID`` the version's, random; the folder with
``startme.sh`` is that one or its one top folder), gets the next version
number of its name for its user, and answers ``201 {"id", "name",
"version", "status": "checking"}``.

The check match is a match like any other, through :mod:`arena.match`: the
agent in its sandbox (:class:`arena.match.seats.Sandboxed`) against
:data:`CHECK_OPPONENT` in every other seat, :data:`CHECK_HANDS` hands of the
agent's game under the service's time limits, its files in
``DATA/agents/ID/check/`` (readable by the service only). At most
:data:`CHECKS_AT_ONCE` play at once, as tasks of the host's nursery: the
event loop is never held. The version is then ``ready``, or ``failed`` with
the reason (the seat's end as :meth:`arena.match.SeatEnd.describe` words it,
or the dealer's abort) and, either way, the agent's output in it (its
stderr, then its stdout: :data:`OUTPUT_BYTES` at most, the first and the
last half). A version still ``checking`` when the service stopped is checked
again when it starts.

An event or the ladder takes, per submitted agent, its newest ``ready``
version in the game (:meth:`arena.serve.store.Store.latest_ready`). A
version of another user is a 404 worded as a version that does not exist.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import trio
from starlette.requests import Request

from arena.match import Bot, MatchPlan, SeatingRun, agent_seed, aborted_text, play_seating
from arena.match.seats import Sandboxed
from arena.sandbox import unavailable
from dealer.budget import TimeLimits
from poker.gamedef import game_names, load_game
from strategies.base import Spec

from arena.serve.archives import ArchiveError, ArchiveRules, agent_folder, unpack
from arena.serve.hosting import Host
from arena.serve.httpkit import RequestError
from arena.serve.store import AgentRow, User

__all__ = ["Agents", "CHECK_HANDS", "CHECK_OPPONENT", "CHECKS_AT_ONCE", "OUTPUT_BYTES", "NO_SUCH_AGENT", "describe"]

#: Hands of a version's check match.
CHECK_HANDS: Final = 50
#: Who the agent meets in its check match (in every other seat).
CHECK_OPPONENT: Final = "always-call"
#: Check matches playing at once (each a sandbox and a dealer in this process); more wait their turn.
CHECKS_AT_ONCE: Final = 2
#: The most of the agent's output a version keeps: the first and the last half.
OUTPUT_BYTES: Final = 16384
#: What a version of another user (or none) reads.
NO_SUCH_AGENT: Final = "no such agent version: GET /api/agents lists yours"
#: An agent's name: as a user's, ASCII letters, digits, '-' and '_' (it is a seat's name in the logs).
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ID: Final = re.compile(r"[0-9a-f]{16}")
#: "(see /the/service's/file)" in a seat's end: the user reads the output itself instead.
_SEE_FILE: Final = re.compile(r" \(see [^()]*\)")

_log = logging.getLogger(__name__)


def describe(row: AgentRow, *, output: bool = True) -> dict[str, Any]:
    """A version as the API and the page show it (``output`` left out of lists)."""
    shown = {"id": row.id, "name": row.name, "version": row.version, "game": row.game, "status": row.status,
             "reason": row.reason, "created": row.created, "checked": row.checked}
    return {**shown, "output": row.output} if output else shown


def _capped(data: bytes, keep: int) -> str:
    """``data`` as text, its first and last ``keep // 2`` bytes when longer."""
    if len(data) <= keep:
        return data.decode(errors="replace")
    half = keep // 2
    left_out = len(data) - 2 * half
    return f"{data[:half].decode(errors='replace')}\n[{left_out} bytes left out]\n{data[-half:].decode(errors='replace')}"


def _output(check_dir: Path) -> str:
    """The agent's stderr then stdout in its check (seat 1's files), capped."""
    err, std = (check_dir / "match.player1.err", check_dir / "match.player1.std")
    said = [path.read_bytes() if path.exists() else b"" for path in (err, std)]
    keep = OUTPUT_BYTES // 2 if all(said) else OUTPUT_BYTES
    text = _capped(said[0], keep)
    if said[1]:
        text += ("\n" if text else "") + f"[stdout]\n{_capped(said[1], keep)}"
    return text


def _verdict(run: SeatingRun, names: tuple[str, ...]) -> tuple[str, str | None]:
    """``ready``, or ``failed`` and why: the seats blamed (the agent first),
    else the dealer's abort, else a match cut short."""
    blamed = run.culprits()
    if blamed:
        seat = min(blamed)
        said = _SEE_FILE.sub("", blamed[seat])
        if said.startswith("the dealer"):  # it names the seat: "ERROR: could not get action from seat 1"
            return "failed", said
        return "failed", f"{'the agent' if seat == 0 else f'the check opponent {names[seat]}'} {said}"
    result = run.result
    if result is None:
        return "failed", "the check match stopped without a result"
    if result.aborted:
        return "failed", aborted_text(result)
    if result.hands_played < CHECK_HANDS:
        return "failed", f"the check match ended after {result.hands_played} of its {CHECK_HANDS} hands"
    return "ready", None


@dataclass
class Agents:
    """The service's submitted agents: uploads, versions and their checks."""

    host: Host
    rules: ArchiveRules = ArchiveRules()
    #: Per user, uploads being received or checked in this process (bounded by ``max_matches_per_user``).
    busy: dict[int, int] = field(default_factory=dict, init=False)
    #: Made in the first check (a trio object belongs to the run that uses it).
    _limiter: trio.CapacityLimiter | None = field(default=None, init=False, repr=False)

    @property
    def root(self) -> Path:
        return self.host.config.data / "agents"

    def _folder(self) -> Path:
        """``DATA/agents``, searchable by every user (a sandboxed agent's uid reaches its folder through it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        return self.root

    # -- the API -------------------------------------------------------------

    async def submit(self, user: User, request: Request) -> AgentRow:
        """Receive, check and unpack an upload; its version, ``checking``, its check match started.

        Raises:
            RequestError: the refusals the module's docstring lists, in that order.
        """
        name, game = request.query_params.get("name", ""), request.query_params.get("game", "")
        if not _NAME.fullmatch(name):
            raise RequestError(400, f"bad agent name {name[:80]!r}: 1 to 64 ASCII letters, digits, '-' or '_'")
        if game not in game_names():
            raise RequestError(400, f"unknown game {game[:60]!r}: name a shipped game (arena games)")
        if why := await trio.to_thread.run_sync(unavailable):
            raise RequestError(503, f"submitted agents cannot run on this service: {why}")
        limit = self.host.config.max_matches_per_user
        if self.busy.get(user.id, 0) >= limit:
            raise RequestError(429, f"{limit} of your uploads are being checked: wait for one to finish")
        self.busy[user.id] = self.busy.get(user.id, 0) + 1  # no await since the count: racing uploads see it
        started = False
        try:
            row = await self._receive(user, name, game, request)
            assert self.host.nursery is not None  # the host runs before the app serves
            self.host.nursery.start_soon(self._check, row)
            started = True
        finally:
            if not started:
                self._done(user.id)
        return row

    async def get(self, user: User, agent_id: str) -> AgentRow:
        """The user's version ``agent_id``.

        Raises:
            RequestError: 404, none of the user's.
        """
        row = await self.host.store.call(self.host.store.agent, agent_id) if _ID.fullmatch(agent_id) else None
        if row is None or row.user_id != user.id:
            raise RequestError(404, NO_SUCH_AGENT)
        return row

    async def mine(self, user: User) -> list[AgentRow]:
        """The user's versions, by name, then version."""
        return await self.host.store.call(self.host.store.agents, user.id)

    # -- receiving -----------------------------------------------------------

    async def _receive(self, user: User, name: str, game: str, request: Request) -> AgentRow:
        """The body to a file (capped), checked and unpacked; the new version's row."""
        config = self.host.config
        cap = config.max_agent_bytes
        declared = request.headers.get("content-length")
        if declared is not None and (not (declared.isascii() and declared.isdigit()) or int(declared) > cap):
            raise RequestError(413, f"the archive is over {cap} bytes (the service's max_agent_bytes)")
        incoming = self._folder() / ".incoming"
        incoming.mkdir(mode=0o700, exist_ok=True)
        if shutil.disk_usage(incoming).free < config.min_free_bytes + cap:
            raise RequestError(507, "the service's disk is nearly full: uploads are refused for now")
        agent_id = secrets.token_hex(8)
        upload = incoming / f"{agent_id}.upload"
        try:
            size = 0
            async with await trio.open_file(upload, "wb") as file:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > cap:
                        raise RequestError(413, f"the archive is over {cap} bytes (the service's max_agent_bytes)")
                    await file.write(chunk)
            try:
                await trio.to_thread.run_sync(unpack, upload, incoming / agent_id, self.rules)
            except ArchiveError as refused:
                raise RequestError(400, str(refused)) from None
        finally:
            upload.unlink(missing_ok=True)
        home = self.root / agent_id
        home.mkdir(mode=0o755)
        home.chmod(0o755)
        os.rename(incoming / agent_id, home / "files")
        return await self.host.store.call(self.host.store.add_agent, agent_id, user.id, name, game)

    def _done(self, user_id: int) -> None:
        left = self.busy.get(user_id, 1) - 1
        if left > 0:
            self.busy[user_id] = left
        else:
            self.busy.pop(user_id, None)

    # -- checking ------------------------------------------------------------

    async def resume(self) -> None:
        """Check again every version that was ``checking`` when the service stopped."""
        assert self.host.nursery is not None  # the host runs before the app serves
        for row in await self.host.store.call(self.host.store.agents, status=("checking",)):
            self.busy[row.user_id] = self.busy.get(row.user_id, 0) + 1
            self.host.nursery.start_soon(self._check, row)

    async def _check(self, row: AgentRow) -> None:
        """Play the version's check match (waiting for a turn) and record how it went.
        Anything that keeps the check from playing fails the version with the reason."""
        if self._limiter is None:
            self._limiter = trio.CapacityLimiter(CHECKS_AT_ONCE)
        try:
            async with self._limiter:
                status, reason, output = await self._play(row)
        except Exception as problem:  # the service's side failed (a disk, a file): said, not raised into the host
            _log.exception("the check of agent version %s failed", row.id)
            status, reason, output = "failed", f"the check match could not be played: {str(problem)[:300]}", ""
        finally:
            self._done(row.user_id)
        await self.host.store.call(self.host.store.finish_agent, row.id, status, reason, output)

    async def _play(self, row: AgentRow) -> tuple[str, str | None, str]:
        config = self.host.config
        home = self.root / row.id
        check_dir = home / "check"
        await trio.to_thread.run_sync(lambda: shutil.rmtree(check_dir, ignore_errors=True))
        check_dir.mkdir(mode=0o700)
        game = load_game(row.game)
        seed = secrets.randbelow(2**32)
        names = (row.name, *self._bot_names(row.name, game.num_players - 1))
        bots = (
            Bot.seated(row.name, Sandboxed(agent_folder(home / "files"))),
            *(Bot(Spec.parse(CHECK_OPPONENT), bot, agent_seed(seed, k)) for k, bot in enumerate(names[1:], 1)),
        )
        limits = TimeLimits(config.t_response_ms, config.t_hand_ms, config.t_per_hand_ms, int(config.start_timeout_s * 1000))
        plan = MatchPlan(
            game, row.game, CHECK_HANDS, seed, bots, (tuple(range(game.num_players)),), check_dir, in_process=True,
            limits=limits, tlog=False, match_deadline=True, after_abort_s=1.0,
        )
        run = await play_seating(plan, 0)
        status, reason = _verdict(run, names)
        return status, reason, await trio.to_thread.run_sync(_output, check_dir)

    @staticmethod
    def _bot_names(agent: str, count: int) -> list[str]:
        """The check's bots' seat names, none the agent's."""
        base = CHECK_OPPONENT if agent != CHECK_OPPONENT else f"{CHECK_OPPONENT}-bot"
        return [base] if count == 1 else [f"{base}-{k}" for k in range(1, count + 1)]
