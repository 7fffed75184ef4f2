"""Challenges: a user's submitted agent against another user's (or their own
other one) or a hosted bot, asked for without an admin.

``POST /api/challenges`` (any user; the cookie only from this origin) takes
``{"agent": NAME, "opponent": "agent:NAME" | "agent:USER/NAME" | "bot:NAME",
"hands", "duplicate"?, "game"?}``: ``agent`` is one of the user's own
submitted agents, its newest ``ready`` version (in ``game`` where its versions
span games); the opponent another submitted agent's newest ``ready`` version
in that game (:meth:`arena.serve.store.Store.latest_ready`; ``USER/`` where
users share the name) or a hosted bot of the game. Both versions are taken
when the challenge is asked for, so a later upload changes nothing. It answers
``201 {"id", "status"}``; each refusal is one line: a bad field, no such
agent or bot (400), no sandbox on this machine (503), a disk short of
``min_free_bytes`` (507), the user's hosted matches and challenges not over
at ``max_matches_per_user`` (429), the queue full (503).

A challenge is heads-up, ``hands`` a seating, in duplicate unless
``duplicate`` is false (the second seating deals the first's cards with the
seats swapped). It is a match like any other, a :class:`arena.match.MatchPlan`
played seating by seating through :func:`arena.match.play_seating`: each
submitted agent a :class:`arena.match.seats.Sandboxed` seat, started afresh
in its own sandbox every seating (so neither remembers the first seating's
cards in the second: duplicate is fair), a hosted bot the seat a hosted match
gives it (:func:`arena.serve.hosting.hosted_bot`), under the service's time
limits with the whole-match cap. Its files are in ``DATA/challenges/ID/``.

It waits (``queued``) until fewer than :data:`AT_ONCE` challenges play and the
hosted matches and challenges playing are under ``max_matches``; the oldest
goes first. An agent that crashes, hangs, never connects or breaks the
protocol forfeits: the challenge ends there (``forfeited``, with who, in which
seating and why: :meth:`arena.match.SeatingRun.culprits`) and the forfeiter is
charged every hand it left. A challenge the service's side cut short (a
restart, a failure), or one whose asker or opponent agent's owner is revoked
(it ends at once, as a revoked user's hosted matches do), is ``aborted``,
charged to no one.

The result is :func:`analysis.match_score.score_match`'s document, the one
scoring of every match: ``hands``, and per player its ``chips`` and raw
``estimate``, and ``duplicate`` (per player) in duplicate, each with its 95%
interval and ``interval_shown`` (the one rule, :func:`poker.stats.interval_shown`).
No estimator that needs a known policy applies (a submitted agent's is not
known). The seed, and the logs (``GET /api/challenges/ID/logs``: each
seating's ACPC ``.log`` and ``.hands.msgpack``), are given once the
challenge is over (409 before), to the asker and the opponent agent's owner
alone: anyone else reads a challenge as one that does not exist (404).
"""

from __future__ import annotations

import io
import json
import logging
import re
import secrets
import shutil
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio

from analysis.hand_files import read_seatings
from analysis.match_score import ScoreError, score_match
from arena.match import Bot, MatchPlan, SeatingRun, agent_seed, aborted_text, play_seating
from arena.match.seats import Sandboxed
from arena.sandbox import unavailable
from dealer.budget import TimeLimits
from poker.gamedef import load_game

from arena.serve.archives import agent_folder
from arena.serve.hosting import REVOKED_POLL_S, Host, failure_text, hosted_bot
from arena.serve.httpkit import RequestError
from arena.serve.store import AgentRow, ChallengeRow, User
from arena.serve.validation import CHUMPS, hosted_bots

__all__ = ["Challenges", "AT_ONCE", "NO_SUCH_CHALLENGE", "NOT_OVER", "RESTARTED", "REVOKED", "ROOM_POLL_S", "describe"]

