"""Browser sessions of the hosted arena: a person logs in once with their
token and the pages then know them by a cookie.

The cookie holds a fresh random session id (32 bytes); the database keeps
only its SHA-256, beside the hash of the token it was opened with, so a
stolen database opens no session, and rotating or revoking the token ends
every session it opened (the lookup joins on the user's current token hash
and live state). Sessions live in their own table of the service's SQLite
file, through their own connection (WAL lets both write), so the store's
schema is untouched. The cookie is ``HttpOnly`` (no script reads it),
``SameSite=Lax`` (no other site's form or WebSocket carries it) and
``Secure`` when the page came over HTTPS.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Final

import trio

from arena.serve.store import User, hash_token, new_token

__all__ = ["Sessions", "COOKIE", "SESSION_S"]

#: The session cookie's name.
COOKIE: Final = "arena_session"
#: Seconds a session lasts after its login.
SESSION_S: Final = 7 * 24 * 3600

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS web_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    token_hash TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS web_sessions_expires ON web_sessions(expires);
"""


class Sessions:
    """The sessions table of the database at ``path`` (the store's ``arena.db``)."""

    def __init__(self, path: Path, lifetime_s: float = SESSION_S) -> None:
        self.lifetime_s = lifetime_s
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._limiter = trio.CapacityLimiter(1)

    def close(self) -> None:
        self._db.close()

    async def open(self, user: User, token: str) -> str:
        """A new session for ``user``, who logged in with ``token``; the cookie's value."""
        session = new_token()

        def insert() -> None:
            with self._lock:
                now = time.time()
                self._db.execute("DELETE FROM web_sessions WHERE expires < ?", (now,))
                self._db.execute(
                    "INSERT INTO web_sessions (id_hash, user_id, token_hash, expires) VALUES (?, ?, ?, ?)",
                    (hash_token(session), user.id, hash_token(token), now + self.lifetime_s),
                )

        await trio.to_thread.run_sync(insert, limiter=self._limiter)
        return session

    async def user(self, session: str) -> User | None:
        """The live user of the session ``session`` (a cookie's value), or None:
        unknown, expired, logged out, or its token rotated or revoked since."""
        if not session or len(session) > 256:
            return None

        def lookup() -> sqlite3.Row | None:
            with self._lock:
                row: sqlite3.Row | None = self._db.execute(
                    "SELECT users.* FROM web_sessions JOIN users ON users.id = web_sessions.user_id"
                    " AND users.token_hash = web_sessions.token_hash"
                    " WHERE web_sessions.id_hash = ? AND web_sessions.expires > ? AND users.revoked = 0",
                    (hash_token(session), time.time()),
                ).fetchone()
                return row

        row = await trio.to_thread.run_sync(lookup, limiter=self._limiter)
        if row is None:
            return None
        return User(row["id"], row["name"], bool(row["admin"]), bool(row["revoked"]), row["created"])

    async def close_session(self, session: str) -> None:
        """Log out: the session ends now."""

        def delete() -> None:
            with self._lock:
                self._db.execute("DELETE FROM web_sessions WHERE id_hash = ?", (hash_token(session),))

        await trio.to_thread.run_sync(delete, limiter=self._limiter)
