"""Tournaments on the service: an admin submits a config, the service plays it.

The config is the TOML ``arena tournament`` takes (:mod:`arena.tournament.config`),
checked whole before it is accepted (a bad key is a 400 that names it); its
``output`` is the service's (``DATA/tournaments/ID/out``), so a config may
not set one. Each runs as ``arena tournament`` in a child process, one at a
time (the next waits), on the Dask scheduler of the service's config
(``dask``) or the config's local pool; its ``report.html`` is shown in the
site's layout. External bots enter only as the commands of a config an admin
submitted: the admin's submission is the approval, and nothing is uploaded.
The output of ``arena tournament`` names the service's folders and those
commands: only an admin is shown it.

Each tournament's ``status.json`` says where it stands; one that was
queued or playing when the service stopped reads ``interrupted`` after a
restart (``arena tournament DATA/tournaments/ID/config.toml --resume``
finishes it by hand).
"""

from __future__ import annotations

import html
import json
import secrets
import shutil
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Final

import trio

from arena.serve.httpkit import RequestError
from arena.serve.store import User
from arena.tournament.config import ConfigError, load_config
from arena.tournament.runner import REPORT_HTML

__all__ = ["Tournaments", "OUTPUT", "CONFIG", "EXAMPLE"]

#: The output folder of a tournament, inside its own.
OUTPUT: Final = "out"
#: The config as submitted (with the service's ``output``).
CONFIG: Final = "config.toml"
#: The admin page's tournament box holds this at first: a config that runs as it is, to edit.
EXAMPLE: Final = """# Every pair of bots plays in duplicate (the same cards, the seats swapped).
game = "leduc"      # a short name: arena games lists them
hands = 200         # per seating
series = 2          # series k deals from seed + k
seed = 1
workers = 2

[bots]              # name = strategy spec (arena bots lists the named bots)
cfr = "leduc-cfr"
caller = "always-call"
raiser = "always-raise"
"""
#: Why a browser session cannot submit bots that run commands (they run as the
#: service's user): a page the admin has open, or a script injected into one,
#: would carry the session cookie; the bearer token is never sent on its own.
COMMANDS_BY_TOKEN: Final = (
    "bots that run commands (command = ...) are submitted with an admin's token (POST /api/tournaments,"
    " Authorization: Bearer), not from a browser session"
)
_STATUS: Final = "status.json"
_ID_CHARS: Final = frozenset("0123456789abcdef")


