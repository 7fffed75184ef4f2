"""Events: an admin's competition among submitted agents and hosted bots,
played by the tournament machinery and published to every logged-in user.

``POST /api/events`` (an admin; the cookie only from this origin) takes
``{"name", "game", "hands", "series", "duplicate", "entrants", "t_response_ms"?,
"t_per_hand_ms"?}``. Each entrant is ``bot:NAME``, a hosted bot (a named bot
of the game, or a simple one), or ``agent:NAME`` (``agent:USER/NAME`` where
users share the name): the newest ``ready`` version of that submitted agent
in the game (:meth:`arena.serve.store.Store.latest_ready`), taken when the
event is created and recorded with it, so a later upload changes nothing.

An event is an ``arena tournament`` (:mod:`arena.tournament`): its config
(``DATA/events/ID/config.toml``) names each agent's folder as a
``sandboxed`` bot, which every seating starts afresh in the sandbox
(:class:`arena.match.seats.Sandboxed`: duplicate seatings meet a new process
each, remembering nothing); a bot or agent that fails forfeits that seating
with its reason and the event goes on (:mod:`arena.tournament.external`).
The runner plays in a child process on a local pool of
:data:`WORKERS` processes, one event at a time (the next is ``waiting``),
so the service's event loop only waits for it. Not on the compose stack's Dask
workers: the agents' files are in the service's data folder, which the workers
do not share, and the sandbox is only known to work where the service checked it.

Restarts: a service stopped mid-event passes the runner its SIGTERM, the
runner stops its matches (what is not stored is played again); a service
killed outright leaves its runner behind, which the next start stops (the
holder of the runner's lock). Either way the next start runs ``arena
tournament --resume`` on every event ``waiting`` or ``running``: the
runner's database keeps every finished match, and the rest are played on
the same cards.

Results (the ``bankroll`` and ``runoff`` rankings, the series run-off, the
crosstable with 95% intervals: :func:`analysis.ranking.ranking_document`
over the runner's database, as ``arena rank`` computes them) and each
entrant's forfeits with their reasons are written once the event is over
(``results.json``). The logs of every match (the dealer's ACPC ``.log`` and
``.hands.msgpack`` records of each seating) are one ``.tar.gz``, given only
once the event is over (a 409 before: the fair-play rule; the cards of a
match still to be played are those of the matches before it).
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import secrets
import signal
import sqlite3
import sys
import tarfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Final

import trio

from analysis.ranking import ranking_document
from analysis.scoring import ResultsError, ScoringError, load_results
from arena.sandbox import unavailable
from arena.serve.archives import ArchiveError, agent_folder
from arena.serve.hosting import Host
from arena.serve.httpkit import RequestError
from arena.serve.store import AgentRow, EventRow, User
from arena.serve.validation import CHUMPS
from arena.tournament.config import MAX_BOTS, MAX_SERIES, ConfigError, load_config
from arena.tournament.play import FORFEIT
from arena.tournament.runner import DATABASE
from dealer.lock import MatchInUseError, MatchLock
from poker.gamedef import game_names, load_game
from strategies.bots import LIBRARY

__all__ = ["Events", "EXAMPLE", "WORKERS", "NO_SUCH_EVENT", "NOT_OVER", "RESULTS"]

#: The admin page's event box holds this at first (entrants to edit: agents must be ready in the game).
EXAMPLE: Final[dict[str, Any]] = {
    "name": "Kuhn open", "game": "kuhn", "hands": 200, "series": 2, "duplicate": True,
    "entrants": ["bot:always-call", "bot:always-raise", "agent:NAME"],
}
#: Processes of an event's local pool (each plays one match at a time).
WORKERS: Final = max(1, min(4, (os.cpu_count() or 2) // 2))
NO_SUCH_EVENT: Final = "no such event: GET /api/events lists them"
NOT_OVER: Final = "the event is not over: its logs are given once it is (they show the cards of matches still to play)"
#: The results of an event that is over, in its folder.
RESULTS: Final = "results.json"
_CONFIG: Final = "config.toml"
_OUTPUT: Final = "out"
_LOCK: Final = "tournament.lock"  # the runner's (arena.tournament.runner), held while it plays
_ID: Final = re.compile(r"[0-9a-f]{16}")
_KEYS: Final = ("name", "game", "hands", "series", "duplicate", "entrants", "t_response_ms", "t_per_hand_ms")
_SEAT: Final = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
#: "(see /the/service's/file)" in a forfeit's reason: a file of the service's, not for the page.
_SEE_FILE: Final = re.compile(r" \(see [^()]*\)")
#: Seconds the runner a killed service left behind gets to stop after its SIGTERM.
_ORPHAN_S: Final = 30.0

_log = logging.getLogger(__name__)


def _whole(document: dict[str, Any], key: str, default: int | None, low: int, high: int) -> int:
    value = document.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(400, f"{key!r}: a whole number in {low}..{high}, got {json.dumps(value)[:40]}")
    return value


class Events:
    """The service's events: created by admins, played one at a time, read by everyone."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.root = host.config.data / "events"
        self._turn: trio.Lock | None = None  # made in the service's run (a trio object belongs to it)

    # -- creating ------------------------------------------------------------

    async def create(self, user: User, document: dict[str, Any]) -> EventRow:
        """Check an admin's request, take its entrants, write its config and
        start it (after any event before it); the new event, ``waiting``.

        Raises:
            RequestError: 403 for a user who is not an admin; 503 where submitted
                agents cannot run; 400 naming the first bad key or entrant.
        """
        if not user.admin:
            raise RequestError(403, "only an admin creates events (arena users add NAME --admin)")
        unknown = sorted(set(document) - set(_KEYS))
        if unknown:
            raise RequestError(400, f"{unknown[0][:40]!r}: unknown key (known: {', '.join(_KEYS)})")
        name = document.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 100 or not name.isprintable():
            raise RequestError(400, "'name': 1 to 100 printable characters")
        game = document.get("game")
        if not isinstance(game, str) or game not in game_names():
            raise RequestError(400, f"'game': name a shipped game (arena games), got {json.dumps(game)[:60]}")
        config = self.host.config
        settings = {
            "hands": _whole(document, "hands", None, 2, config.max_hands),
            "series": _whole(document, "series", 1, 1, MAX_SERIES),
            "duplicate": document.get("duplicate", True),
            "seed": secrets.randbelow(2**31),
            "t_response_ms": _whole(document, "t_response_ms", config.t_response_ms, 1, 3_600_000),
            "t_per_hand_ms": _whole(document, "t_per_hand_ms", config.t_per_hand_ms, 1, 3_600_000),
        }
        if not isinstance(settings["duplicate"], bool):
            raise RequestError(400, "'duplicate': true or false")
        asked = document.get("entrants")
        if not isinstance(asked, list) or not all(isinstance(e, str) for e in asked):
            raise RequestError(400, "'entrants': a list such as [\"bot:always-call\", \"agent:NAME\"]")
        players = load_game(game).num_players
        if not players <= len(asked) <= MAX_BOTS or len(set(asked)) != len(asked):
            raise RequestError(400, f"'entrants': {players} to {MAX_BOTS} entrants, each once")
        if any(e.startswith("agent:") for e in asked) and (why := await trio.to_thread.run_sync(unavailable)):
            raise RequestError(503, f"submitted agents cannot run on this service: {why}")
        ready = await self.host.store.call(self.host.store.latest_ready, game)
        names = {row.user_id: await self.host.store.call(self.host.store.user_name, row.user_id) for row in ready}
        entrants = [self._entrant(text, game, ready, names) for text in asked]
        seats = [entrant["seat"] for entrant in entrants]
        if len(set(seats)) != len(seats):
            twice = next(seat for seat in seats if seats.count(seat) > 1)
            raise RequestError(400, f"'entrants': two of them play as {twice!r}: enter one as agent:USER/NAME")
        event = EventRow(secrets.token_hex(8), user.id, name.strip(), game, settings, entrants, "waiting", None,
                         time.time(), None)
        await trio.to_thread.run_sync(self._write_config, event)
        await self.host.store.call(self.host.store.add_event, event)
        assert self.host.nursery is not None  # the host runs before the app serves
        self.host.nursery.start_soon(self.play, event.id)
        return event

    def _entrant(self, text: str, game: str, ready: list[AgentRow], names: dict[int, str]) -> dict[str, Any]:
        """``bot:NAME`` or ``agent:[USER/]NAME`` as the event records it (an agent with the version it takes).

        Raises:
            RequestError: 400, no such hosted bot or no ready version of the agent in ``game``.
        """
        kind, _, name = text.partition(":")
        if kind == "bot":
            bot = LIBRARY.get(name)
            if name not in CHUMPS and (bot is None or bot.game != game):
                raise RequestError(400, f"{text[:80]!r}: no hosted bot {name[:64]!r} plays {game} (GET /api/bots)")
            return {"entrant": text, "kind": "bot", "seat": name, "process": bot is not None and bot.agent != "equilibrium"}
        if kind != "agent":
            raise RequestError(400, f"{text[:80]!r}: an entrant is bot:NAME or agent:NAME")
        owner, _, agent = name.rpartition("/")
        rows = [row for row in ready if row.name == agent and owner in ("", names[row.user_id])]
        if not rows:
            raise RequestError(400, f"{text[:80]!r}: no ready version of a submitted agent {agent[:64]!r} in {game}")
        if len(rows) > 1:
            users = ", ".join(names[row.user_id] for row in rows)
            raise RequestError(400, f"{text[:80]!r}: agents of {users} have that name: enter agent:USER/{agent}")
        row = rows[0]
        seat = f"{names[row.user_id]}.{agent}" if owner else agent
        if not _SEAT.fullmatch(seat):
            raise RequestError(400, f"{text[:80]!r}: {seat!r} cannot be a seat's name")
        return {"entrant": text, "kind": "agent", "seat": seat, "user": names[row.user_id], "name": agent,
                "version": row.version, "agent_id": row.id}

    def _write_config(self, event: EventRow) -> None:
        """The event's ``arena tournament`` config, checked as that command checks it.

        Raises:
            RequestError: 400, the config's check failed (a bot that does not play the game, too many matches).
        """
        config, settings = self.host.config, event.settings
        lines = [
            f'output = "{_OUTPUT}"', f"game = {json.dumps(event.game)}", f"hands = {settings['hands']}",
            f"series = {settings['series']}", f"seed = {settings['seed']}",
            f"duplicate = {'true' if settings['duplicate'] else 'false'}", f"workers = {WORKERS}",
            # a bot that re-solves at every decision would stall its seating's dealer: each plays as a process then
            f'agents = "{"process" if any(e.get("process") for e in event.entrants) else "in-process"}"',
            "[limits]", f"t_response_ms = {settings['t_response_ms']}", f"t_per_hand_ms = {settings['t_per_hand_ms']}",
            f"t_hand_ms = {config.t_hand_ms}", f"start_timeout_ms = {int(config.start_timeout_s * 1000)}",
            "[bots]",
        ]
        for entrant in event.entrants:
            if entrant["kind"] == "bot":
                lines.append(f"{json.dumps(entrant['seat'])} = {json.dumps(entrant['seat'])}")
                continue
            try:
                home = agent_folder(self.host.config.data / "agents" / entrant["agent_id"] / "files")
            except ArchiveError as error:
                raise RequestError(400, f"{entrant['entrant']}: {error}") from None
            lines.append(f"{json.dumps(entrant['seat'])} = {{ sandboxed = {json.dumps(str(home))} }}")
        folder = self.root / event.id
        folder.mkdir(parents=True)
        path = folder / _CONFIG
        path.write_text("\n".join(lines) + "\n")
        try:
            load_config(path)
        except ConfigError as error:
            path.unlink()
            folder.rmdir()
            raise RequestError(400, str(error).removeprefix(f"{path}: ")[:500]) from None

    # -- playing -------------------------------------------------------------

    async def resume(self) -> None:
        """As the service starts: play again every event a stopped service left ``waiting`` or ``running``."""
        assert self.host.nursery is not None  # the host runs before the app serves
        for event in reversed(await self.host.store.call(self.host.store.events, status=("waiting", "running"))):
            self.host.nursery.start_soon(self.play, event.id)

    async def play(self, event_id: str) -> None:
        """Play the event (after any before it) in ``arena tournament --resume``
        and record how it went; its results once it is over."""
        if self._turn is None:
            self._turn = trio.Lock()
        async with self._turn:
            folder = self.root / event_id
            await trio.to_thread.run_sync(_stop_orphan, folder / _OUTPUT / _LOCK)
            await self.host.store.call(self.host.store.set_event_status, event_id, "running")
            command = [sys.executable, "-m", "arena.cli", "tournament", str(folder / _CONFIG), "--resume", "--bootstrap", "0"]
            with open(folder / "stdout.txt", "ab") as out, open(folder / "stderr.txt", "ab") as err:
                code = (await trio.run_process(command, stdout=out, stderr=err, check=False)).returncode
            reason: str | None = None
            if code == 0:
                try:
                    await trio.to_thread.run_sync(self._write_results, event_id)
                except (OSError, sqlite3.Error, ResultsError, ScoringError) as problem:
                    _log.exception("the results of event %s could not be written", event_id)
                    status, reason = "failed", f"its results could not be read: {str(problem)[:200]}"
                else:
                    status = "finished"
            else:
                status, reason = "failed", f"the runner stopped with status {code} (an admin sees its output)"
            await self.host.store.call(self.host.store.set_event_status, event_id, status, reason)

    def _write_results(self, event_id: str) -> None:
        """``results.json``: the rankings as ``arena rank`` gives them over the
        runner's database, and each entrant's forfeits."""
        event = self.host.store.event(event_id)
        assert event is not None  # it is being played
        output = self.root / event_id / _OUTPUT
        game = load_game(event.game)
        doc = ranking_document(load_results(output), game, event.game, 0, 0)
        doc["results"] = f"event {event_id}"  # not the service's folder
        forfeits: dict[str, list[dict[str, Any]]] = {entrant["seat"]: [] for entrant in event.entrants}
        with closing(sqlite3.connect(output / DATABASE)) as connection:
            for (text,) in connection.execute("SELECT forfeits FROM matches ORDER BY match"):
                for line in json.loads(text):
                    found = FORFEIT.fullmatch(line)
                    if found is None:  # pragma: no cover - the runner writes every line so
                        raise ResultsError(f"a forfeit line of another shape: {line[:100]}")
                    forfeits[found["bot"]].append({
                        "match": found["match"], "seating": found["seating"], "seat": int(found["seat"]),
                        "hands": f"{found['first']}..{found['last']}", "reason": _SEE_FILE.sub("", found["reason"]),
                    })
        results = {"bankroll": doc["bankroll"], "runoff": doc["bankroll_runoff"], "series_runoff": doc["series_runoff"],
                   "unit": doc["unit"], "matches": doc["matches"], "ranking": doc, "forfeits": forfeits}
        temporary = self.root / event_id / f".{RESULTS}.tmp"
        temporary.write_text(json.dumps(results))
        temporary.replace(self.root / event_id / RESULTS)

    # -- reading -------------------------------------------------------------

    async def all(self) -> list[dict[str, Any]]:
        """Every event, the newest first, without its results."""
        rows = await self.host.store.call(self.host.store.events)
        return [await self._describe(row, results=False) for row in rows]

    async def get(self, event_id: str, *, admin: bool = False) -> dict[str, Any]:
        """An event: what it is, how it stands, its results once it is over (and,
        for an ``admin``, the end of the runner's output, which names the service's folders).

        Raises:
            RequestError: 404, no such event.
        """
        return await self._describe(await self._known(event_id), results=True, admin=admin)

    async def _known(self, event_id: str) -> EventRow:
        row = await self.host.store.call(self.host.store.event, event_id) if _ID.fullmatch(event_id) else None
        if row is None:
            raise RequestError(404, NO_SUCH_EVENT)
        return row

    async def _describe(self, row: EventRow, *, results: bool, admin: bool = False) -> dict[str, Any]:
        settings = {key: value for key, value in row.settings.items() if key != "seed" or row.status == "finished"}
        entrants = [{key: value for key, value in entrant.items() if key not in ("agent_id", "process")} for entrant in row.entrants]
        shown: dict[str, Any] = {
            "id": row.id, "name": row.name, "game": row.game, "by": await self.host.store.call(self.host.store.user_name, row.user_id),
            "status": row.status, "reason": row.reason, "created": row.created, "finished": row.finished, **settings,
            "entrants": entrants,
        }
        if results:
            folder = self.root / row.id
            shown["progress"] = await trio.to_thread.run_sync(_progress, folder / _OUTPUT / DATABASE)
            shown["results"] = await trio.to_thread.run_sync(_read_json, folder / RESULTS) if row.status == "finished" else None
            if admin:
                shown["output"] = await trio.to_thread.run_sync(_tails, folder)
        return shown

    async def logs(self, event_id: str) -> bytes:
        """Every match's logs and hand records as a ``.tar.gz`` (``MATCH/SEATING.log``, ``.hands.msgpack``).

        Raises:
            RequestError: 404, no such event; 409, the event is not over.
        """
        row = await self._known(event_id)
        if row.status != "finished":
            raise RequestError(409, NOT_OVER)
        return await trio.to_thread.run_sync(_archive, self.root / row.id / _OUTPUT)