#: Challenges playing at once (each two sandboxes, or one and a bot, and a dealer in this process).
AT_ONCE: Final = 4
#: How often a queued challenge looks whether there is room for it.
ROOM_POLL_S: Final = 0.25
NO_SUCH_CHALLENGE: Final = "no such challenge: GET /api/challenges lists yours"
NOT_OVER: Final = "the challenge is not over: its logs are given once it is (a duplicate's second seating deals the first's cards)"
#: Why a challenge a stopped service left queued or playing is aborted.
RESTARTED: Final = "the service stopped while the challenge was queued or playing; its finished hands are kept"
#: Why a challenge of a revoked user (the asker, or the opponent agent's owner) is aborted.
REVOKED: Final = "a player's token was revoked: the challenge ended at once and charges no one"
_KEYS: Final = ("agent", "opponent", "hands", "duplicate", "game")
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ID: Final = re.compile(r"[0-9a-f]{16}")
#: "(see /the/service's/file)" in a seat's end: a file of the service's, not for the user.
_SEE_FILE: Final = re.compile(r" \(see [^()]*\)")
#: Any other absolute path in a forfeit's words (the other side's owner reads them: never the service's folders).
_PATH: Final = re.compile(r"(?<![\w.])/[^\s'\"]+")
#: What of an agent the API shows (not its version's id: another user's versions are theirs).
_SHOWN: Final = ("kind", "user", "name", "version", "seat")

_log = logging.getLogger(__name__)


def describe(row: ChallengeRow, by: str) -> dict[str, Any]:
    """A challenge as the API and the page show it (``by``: the asker's name);
    the seed once it is over."""
    over = row.status not in ("queued", "running")
    return {
        "id": row.id, "game": row.game, "by": by,
        "agent": {key: row.agent[key] for key in _SHOWN if key in row.agent},
        "opponent": {key: row.opponent[key] for key in _SHOWN if key in row.opponent},
        "hands": row.hands, "duplicate": row.duplicate, "seed": row.seed if over else None, "status": row.status,
        "reason": row.reason, "forfeit": row.forfeit, "result": row.result, "created": row.created, "finished": row.finished,
    }


def _whole(document: dict[str, Any], key: str, low: int, high: int) -> int:
    value = document.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(400, f"{key!r}: a whole number in {low}..{high}, got {json.dumps(value)[:40]}")
    return value


@dataclass
class _Live:
    """A challenge not over, in this process."""

    row: ChallengeRow
    status: str = "queued"