class Tournaments:
    """The tournaments under ``DATA/tournaments``, played one at a time."""

    def __init__(self, data: Path, dask: str | None) -> None:
        self.root = data / "tournaments"
        self.dask = dask
        self._turn = trio.Lock()
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in self.root.iterdir():
            status = self._status(folder.name)
            if status is not None and status["status"] in ("queued", "running"):
                self._write(folder.name, {**status, "status": "interrupted"})

    def _status(self, tournament_id: str) -> dict[str, Any] | None:
        path = self.root / tournament_id / _STATUS
        try:
            status: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return status

    def _write(self, tournament_id: str, status: dict[str, Any]) -> None:
        path = self.root / tournament_id / _STATUS
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(status))
        temporary.replace(path)

    def submit(self, user: User, text: bytes, *, by_token: bool) -> dict[str, Any]:
        """Check a config and keep it as a new queued tournament; its status.
        ``by_token``: the request carried the admin's bearer token, not just
        the browser's session cookie: only then may its bots run commands
        (:data:`COMMANDS_BY_TOKEN`).

        Raises:
            RequestError: 403 for a user who is not an admin or a config with
                commands from a browser session, 400 for a config that is not
                UTF-8 TOML, sets ``output``, or fails its checks.
        """
        if not user.admin:
            raise RequestError(403, "only an admin submits tournaments (arena users add NAME --admin)")
        try:
            document = tomllib.loads(text.decode("utf-8"))
        except UnicodeDecodeError:
            raise RequestError(400, "the tournament config is not UTF-8 text") from None
        except tomllib.TOMLDecodeError as error:
            raise RequestError(400, f"the tournament config is not TOML: {str(error)[:200]}") from None
        if "output" in document:
            raise RequestError(400, "'output': the service keeps each tournament's output itself; leave it out")
        tournament_id = secrets.token_hex(8)
        folder = self.root / tournament_id
        folder.mkdir()
        path = folder / CONFIG
        path.write_bytes(f'output = "{OUTPUT}"  # the service\'s\n'.encode() + text)
        try:
            config = load_config(path)
        except ConfigError as error:
            shutil.rmtree(folder)
            raise RequestError(400, str(error).removeprefix(f"{path}: ")[:500]) from None  # the line, not our folders
        if not by_token and any(bot.command for bot in config.bots):
            shutil.rmtree(folder)
            raise RequestError(403, COMMANDS_BY_TOKEN)
        status = {
            "id": tournament_id,
            "by": user.name,
            "game": config.game_arg,
            "bots": len(config.bots),
            "status": "queued",
            "submitted": time.time(),
            "finished": None,
            "exit_status": None,
        }
        self._write(tournament_id, status)
        return status

    def start(self, user: User, text: bytes, nursery: trio.Nursery, *, by_token: bool) -> dict[str, Any]:
        """:meth:`submit`, then :meth:`play` in ``nursery``; its status.

        Raises:
            RequestError: as :meth:`submit`.
        """
        status = self.submit(user, text, by_token=by_token)
        nursery.start_soon(self.play, status["id"])
        return status

    async def play(self, tournament_id: str) -> None:
        """Play a submitted tournament (after any before it) in ``arena tournament``."""
        async with self._turn:
            status = self._status(tournament_id)
            assert status is not None
            self._write(tournament_id, {**status, "status": "running"})
            folder = self.root / tournament_id
            command = [sys.executable, "-m", "arena.cli", "tournament", str(folder / CONFIG)]
            if self.dask is not None:
                command += ["--dask", self.dask]
            with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
                code: int | None = None
                try:
                    code = (await trio.run_process(command, stdout=out, stderr=err, check=False)).returncode
                finally:
                    with trio.CancelScope(shield=True):
                        done: dict[str, Any] = {"status": "interrupted"} if code is None else {
                            "status": "finished" if code == 0 else "failed", "exit_status": code
                        }
                        self._write(tournament_id, {**status, **done, "finished": time.time()})

    def all(self) -> list[dict[str, Any]]:
        """Every tournament's status, the newest first."""
        found = [status for folder in self.root.iterdir() if (status := self._status(folder.name)) is not None]
        return sorted(found, key=lambda status: -status["submitted"])

    def get(self, tournament_id: str, *, admin: bool) -> dict[str, Any]:
        """A tournament's status, with the end of its output for an ``admin``
        (None for anyone else: it names the service's folders and the bots' commands).

        Raises:
            RequestError: 404, no such tournament.
        """
        status = self._known(tournament_id)
        folder = self.root / tournament_id
        status["report"] = (folder / OUTPUT / REPORT_HTML).is_file()
        status["output"] = _tail(folder / "stdout.txt") + _tail(folder / "stderr.txt") if admin else None
        return status

    def _known(self, tournament_id: str) -> dict[str, Any]:
        """The status of tournament ``tournament_id`` (an id as :meth:`submit` makes them, else none).

        Raises:
            RequestError: 404, no such tournament.
        """
        status = self._status(tournament_id) if set(tournament_id) <= _ID_CHARS and len(tournament_id) == 16 else None
        if status is None:
            raise RequestError(404, f"no tournament {tournament_id[:40]!r}")
        return status

    def report(self, tournament_id: str) -> tuple[str, str]:
        """The title and the body of the tournament's ``report.html`` (what is
        inside its ``<body>`` after its ``<h1>``), for the site's own page
        around it: the report's writer (:func:`analysis.report.render_rank_report`)
        escaped it, and its style gives way to the site's.

        Raises:
            RequestError: 404, no such tournament or no report yet.
        """
        self._known(tournament_id)
        path = self.root / tournament_id / OUTPUT / REPORT_HTML
        try:
            page = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            raise RequestError(404, f"tournament {tournament_id} has no report yet") from None
        body = page.partition("<body>")[2].rpartition("</body>")[0]
        heading, found, rest = body.partition("</h1>")
        if not found:
            return f"Tournament {tournament_id}", body
        return html.unescape(heading.partition("<h1>")[2]), rest


def _tail(path: Path, limit: int = 4000) -> str:
    """The last ``limit`` bytes of a file that may be long (a tournament's output), read alone."""
    try:
        with open(path, "rb") as file:
            file.seek(max(0, file.seek(0, 2) - limit))
            data = file.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")
