"""The service's SQLite database (WAL): users with hashed tokens, matches,
the versions of submitted agents, events, and challenges.

Tokens are 32 random bytes (URL-safe text), shown once; the database keeps
only their SHA-256 (a token has 256 bits of entropy, so a plain hash resists
guessing as well as a slow one would, and checking stays cheap on every
request). A lookup by hash is followed by a constant-time comparison. One
connection, used by one thread at a time: the service calls in through
:meth:`Store.call` (a worker thread, so the trio loop never waits on the
disk), ``arena users`` directly.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

import trio

__all__ = ["Store", "StoreError", "User", "MatchRow", "AgentRow", "EventRow", "new_token", "hash_token", "TOKEN_BYTES",
           "ACTIVE", "AGENT_STATUSES", "EVENT_STATUSES", "ChallengeRow", "CHALLENGE_STATUSES"]

#: Random bytes in a token.
TOKEN_BYTES: Final = 32
#: Statuses of a match that is not over.
ACTIVE: Final = ("queued", "waiting", "running")
#: A submitted agent version's statuses: its check match plays, it passed, it did not.
AGENT_STATUSES: Final = ("checking", "ready", "failed")
#: An event's statuses: not started yet, playing, over; or failed (matches that could not be played, or a runner's error).
EVENT_STATUSES: Final = ("waiting", "running", "finished", "failed")
#: A challenge's statuses: waiting for room, playing, played out; an agent forfeited (charged the hands
#: it left); or aborted by the service's side (a restart, a failure: no one is charged).
CHALLENGE_STATUSES: Final = ("queued", "running", "finished", "forfeited", "aborted")
#: A user name: ASCII only, so that no name can pass for another (a Cyrillic
#: ``а`` in ``аlice``, a fullwidth digit) on the leaderboard or a page.
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_P = ParamSpec("_P")
_T = TypeVar("_T")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL DEFAULT 0,
    revoked INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    game TEXT NOT NULL,
    opponent TEXT NOT NULL,
    hands INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    duplicate INTEGER NOT NULL,
    status TEXT NOT NULL,
    peer TEXT,
    ports TEXT NOT NULL DEFAULT '[]',
    seating INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    result TEXT,
    created REAL NOT NULL,
    finished REAL,
    culprit TEXT,
    practice INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS agents (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    game TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    output TEXT,
    created REAL NOT NULL,
    checked REAL,
    UNIQUE (user_id, name, version)
);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    settings TEXT NOT NULL,     -- JSON: hands, series, duplicate, seed, the time limits
    entrants TEXT NOT NULL,     -- JSON list: each entrant as asked, its seat name and (an agent) the version it took
    status TEXT NOT NULL,
    reason TEXT,
    created REAL NOT NULL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS challenges (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),  -- who asked
    opponent_user_id INTEGER REFERENCES users(id),  -- the opponent agent's owner; NULL: a hosted bot
    game TEXT NOT NULL,
    agent TEXT NOT NULL,     -- JSON: the asker's agent, the version it took and its seat name
    opponent TEXT NOT NULL,  -- JSON: the opponent (an agent as above, or a hosted bot) and its seat name
    hands INTEGER NOT NULL,
    duplicate INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    forfeit TEXT,            -- JSON: who forfeited, in which seating, why
    result TEXT,             -- JSON: analysis.match_score's document
    created REAL NOT NULL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS matches_user ON matches(user_id, created);
CREATE INDEX IF NOT EXISTS matches_status ON matches(status);
"""


class StoreError(Exception):
    """A user that cannot be made or found; ``str()`` is the one line to print."""


@dataclass(frozen=True)
class User:
    id: int
    name: str
    admin: bool
    revoked: bool
    created: float


@dataclass(frozen=True)
class MatchRow:
    """One match as stored; ``result`` is the JSON document of its results (None before any)."""

    id: str
    user_id: int
    game: str
    opponent: str
    hands: int
    seed: int
    duplicate: bool
    status: str
    peer: str | None
    ports: tuple[int, ...]
    seating: int
    error: str | None
    result: dict[str, Any] | None
    created: float
    finished: float | None
    #: Whose agent ended an aborted match: "user" (it left, timed out or broke
    #: the protocol: the match is charged, :func:`analysis.match_score.score_match`'s
    #: ``left``), "bot", or None (the service stopped it, or it did not abort).
    culprit: str | None = None
    #: Unranked: cards the user could know (a seed the user chose, or a
    #: duplicate match whose remote agent remembers seating 1 in seating 2).
    practice: bool = False