class Challenges:
    """The service's challenges: asked for by users, played in the sandbox, read by both sides."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.root = host.config.data / "challenges"
        #: Every challenge not over, by id (counted against the user's limit and the queue).
        self.live: dict[str, _Live] = {}
        self._turn: trio.Lock | None = None  # made in the service's run (a trio object belongs to it)

    # -- asking --------------------------------------------------------------

    async def create(self, user: User, document: dict[str, Any]) -> ChallengeRow:
        """Check a user's request, take both sides' versions and queue it.

        Raises:
            RequestError: the refusals the module's docstring lists, in that order.
        """
        unknown = sorted(set(document) - set(_KEYS))
        if unknown:
            raise RequestError(400, f"{unknown[0][:40]!r}: unknown key (known: {', '.join(_KEYS)})")
        name, opponent, game = document.get("agent"), document.get("opponent"), document.get("game")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise RequestError(400, "'agent': the name of one of your submitted agents (GET /api/agents)")
        if not isinstance(opponent, str):
            raise RequestError(400, "'opponent': \"agent:NAME\", \"agent:USER/NAME\" or \"bot:NAME\"")
        if game is not None and not isinstance(game, str):
            raise RequestError(400, "'game': a game's name")
        config = self.host.config
        hands = _whole(document, "hands", 2, config.max_hands)
        duplicate = document.get("duplicate", True)
        if not isinstance(duplicate, bool):
            raise RequestError(400, "'duplicate': true or false")
        store = self.host.store
        mine = [row for row in await store.call(store.agents, user.id, status=("ready",))
                if row.name == name and game in (None, row.game)]
        if not mine:
            raise RequestError(400, f"'agent': you have no ready version of {name!r}{f' in {game}' if game else ''}")
        if game is None and len({row.game for row in mine}) > 1:
            games = ", ".join(sorted({row.game for row in mine}))
            raise RequestError(400, f"'agent': {name!r} has ready versions in {games}: name the 'game'")
        agent = max(mine, key=lambda row: row.version)
        if load_game(agent.game).num_players != 2:
            raise RequestError(400, f"challenges are heads-up: {agent.game} is not a 2-player game")
        side = {"kind": "agent", "user": user.name, "name": name, "version": agent.version, "seat": f"{user.name}.{name}",
                "agent_id": agent.id}
        other, owner = await self._opponent(opponent, agent)
        if other["seat"] == side["seat"]:
            raise RequestError(400, "'opponent': an agent cannot challenge itself")
        if why := await trio.to_thread.run_sync(unavailable):
            raise RequestError(503, f"submitted agents cannot run on this service: {why}")
        self.root.mkdir(mode=0o700, exist_ok=True)
        if (await trio.to_thread.run_sync(shutil.disk_usage, self.root)).free < config.min_free_bytes:
            raise RequestError(507, "the service's disk is full: no new challenge until space returns", {"Retry-After": "60"})
        self._check_quota(user)  # from here to the challenge's entry in self.live, no await: racing requests see it
        row = ChallengeRow(secrets.token_hex(8), user.id, owner, agent.game, side, other, hands, duplicate,
                           secrets.randbelow(2**32), "queued", None, None, None, time.time(), None)
        live = self.live[row.id] = _Live(row)
        try:
            (self.root / row.id).mkdir(mode=0o700)
            await store.call(store.add_challenge, row)
        except BaseException:
            del self.live[row.id]
            raise
        assert self.host.nursery is not None  # the host runs before the app serves
        self.host.nursery.start_soon(self._play, live)
        return row

    async def _opponent(self, text: str, agent: AgentRow) -> tuple[dict[str, Any], int | None]:
        """The opponent as the challenge records it, and its owner (None: a hosted bot).

        Raises:
            RequestError: 400, no such hosted bot, or no ready version of the agent in the game.
        """
        kind, _, name = text.partition(":")
        game = agent.game
        if kind == "bot":
            if name not in CHUMPS and not any(bot["name"] == name and bot["game"] == game for bot in hosted_bots()):
                raise RequestError(400, f"'opponent': no hosted bot {name[:64]!r} plays {game} (GET /api/bots)")
            return {"kind": "bot", "name": name, "seat": name}, None
        if kind != "agent":
            raise RequestError(400, "'opponent': \"agent:NAME\", \"agent:USER/NAME\" or \"bot:NAME\"")
        store = self.host.store
        ready = await store.call(store.latest_ready, game)
        names = {row.user_id: await store.call(store.user_name, row.user_id) for row in ready}
        user, _, wanted = name.rpartition("/")
        rows = [row for row in ready if row.name == wanted and user in ("", names[row.user_id])]
        if len(rows) > 1:  # the asker's own agent of that name among them, say
            users = ", ".join(names[row.user_id] for row in rows)
            raise RequestError(400, f"'opponent': agents of {users} have that name: name it agent:USER/{wanted[:64]}")
        if not rows:
            raise RequestError(400, f"'opponent': no ready version of a submitted agent {name[:80]!r} in {game}")
        row = rows[0]
        owner = names[row.user_id]
        return {"kind": "agent", "user": owner, "name": wanted, "version": row.version, "seat": f"{owner}.{wanted}",
                "agent_id": row.id}, row.user_id

    def _check_quota(self, user: User) -> None:
        """The user's hosted matches and challenges not over, and the queues'
        length, counted in memory so that the check and the challenge's entry
        need no await between them.

        Raises:
            RequestError: 429 past the user's limit, 503 past the queue's.
        """
        config = self.host.config
        active = sum(1 for live in self.host.live.values() if live.row.user_id == user.id)
        active += sum(1 for live in self.live.values() if live.row.user_id == user.id)
        if active >= config.max_matches_per_user:
            raise RequestError(429, f"you have {active} matches and challenges not over (the limit); ask again when one ends",
                               {"Retry-After": "10"})
        queued = sum(1 for live in self.host.live.values() if live.status == "queued")
        queued += sum(1 for live in self.live.values() if live.status == "queued")
        if queued >= config.max_queued:
            raise RequestError(503, "the service is full: try again later", {"Retry-After": "60"})

    # -- playing -------------------------------------------------------------

    def _room(self) -> bool:
        """Whether one more challenge may start: under :data:`AT_ONCE`, and the
        hosted matches and challenges playing under ``max_matches``."""
        playing = sum(1 for live in self.live.values() if live.status == "running")
        hosted = sum(1 for live in self.host.live.values() if live.status in ("waiting", "running"))
        return playing < AT_ONCE and playing + hosted < self.host.config.max_matches

    async def _play(self, live: _Live) -> None:
        """Play the challenge (:meth:`_contest`) while neither side's owner is
        revoked (:meth:`_watch`), then record how it ended; a service that
        stops cuts it short (:data:`RESTARTED`)."""
        row = live.row
        status: str = "aborted"
        reason: str | None = RESTARTED
        forfeit: dict[str, Any] | None = None
        seats = (row.agent["seat"], row.opponent["seat"])
        outcome: list[tuple[str, str | None, dict[str, Any] | None]] = []
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch, row, nursery.cancel_scope)
                outcome.append(await self._contest(live))
                nursery.cancel_scope.cancel()
            status, reason, forfeit = outcome[0] if outcome else ("aborted", REVOKED, None)
        finally:
            with trio.CancelScope(shield=True):
                try:
                    left = forfeit["agent"] if forfeit is not None else None
                    result = await trio.to_thread.run_sync(self._score, row, seats, left)
                    await self.host.store.call(self.host.store.end_challenge, row.id, status, reason, forfeit, result)
                except Exception:  # the database refused it: the next start marks it aborted
                    _log.exception("challenge %s: its end could not be recorded", row.id)
                finally:
                    del self.live[row.id]

    async def _contest(self, live: _Live) -> tuple[str, str | None, dict[str, Any] | None]:
        """Wait for room (the oldest first), then play the seatings in turn;
        how it ended (:func:`_outcome`). A failure ends this challenge only."""
        row = live.row
        try:
            if self._turn is None:
                self._turn = trio.Lock()
            async with self._turn:  # fair: the waiters take it in turn
                while not self._room():
                    await trio.sleep(ROOM_POLL_S)
                live.status = "running"
            await self.host.store.call(self.host.store.set_challenge_status, row.id, "running")
            plan = await trio.to_thread.run_sync(self._plan, row)
            for index in range(len(plan.seatings)):
                ended = _outcome(await play_seating(plan, index), plan, index)
                if ended[0] != "finished":
                    return ended
            return "finished", None, None
        except Exception as problem:  # a folder gone, a disk that fails: this challenge only
            _log.exception("challenge %s failed", row.id)
            return "aborted", failure_text(problem), None

    async def _watch(self, row: ChallengeRow, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` once the asker or the opponent agent's owner is
        revoked (``arena users revoke``, another process: looked for every
        :data:`arena.serve.hosting.REVOKED_POLL_S`), as the host ends a revoked user's matches."""
        sides = {row.user_id, row.opponent_user_id}
        while True:
            await trio.sleep(REVOKED_POLL_S)
            if any(user.revoked and user.id in sides for user in await self.host.store.call(self.host.store.users)):
                scope.cancel()
                return

    def _plan(self, row: ChallengeRow) -> MatchPlan:
        """The challenge as :mod:`arena.match` plays it: the asker's agent and
        its opponent, seats swapped in the second seating.

        Raises:
            ArchiveError: an agent's files are gone.
        """
        config = self.host.config
        game = load_game(row.game)
        bots: list[Bot] = []
        for index, side in enumerate((row.agent, row.opponent)):
            if side["kind"] == "agent":
                home = agent_folder(config.data / "agents" / side["agent_id"] / "files")
                bots.append(Bot.seated(side["seat"], Sandboxed(home)))
            else:
                seed = agent_seed(row.seed, index)
                bots.append(hosted_bot(side["name"], side["seat"], seed))
        seatings = ((0, 1), (1, 0))[: 2 if row.duplicate else 1]
        limits = TimeLimits(config.t_response_ms, config.t_hand_ms, config.t_per_hand_ms, int(config.start_timeout_s * 1000))
        return MatchPlan(
            game, row.game, row.hands, row.seed, tuple(bots), seatings, self.root / row.id, in_process=True,
            limits=limits, match_names=tuple(f"seating{index}" for index in range(len(seatings))), tlog=False,
            match_deadline=True, after_abort_s=1.0,
        )

    def _logs(self, row: ChallengeRow) -> list[Path]:
        """Each seating's ACPC log, there or not."""
        return [self.root / row.id / f"seating{index}.log" for index in range(2 if row.duplicate else 1)]

    def _score(self, row: ChallengeRow, seats: tuple[str, str], left: str | None) -> dict[str, Any]:
        """The result as its logs stand: :func:`analysis.match_score.score_match`'s
        document, the forfeiter (``left``) charged the hands it left."""
        game = load_game(row.game)
        tables = read_seatings(self._logs(row), game)
        try:
            return score_match(tables, seats, game=game, hands=row.hands, estimators=(), left=left).to_json()
        except ScoreError as problem:
            return {"hands": 0, "seatings": [], "players": [], "duplicate": None, "error": str(problem)}

    async def resume(self) -> None:
        """As the service starts: a challenge a stopped service left queued or
        playing is aborted (:data:`RESTARTED`), its result read from its logs."""
        store = self.host.store
        for row in await store.call(store.challenges, status=("queued", "running")):
            result = await trio.to_thread.run_sync(self._score, row, (row.agent["seat"], row.opponent["seat"]), None)
            await store.call(store.end_challenge, row.id, "aborted", RESTARTED, None, result)

    # -- reading -------------------------------------------------------------

    async def _known(self, user: User, challenge_id: str) -> ChallengeRow:
        """A challenge the user asked for or whose opponent is the user's agent.

        Raises:
            RequestError: 404, none such (another pair's reads the same).
        """
        store = self.host.store
        row = await store.call(store.challenge, challenge_id) if _ID.fullmatch(challenge_id) else None
        if row is None or user.id not in (row.user_id, row.opponent_user_id):
            raise RequestError(404, NO_SUCH_CHALLENGE)
        return row

    async def get(self, user: User, challenge_id: str) -> dict[str, Any]:
        """``GET /api/challenges/ID``."""
        row = await self._known(user, challenge_id)
        return describe(row, await self.host.store.call(self.host.store.user_name, row.user_id))

    async def mine(self, user: User) -> list[dict[str, Any]]:
        """The user's challenges and those against the user's agents, the newest first."""
        store = self.host.store
        rows = await store.call(store.challenges, user.id)
        return [describe(row, await store.call(store.user_name, row.user_id)) for row in rows]

    async def logs(self, user: User, challenge_id: str) -> bytes:
        """Each seating's ``.log`` and ``.hands.msgpack`` as a ``.tar.gz``.

        Raises:
            RequestError: 404, not the user's; 409, not over.
        """
        row = await self._known(user, challenge_id)
        if row.status in ("queued", "running"):
            raise RequestError(409, NOT_OVER)
        return await trio.to_thread.run_sync(self._archive, row)

    def _archive(self, row: ChallengeRow) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for log in self._logs(row):
                for path in (log, log.with_suffix(".hands.msgpack")):
                    if path.is_file():
                        archive.add(path, arcname=f"{row.id}/{path.name}", recursive=False)
        return buffer.getvalue()


def _outcome(run: SeatingRun, plan: MatchPlan, index: int) -> tuple[str, str | None, dict[str, Any] | None]:
    """How seating ``index`` ended: ``finished``; ``forfeited`` with the seat
    blamed (the first by seat); or ``aborted`` and why (no one to blame)."""
    blamed = run.culprits()
    if blamed:
        seat = min(blamed)
        who = plan.bots[plan.seatings[index][seat]].name
        said = _PATH.sub("…", _SEE_FILE.sub("", blamed[seat]))
        return "forfeited", None, {"agent": who, "seating": index + 1, "reason": said}
    if run.result is None:
        return "aborted", f"seating {index + 1} stopped without a result", None
    if run.result.aborted:
        return "aborted", aborted_text(run.result), None
    return "finished", None, None