def _stop_orphan(lock: Path) -> None:
    """Stop the runner a killed service left playing this event (the holder of
    its lock gets SIGTERM, as a stopping service would send), and wait until it is gone."""
    if not lock.exists():
        return
    deadline = time.monotonic() + _ORPHAN_S
    signalled = False
    while True:
        try:
            MatchLock(lock).release()
            return
        except MatchInUseError as held:
            if not signalled and held.holder.isdigit():
                try:
                    os.kill(int(held.holder), signal.SIGTERM)
                except ProcessLookupError:
                    pass
                signalled = True
            if time.monotonic() > deadline:
                return  # the runner then says it is in use, and the event fails saying so
            time.sleep(0.2)
        except FileNotFoundError:
            return


def _progress(database: Path) -> dict[str, int]:
    """Matches stored so far (the runner's database; none before it made one,
    or while it is making its tables)."""
    if not database.exists():
        return {"matches": 0}
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as connection:
            return {"matches": int(connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0])}
    except sqlite3.OperationalError:  # no table yet
        return {"matches": 0}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _tails(folder: Path, limit: int = 4000) -> str:
    """The end of the runner's stdout and stderr."""
    said = []
    for name in ("stdout.txt", "stderr.txt"):
        try:
            data = (folder / name).read_bytes()
        except OSError:
            continue
        said.append(data[-limit:].decode("utf-8", "replace"))
    return "".join(said)


def _archive(output: Path) -> bytes:
    """The counted attempt of each match: its seatings' ``.log`` and ``.hands.msgpack``, named by the match's folder."""
    buffer = io.BytesIO()
    with closing(sqlite3.connect(f"file:{output / DATABASE}?mode=ro", uri=True)) as connection:
        logs = [Path(path) for (text,) in connection.execute("SELECT logs FROM matches ORDER BY match") for path in json.loads(text)]
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for log in logs:
            for path in (log, log.with_name(log.name.removesuffix(".log") + ".hands.msgpack")):
                if path.is_file():
                    archive.add(path, arcname=f"{log.parent.name}/{path.name}", recursive=False)
    return buffer.getvalue()