@dataclass(frozen=True)
class AgentRow:
    """One version of a submitted agent (:mod:`arena.serve.agents`): each
    upload of a name by its user is the next ``version``, the older ones
    kept; ``status`` is one of :data:`AGENT_STATUSES`, ``reason`` why its
    check match failed, ``output`` the agent's capped stderr in it."""

    id: str
    user_id: int
    name: str
    version: int
    game: str
    status: str
    reason: str | None
    output: str | None
    created: float
    checked: float | None


@dataclass(frozen=True)
class EventRow:
    """One event (:mod:`arena.serve.events`): what an admin asked for, the
    entrants as they were taken when it was created, and how it stands
    (``status`` one of :data:`EVENT_STATUSES`, ``reason`` why it failed)."""

    id: str
    user_id: int
    name: str
    game: str
    settings: dict[str, Any]
    entrants: list[dict[str, Any]]
    status: str
    reason: str | None
    created: float
    finished: float | None


@dataclass(frozen=True)
class ChallengeRow:
    """One challenge (:mod:`arena.serve.challenges`): a user's agent against
    another submitted agent or a hosted bot, each as taken when it was asked
    for; ``status`` one of :data:`CHALLENGE_STATUSES`."""

    id: str
    user_id: int
    opponent_user_id: int | None
    game: str
    agent: dict[str, Any]
    opponent: dict[str, Any]
    hands: int
    duplicate: bool
    seed: int
    status: str
    reason: str | None
    forfeit: dict[str, Any] | None
    result: dict[str, Any] | None
    created: float
    finished: float | None


def _challenge(row: sqlite3.Row) -> ChallengeRow:
    def loaded(key: str) -> Any:
        return None if row[key] is None else json.loads(row[key])

    return ChallengeRow(
        id=row["id"], user_id=row["user_id"], opponent_user_id=row["opponent_user_id"], game=row["game"],
        agent=loaded("agent"), opponent=loaded("opponent"), hands=row["hands"], duplicate=bool(row["duplicate"]),
        seed=row["seed"], status=row["status"], reason=row["reason"], forfeit=loaded("forfeit"), result=loaded("result"),
        created=row["created"], finished=row["finished"],
    )


def _event(row: sqlite3.Row) -> EventRow:
    return EventRow(
        id=row["id"], user_id=row["user_id"], name=row["name"], game=row["game"], settings=json.loads(row["settings"]),
        entrants=json.loads(row["entrants"]), status=row["status"], reason=row["reason"], created=row["created"],
        finished=row["finished"],
    )


def new_token() -> str:
    """A fresh token: :data:`TOKEN_BYTES` random bytes as URL-safe text."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def _user(row: sqlite3.Row) -> User:
    return User(row["id"], row["name"], bool(row["admin"]), bool(row["revoked"]), row["created"])


def _match(row: sqlite3.Row) -> MatchRow:
    return MatchRow(
        id=row["id"],
        user_id=row["user_id"],
        game=row["game"],
        opponent=row["opponent"],
        hands=row["hands"],
        seed=row["seed"],
        duplicate=bool(row["duplicate"]),
        status=row["status"],
        peer=row["peer"],
        ports=tuple(json.loads(row["ports"])),
        seating=row["seating"],
        error=row["error"],
        result=None if row["result"] is None else json.loads(row["result"]),
        created=row["created"],
        finished=row["finished"],
        culprit=row["culprit"],
        practice=bool(row["practice"]),
    )


def _agent(row: sqlite3.Row) -> AgentRow:
    return AgentRow(
        id=row["id"], user_id=row["user_id"], name=row["name"], version=row["version"], game=row["game"],
        status=row["status"], reason=row["reason"], output=row["output"], created=row["created"], checked=row["checked"],
    )


def _where(user_id: int | None, status: tuple[str, ...]) -> tuple[str, tuple[Any, ...]]:
    """A ``WHERE`` clause (empty: none) and its parameters: one user's rows (None: everyone's), of ``status`` (empty: any)."""
    where: list[str] = []
    parameters: list[Any] = []
    if user_id is not None:
        where.append("user_id = ?")
        parameters.append(user_id)
    if status:
        where.append(f"status IN ({', '.join('?' * len(status))})")
        parameters += status
    return (f" WHERE {' AND '.join(where)}" if where else ""), tuple(parameters)


class Store:
    """The database under ``data`` (``arena.db``), created on first use."""

    def __init__(self, data: Path) -> None:
        data.mkdir(parents=True, exist_ok=True)
        self.path = data / "arena.db"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._migrate()
        self._lock = threading.Lock()
        self._limiter: trio.CapacityLimiter | None = None

    def _migrate(self) -> None:
        """Bring a database an older version made up to :data:`_SCHEMA`: columns
        added since are added (NULL in the rows already there), nothing is dropped."""
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(matches)")}
        if "culprit" not in columns:
            self._db.execute("ALTER TABLE matches ADD COLUMN culprit TEXT")
        if "practice" not in columns:
            self._db.execute("ALTER TABLE matches ADD COLUMN practice INTEGER NOT NULL DEFAULT 0")

    def close(self) -> None:
        self._db.close()

    async def call(self, method: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``method(*args)`` on a worker thread, one at a time."""
        if self._limiter is None:
            self._limiter = trio.CapacityLimiter(1)
        return await trio.to_thread.run_sync(lambda: method(*args, **kwargs), limiter=self._limiter)

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, parameters)

    # -- users ---------------------------------------------------------------

    def add_user(self, name: str, *, admin: bool = False) -> tuple[User, str]:
        """A new user and its token (the only time the token exists in clear).

        Raises:
            StoreError: a bad or taken name.
        """
        if not _NAME.fullmatch(name):
            raise StoreError(f"bad user name {name[:80]!r}: 1 to 64 ASCII letters, digits, '-' or '_'")
        token = new_token()
        try:
            self._execute(
                "INSERT INTO users (name, token_hash, admin, created) VALUES (?, ?, ?, ?)",
                (name, hash_token(token), int(admin), time.time()),
            )
        except sqlite3.IntegrityError:
            raise StoreError(f"user {name!r} exists (arena users rotate {name} gives it a new token)") from None
        return self.user_named(name), token

    def user_named(self, name: str) -> User:
        """Raises: StoreError: no such user."""
        row = self._execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise StoreError(f"no user {name[:80]!r}")
        return _user(row)

    def user_name(self, user_id: int) -> str:
        row = self._execute("SELECT name FROM users WHERE id = ?", (user_id,)).fetchone()
        return "?" if row is None else str(row["name"])

    def users(self) -> list[User]:
        return [_user(row) for row in self._execute("SELECT * FROM users ORDER BY id").fetchall()]

    def user_for_token(self, token: str) -> User | None:
        """The live (not revoked) user whose token this is, or None."""
        digest = hash_token(token)
        row = self._execute("SELECT * FROM users WHERE token_hash = ?", (digest,)).fetchone()
        if row is None or not secrets.compare_digest(row["token_hash"], digest) or row["revoked"]:
            return None
        return _user(row)

    def revoke(self, name: str) -> User:
        """Stop the user's token and end its sessions.

        Raises:
            StoreError: no such user.
        """
        user = self.user_named(name)
        self._execute("UPDATE users SET revoked = 1 WHERE id = ?", (user.id,))
        self._execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))
        return self.user_named(name)

    def rotate(self, name: str) -> str:
        """A new token for ``name`` (the old one stops working; a revoked user is live again).

        Raises:
            StoreError: no such user.
        """
        user = self.user_named(name)
        token = new_token()
        self._execute("UPDATE users SET token_hash = ?, revoked = 0 WHERE id = ?", (hash_token(token), user.id))
        self._execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))
        return token

    # -- sessions (the web pages' cookie) ------------------------------------

    def new_session(self, user: User, lifetime_s: float) -> str:
        """A session for ``user`` lasting ``lifetime_s``: its secret, for a cookie (only its hash is kept)."""
        secret = new_token()
        now = time.time()
        self._execute("DELETE FROM sessions WHERE expires <= ?", (now,))
        self._execute("INSERT INTO sessions (hash, user_id, expires) VALUES (?, ?, ?)",
                      (hash_token(secret), user.id, now + lifetime_s))
        return secret

    def user_for_session(self, secret: str) -> User | None:
        """The live user of an unexpired session, or None."""
        digest = hash_token(secret)
        row = self._execute(
            "SELECT users.*, sessions.hash AS session FROM sessions JOIN users ON users.id = sessions.user_id"
            " WHERE sessions.hash = ? AND sessions.expires > ?",
            (digest, time.time()),
        ).fetchone()
        if row is None or not secrets.compare_digest(row["session"], digest) or row["revoked"]:
            return None
        return _user(row)

    def end_session(self, secret: str) -> None:
        self._execute("DELETE FROM sessions WHERE hash = ?", (hash_token(secret),))

    # -- matches -------------------------------------------------------------

    def add_match(self, row: MatchRow) -> None:
        self._execute(
            "INSERT INTO matches (id, user_id, game, opponent, hands, seed, duplicate, status, peer, ports, created,"
            " practice) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.user_id, row.game, row.opponent, row.hands, row.seed, int(row.duplicate), row.status,
             row.peer, json.dumps(list(row.ports)), row.created, int(row.practice)),
        )

    def update_match(self, match_id: str, **fields: Any) -> None:
        """Set ``fields`` (columns) of a match; ``ports`` and ``result`` are stored as JSON."""
        encoded = {key: json.dumps(list(value) if key == "ports" else value) if key in ("ports", "result") else value
                   for key, value in fields.items()}
        assignments = ", ".join(f"{key} = ?" for key in encoded)
        self._execute(f"UPDATE matches SET {assignments} WHERE id = ?", (*encoded.values(), match_id))

    def match(self, match_id: str) -> MatchRow | None:
        row = self._execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        return None if row is None else _match(row)

    def matches(self, user_id: int | None = None, *, status: tuple[str, ...] = ()) -> list[MatchRow]:
        """Matches, oldest first: one user's (None: everyone's), of ``status`` (empty: any)."""
        clause, parameters = _where(user_id, status)
        rows = self._execute(f"SELECT * FROM matches{clause} ORDER BY created, id", parameters).fetchall()
        return [_match(row) for row in rows]

    def abort_unfinished(self, reason: str) -> int:
        """Mark every match not over as aborted (what a restart does); how many were."""
        cursor = self._execute(
            f"UPDATE matches SET status = 'aborted', error = ?, finished = ? WHERE status IN ({', '.join('?' * len(ACTIVE))})",
            (reason, time.time(), *ACTIVE),
        )
        return cursor.rowcount

    # -- submitted agents ----------------------------------------------------

    def add_agent(self, agent_id: str, user_id: int, name: str, game: str) -> AgentRow:
        """A new version of the user's agent ``name`` (one more than its last), ``checking``."""
        self._execute(
            "INSERT INTO agents (id, user_id, name, version, game, status, created) VALUES (?, ?, ?,"
            " (SELECT COALESCE(MAX(version), 0) + 1 FROM agents WHERE user_id = ? AND name = ?), ?, 'checking', ?)",
            (agent_id, user_id, name, user_id, name, game, time.time()),
        )
        row = self.agent(agent_id)
        assert row is not None  # just inserted
        return row

    def agent(self, agent_id: str) -> AgentRow | None:
        row = self._execute("SELECT * FROM agents WHERE id = ?", (agent_id,)).fetchone()
        return None if row is None else _agent(row)

    def agents(self, user_id: int | None = None, *, status: tuple[str, ...] = ()) -> list[AgentRow]:
        """Agent versions by name, then version: one user's (None: everyone's), of ``status`` (empty: any)."""
        clause, parameters = _where(user_id, status)
        rows = self._execute(f"SELECT * FROM agents{clause} ORDER BY name, user_id, version", parameters).fetchall()
        return [_agent(row) for row in rows]

    def latest_ready(self, game: str) -> list[AgentRow]:
        """Per user and name, the newest ``ready`` version in ``game``: the
        entrant an event or the ladder takes for each submitted agent (a
        newer version still checking, or failed, leaves the last good one in)."""
        rows = self._execute(
            "SELECT * FROM agents WHERE status = 'ready' AND game = ? AND version = (SELECT MAX(version) FROM agents AS"
            " newer WHERE newer.user_id = agents.user_id AND newer.name = agents.name AND newer.status = 'ready'"
            " AND newer.game = agents.game) ORDER BY name, user_id",
            (game,),
        ).fetchall()
        return [_agent(row) for row in rows]

    def finish_agent(self, agent_id: str, status: str, reason: str | None, output: str) -> None:
        """Record a version's check: ``ready`` or ``failed``, why, and the agent's output."""
        self._execute(
            "UPDATE agents SET status = ?, reason = ?, output = ?, checked = ? WHERE id = ?",
            (status, reason, output, time.time(), agent_id),
        )

    # -- events --------------------------------------------------------------

    def add_event(self, row: EventRow) -> None:
        self._execute(
            "INSERT INTO events (id, user_id, name, game, settings, entrants, status, reason, created, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.user_id, row.name, row.game, json.dumps(row.settings), json.dumps(row.entrants), row.status,
             row.reason, row.created, row.finished),
        )

    def event(self, event_id: str) -> EventRow | None:
        row = self._execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
        return None if row is None else _event(row)

    def events(self, *, status: tuple[str, ...] = ()) -> list[EventRow]:
        """Every event of ``status`` (empty: any), the newest first."""
        clause, parameters = _where(None, status)
        return [_event(row) for row in self._execute(f"SELECT * FROM events{clause} ORDER BY created DESC", parameters)]

    def set_event_status(self, event_id: str, status: str, reason: str | None = None) -> None:
        """``status`` (and why, for ``failed``); an event over gets its time of finishing."""
        finished = time.time() if status in ("finished", "failed") else None
        self._execute("UPDATE events SET status = ?, reason = ?, finished = ? WHERE id = ?", (status, reason, finished, event_id))

    # -- challenges ----------------------------------------------------------

    def add_challenge(self, row: ChallengeRow) -> None:
        self._execute(
            "INSERT INTO challenges (id, user_id, opponent_user_id, game, agent, opponent, hands, duplicate, seed, status,"
            " created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.user_id, row.opponent_user_id, row.game, json.dumps(row.agent), json.dumps(row.opponent),
             row.hands, int(row.duplicate), row.seed, row.status, row.created),
        )

    def challenge(self, challenge_id: str) -> ChallengeRow | None:
        row = self._execute("SELECT * FROM challenges WHERE id = ?", (challenge_id,)).fetchone()
        return None if row is None else _challenge(row)

    def challenges(self, user_id: int | None = None, *, status: tuple[str, ...] = ()) -> list[ChallengeRow]:
        """Challenges, the newest first: those a user asked for or whose opponent
        is one of the user's agents (None: everyone's), of ``status`` (empty: any)."""
        where: list[str] = []
        parameters: list[Any] = []
        if user_id is not None:
            where.append("(user_id = ? OR opponent_user_id = ?)")
            parameters += [user_id, user_id]
        if status:
            where.append(f"status IN ({', '.join('?' * len(status))})")
            parameters += status
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._execute(f"SELECT * FROM challenges{clause} ORDER BY created DESC, id", tuple(parameters)).fetchall()
        return [_challenge(row) for row in rows]

    def end_challenge(self, challenge_id: str, status: str, reason: str | None, forfeit: dict[str, Any] | None,
                      result: dict[str, Any] | None) -> None:
        """Record how a challenge ended (``status`` one of the last three of :data:`CHALLENGE_STATUSES`)."""
        self._execute(
            "UPDATE challenges SET status = ?, reason = ?, forfeit = ?, result = ?, finished = ? WHERE id = ?",
            (status, reason, None if forfeit is None else json.dumps(forfeit), None if result is None else json.dumps(result),
             time.time(), challenge_id),
        )

    def set_challenge_status(self, challenge_id: str, status: str) -> None:
        self._execute("UPDATE challenges SET status = ? WHERE id = ?", (status, challenge_id))
