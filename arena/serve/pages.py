"""The hosted arena in the browser: login, lobby, web tables, leaderboard,
match pages with the analysis and a hand replayer, tournaments, and a
person's submitted agents ("My agents": upload, versions, their checks,
and challenges: the form and the list, with each one's result and logs).

Each page is a Jinja2 template under ``templates/`` (one base layout with the
site's navigation; autoescaped, so a name, an error or a bot's words are
text, never markup), rendered through Starlette's ``Jinja2Templates``; this
module holds the routes and the data each page needs. One stylesheet and two
scripts (the login and logout with the lobby's game choice, the replayer)
are under ``/web/``: no build step. The pages fit a phone's 390 px as well
as a desktop. A page knows its person by the session cookie that
``POST /api/login`` sets (:mod:`arena.serve.httpkit`); without one it redirects
to ``/login?next=PATH``. A form that changes something is a POST, which the
cookie's ``SameSite=Strict`` keeps other sites from sending, and which is
refused (403) when its ``Origin`` is another site's. A match or table of
another person is a 404, as in the API.

The web tables are ``arena play``'s page (:mod:`agent.human.web`), served
at ``/tables/ID/``: the same files, and the same WebSocket handler behind a
check of the session, the table's owner and the ``Origin``.

The admin page submits tournaments (:mod:`arena.serve.tournaments`), as
``POST /api/tournaments`` (:mod:`arena.serve.app`) does; only an admin sees a
tournament's output, which names the service's files and the bots' commands.
It creates events too (:mod:`arena.serve.events`, the JSON ``POST
/api/events`` takes); every person reads the events (``/events``) and an
event's results once it is over: both rankings, the crosstable with 95%
intervals, the forfeits with their reasons, and its logs to download.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote

import json

import jinja2
import trio
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.templating import Jinja2Templates
from starlette.websockets import WebSocket

from agent.human.seat import betting_words
from agent.human.web import POLICY_VIOLATION, STATIC, serve_page
from analysis.report import cell_text, crosstable_grid
from arena.serve.agents import CHECK_HANDS, CHECK_OPPONENT, Agents, describe
from arena.serve.challenges import Challenges
from arena.serve.events import EXAMPLE as EVENT_EXAMPLE, Events
from arena.serve.hosting import HISTORIES, Host, history_problem
from arena.serve.httpkit import RateLimiter, RequestError, error, same_origin, session_user
from arena.serve.store import User
from arena.serve.tables import MAX_TABLE_HANDS, Tables
from arena.serve.tournaments import EXAMPLE, Tournaments
from arena.serve.validation import CHUMPS, hosted_bots
from dealer.log import LogError, read_log
from poker.cards import card_to_text
from poker.gamedef import friendly_name, game_names, load_game, short_name
from poker.stats import interval_note, interval_shown

__all__ = ["install_pages", "WEB_STATIC", "TEMPLATES", "GAMES", "REPLAY_CHUNK", "LOGGED_OUT"]

WEB_STATIC: Final = Path(__file__).with_name("static")
TEMPLATES: Final = Path(__file__).with_name("templates")
#: The games the lobby and the leaderboard offer, each once by its shortest name: the
#: heads-up games the hosted bots play. (``holdem.limit.2p``, a limit hold'em with three
#: raises on the flop, is still a game the API takes; offered beside ``hulhe`` it read as
#: the same game twice.)
GAMES: Final = ("kuhn", "leduc", "leduc.nolimit", "hulhe", "hunl")
#: Hands one replay request returns.
REPLAY_CHUNK: Final = 100
#: What a table's WebSocket says when its session has gone.
LOGGED_OUT: Final = "your session has ended: log in again (the table keeps your seat)"
_WEB_FILES: Final = {
    "site.css": "text/css; charset=utf-8",
    "site.js": "text/javascript; charset=utf-8",
    "replay.js": "text/javascript; charset=utf-8",
}
_TABLE_FILES: Final = {"table.js": "text/javascript; charset=utf-8", "table.css": "text/css; charset=utf-8"}
#: Every page's headers: never cached, never framed by another site (no clicks stolen on a form).
_PAGE_HEADERS: Final = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}
#: The hand-history links' words, by format (:data:`arena.serve.hosting.HISTORIES`).
_HISTORY_WORDS: Final = {"phh": "hand history (PHH)", "pokerstars": "PokerStars text"}
#: What the lobby's form holds at first.
_DEFAULT_GAME: Final = "leduc"
_DEFAULT_HANDS: Final = 10
#: A match's statuses once it is over.
_OVER: Final = ("finished", "aborted")

PageHandler = Callable[[Request, User], Awaitable[Response]]


def _templates() -> Jinja2Templates:
    """The pages' templates: every value escaped (whatever a file's name), and a
    name a page forgot to pass is an error, not an empty string. An estimate's
    interval is shown by the one rule (:func:`poker.stats.interval_shown`, of
    its hands: a result stored before the API said ``interval_shown`` too)."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    environment.globals.update(interval_shown=interval_shown, interval_note=interval_note)
    return Jinja2Templates(env=environment)


class Web:
    """What the pages share: the host, the tables, the tournaments, the templates."""

    def __init__(self, host: Host, tournaments: Tournaments) -> None:
        self.host = host
        self.tables = Tables(host)
        self.tournaments = tournaments
        self.templates = _templates()
        self.files = {name: (WEB_STATIC / name).read_bytes() for name in _WEB_FILES}
        self.table_files = {name: (STATIC / name).read_bytes() for name in _TABLE_FILES}
        # arena play's page, with a way back to the lobby
        page = (STATIC / "index.html").read_text()
        self.table_page = page.replace('<span id="title">', '<a id="lobby" href="/" style="color: #8fc3ff">◂ lobby</a> <span id="title">', 1)


def _web(request: HTTPConnection) -> Web:
    web: Web = request.app.state.web
    return web


# -- the frame of every page ---------------------------------------------------------


def _render(request: Request, template: str, title: str, user: User | None, status: int = 200, **data: Any) -> Response:
    """``template`` in the site's layout (``base.html``: the navigation for ``user``, the title)."""
    return _web(request).templates.TemplateResponse(
        request, template, {"title": title, "user": user, **data}, status_code=status, headers=_PAGE_HEADERS
    )


def _problem(request: Request, user: User | None, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    title = "Refused" if status == 403 else "Not found" if status == 404 else "Cannot do that"
    response = _render(request, "problem.html", title, user, status, message=message)
    response.headers.update(headers or {})
    return response


def _page(handler: PageHandler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` for a logged-in person, counted against the same requests
    per minute as their API calls; anyone else goes to the login (counted by
    address)."""

    async def endpoint(request: Request) -> Response:
        limiter: RateLimiter = request.app.state.limiter
        user = await session_user(request)
        try:
            if user is None:
                limiter.check_address(request)
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)
            limiter.check_user(user)
            if request.method == "POST" and not same_origin(request):
                return _problem(request, user, 403, "a form from another site")
            return await handler(request, user)
        except RequestError as refused:
            return _problem(request, user, refused.status, str(refused), refused.headers)

    return endpoint


async def _form(request: Request, limit: int) -> dict[str, str]:
    """A url-encoded form's fields (the first of each), read up to ``limit`` bytes.

    Raises:
        RequestError: 413 past the limit.
    """
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(413, f"form over {limit} bytes")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


def _next(target: str | None) -> str:
    """Where to go after the login: a path of this site only, as the browser
    will read it (it drops tabs and newlines and reads a backslash as a
    slash, so ``/<TAB>/host`` and ``/\\host`` are ``//host``, another site)."""
    read = "".join(c for c in target or "" if c not in "\t\n\r").replace("\\", "/")
    if not read.startswith("/") or read.startswith("//") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in read):
        return "/"
    return read


def _game_word(name: str) -> str:
    """A game as lists show it: a shipped game by its short name, any other
    (a tournament's game file) by the file's name alone, never a server's folder."""
    return short_name(name) if name in game_names() else Path(name).name


def _shown_status(document: dict[str, Any]) -> str:
    """A match's status as its pages show it: the API's ``status``, except that a
    match still in the queue says ``queued`` (the API: ``waiting`` with ``queued``
    true), so the list and the match page read one word for one state."""
    return "queued" if document.get("queued") else str(document["status"])


# -- login -------------------------------------------------------------------------


async def _login(request: Request) -> Response:
    """The token form; ``site.js`` posts it to ``/api/login`` (which sets the
    session cookie) and then goes to ``next``, a path of this site only."""
    try:
        request.app.state.limiter.check_address(request)
    except RequestError as refused:
        return _problem(request, None, refused.status, str(refused), refused.headers)
    return _render(request, "login.html", "Log in", None, next=_next(request.query_params.get("next")))


# -- the lobby ---------------------------------------------------------------------


def _game_choices() -> list[dict[str, str]]:
    """The games offered: the short name, the file stem (what a bot's game is
    compared by) and the name players know."""
    stems = game_names()
    return [{"name": name, "stem": stems[name], "label": friendly_name(name)} for name in GAMES]


async def _lobby(request: Request, user: User, chosen: dict[str, Any] | None = None, problem: str = "",
                 status: int = 200) -> Response:
    """The lobby; ``chosen``: the sit form's values to keep (a refused form
    comes back with them and ``problem`` beside it)."""
    web = _web(request)
    chosen = chosen or {"game": _DEFAULT_GAME, "opponent": "leduc-cfr", "hands": _DEFAULT_HANDS, "seed": ""}
    stems = game_names()
    game_stem = stems.get(chosen["game"], stems[_DEFAULT_GAME])
    bots = hosted_bots()
    # Only the chosen game's bots are offered (site.js keeps that true as the game changes).
    opponents = [
        {"name": bot["name"], "stem": stems[bot["game"]] if bot["game"] else "",
         "fits": bot["game"] is None or stems[bot["game"]] == game_stem}
        for bot in bots
    ]
    rows = []
    for match in reversed(await web.host.list_matches(user)):
        if match["status"] not in _OVER:  # the match page's live status (running once the agent is in), not the list's
            match = await web.host.describe(user, match["id"])
        rows.append({"id": match["id"], "game": _game_word(match["game"]), "opponent": match["opponent"],
                     "hands": match["hands"], "status": _shown_status(match),
                     "table": web.tables.of(user, match["id"]) is not None})
    tournaments = [{**t, "game": _game_word(t["game"])} for t in web.tournaments.all()[:10]]
    return _render(
        request, "lobby.html", "Lobby", user, status, games=_game_choices(), opponents=opponents, chosen=chosen,
        bots=bots, matches=rows, tournaments=tournaments, max_hands=MAX_TABLE_HANDS, error=problem,
    )


# -- tables ------------------------------------------------------------------------


async def _sit(request: Request, user: User) -> Response:
    """Open a table and go to it; a refused request comes back to the lobby
    with its reason beside the form and the form as it was filled."""
    web = _web(request)
    fields = await _form(request, web.host.config.max_body_bytes)
    chosen = {"game": fields.get("game", ""), "opponent": fields.get("opponent", ""),
              "hands": fields.get("hands", "")[:10], "seed": fields.get("seed", "")[:10]}
    try:
        hands, seed = _whole_field(fields, "hands"), _whole_field(fields, "seed")
        if hands is None:
            raise RequestError(400, "hands: give a whole number")
        match_id = await web.tables.open(user, chosen["game"], chosen["opponent"], hands, seed)
    except RequestError as refused:
        if refused.status != 400:
            raise  # a limit (429, 503, 507): the problem page with its Retry-After
        return await _lobby(request, user, chosen, str(refused), 400)
    return RedirectResponse(f"/tables/{match_id}/", status_code=303)


def _whole_field(fields: dict[str, str], name: str) -> int | None:
    """A form's whole number (None when left empty).

    Raises:
        RequestError: 400, not a whole number.
    """
    text = fields.get(name, "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 10:  # str.isdigit also takes "²" and "٣"
        raise RequestError(400, f"{name}: a whole number, not {text[:20]!r}")
    return int(text)


async def _table(request: Request, user: User) -> Response:
    match_id = request.path_params["id"]
    if _web(request).tables.of(user, match_id) is None:
        return RedirectResponse(f"/matches/{quote(match_id[:64], safe='')}", status_code=303)
    if not request.url.path.endswith("/"):
        return RedirectResponse(f"/tables/{match_id}/", status_code=303)
    return HTMLResponse(_web(request).table_page, headers=_PAGE_HEADERS)


async def _table_file(request: Request, user: User) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    if web.tables.of(user, request.path_params["id"]) is None or name not in _TABLE_FILES:
        raise RequestError(404, "no such file")
    return Response(web.table_files[name], media_type=_TABLE_FILES[name], headers={"Cache-Control": "no-store"})


async def _table_socket(websocket: WebSocket) -> None:
    # Accepted, then closed with the reason, as arena play's: the page shows it.
    await websocket.accept()
    web = _web(websocket)
    user = await session_user(websocket)
    if user is None or not same_origin(websocket):
        await websocket.close(code=POLICY_VIOLATION, reason=LOGGED_OUT)
        return
    table = web.tables.of(user, websocket.path_params["id"])
    if table is None:
        await websocket.close(code=POLICY_VIOLATION, reason="no such table: it is over, see your matches")
        return
    seat = await web.tables.seat_of(table, websocket)  # the match may wait in the queue, or its bot start
    if seat is None:
        return
    try:
        await serve_page(seat, websocket)
    except Exception:  # a page's connection failed: that page's business only
        return


# -- match pages ------------------------------------------------------------------


async def _match(request: Request, user: User) -> Response:
    web = _web(request)
    match_id = request.path_params["id"]
    described = await web.host.describe(user, match_id)
    row = await web.host.store.call(web.host.store.match, match_id)
    assert row is not None  # describe found it
    result = described["result"] or {}
    over = described["status"] in _OVER
    players = result.get("players", [])
    estimators = [
        {**e, "name": p["name"], "best": e == p["best"]} for p in players for e in p.get("estimators", [])
    ]
    game = load_game(row.game)
    return _render(
        request, "match.html", f"Match {match_id}", user,
        match_id=match_id, game_name=friendly_name(row.game), you=web.host.seat_names(row, user.name)[0],
        opponent=row.opponent, hands=row.hands, duplicate=row.duplicate, seed=row.seed if over else None,
        shown_status=_shown_status(described), practice=row.practice, error=described.get("error"),
        starting=described.get("starting"),  # why the hosted bot is not ready yet (arena.serve.warming), while it is not
        table=web.tables.of(user, match_id) is not None, hands_played=result.get("hands", 0), players=players,
        unit=next((p["estimate"]["unit"] for p in players if p["estimate"]), ""),
        duplicate_rows=list((result.get("duplicate") or {}).items()), estimators=estimators, over=over,
        pending=result.get("pending", False),  # the estimators of a match just over, still being computed
        histories=[(form, _HISTORY_WORDS[form]) for form in HISTORIES if history_problem(game, form) is None],
        chunk=REPLAY_CHUNK,
    )


async def _download(request: Request, user: User) -> Response:
    web = _web(request)
    match_id, what = request.path_params["id"], request.path_params["what"]
    if what == "log":
        data = await web.host.log_bytes(user, match_id)
        kind, name = "text/plain; charset=utf-8", f"{match_id}.log"
    elif what == "hands":
        data = await web.host.hand_bytes(user, match_id)
        kind, name = "application/msgpack", f"{match_id}.hands.msgpack"
    elif what in HISTORIES:
        data = await web.host.history_bytes(user, match_id, what)
        ending, kind = HISTORIES[what]
        name = match_id + ending
    else:
        raise RequestError(404, "no such download")
    return Response(data, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _replay_hands(path: Path, game_name: str, seating: int) -> list[dict[str, Any]]:
    """Each finished hand of one seating's log, as the replayer steps through it."""
    game = load_game(game_name)
    try:
        contents = read_log(path, game)
    except (OSError, LogError):
        return []
    hands = []
    for line in contents.hands:
        final = line.state
        actions = [
            {"round": round_, "name": line.names[position], "text": text, "pot": pot}
            for round_, words in enumerate(betting_words(final))
            for position, text, pot in words
        ]
        hands.append({
            "seating": seating + 1,
            "hand": line.hand_id + 1,
            "names": list(line.names),
            "hole": [[card_to_text(c) for c in cards] for cards in line.deal.hole],
            "board": [[card_to_text(c) for c in line.deal.board[: game.total_board_cards(r)]] for r in range(final.round + 1)],
            "folded": list(final.folded),
            "actions": actions,
            "values": list(line.values),
        })
    return hands


async def _replay(request: Request, user: User) -> Response:
    web = _web(request)
    row = await web.host.shown_match(user, request.path_params["id"])
    start_text = request.query_params.get("start", "0")
    start = int(start_text) if start_text.isascii() and start_text.isdigit() and len(start_text) < 10 else 0

    def hands() -> list[dict[str, Any]]:
        every = []
        for seating, path in enumerate(web.host.seating_paths(row)):
            every += _replay_hands(path, row.game, seating)
        return every

    every = await trio.to_thread.run_sync(hands)
    return JSONResponse({"total": len(every), "start": start, "hands": every[start:start + REPLAY_CHUNK]})


# -- the leaderboard ----------------------------------------------------------------


async def _leaderboard(request: Request, user: User) -> Response:
    web = _web(request)
    game = request.query_params.get("game", _DEFAULT_GAME)
    board = await web.host.leaderboard(game)
    entries = [
        {"rank": e.get("rank"), "user": e["user"], "bot": e["bot"], "hands": e["hands"], "duplicate": e.get("duplicate"),
         "aivat": e.get("aivat"), "estimate": e.get("estimate"), "ranked": e["ranked"]}
        for e in board["entries"]
    ]
    rankings = [(bot, _ranking_rows(ranking)) for bot, ranking in (board.get("rankings") or {}).items()]
    return _render(
        request, "leaderboard.html", f"Leaderboard: {friendly_name(game)}", user,
        games=_game_choices(), chosen=short_name(game), board={**board, "entries": entries}, rankings=rankings,
    )


def _ranking_rows(rankings: dict[str, Any]) -> dict[str, Any]:
    """Per hosted bot, the rankings ``arena rank`` computes over the ranked
    users against it (each match one result; never users of different bots in
    one list), as rows of places: total bankroll, the bankroll instant run-off
    and the series run-off, best first (tied players share a place)."""
    if "error" in rankings:
        return {"error": str(rankings["error"])}
    columns = ([[name] for name in rankings["bankroll"]], rankings["bankroll_runoff_groups"], rankings["series_runoff"])
    places = []
    for groups in columns:
        place, cells = 1, {}
        for group in groups:
            cells[place] = " = ".join(group)
            place += len(group)
        places.append(cells)
    rows = [[str(place), *(cells.get(place, "") for cells in places)] for place in range(1, len(rankings["bankroll"]) + 1)]
    return {"error": None, "matches": rankings["matches"], "rows": rows}


# -- submitted agents -------------------------------------------------------------


async def _agents(request: Request, user: User, challenge_error: str = "", status: int = 200) -> Response:
    """My agents: the upload form (``site.js`` sends the archive to ``POST
    /api/agents``) and each version, newest first within a name, with its
    check's status, reason and output; then the challenge form (the person's
    ready agents; as opponents, the ready agents and hosted bots of their
    games) and their challenges, a refused one's reason above them."""
    agents: Agents = request.app.state.agents
    challenges: Challenges = request.app.state.challenges
    store = _web(request).host.store
    rows = sorted(await agents.mine(user), key=lambda row: (row.name, -row.version))
    ready = sorted({(row.name, row.game) for row in rows if row.status == "ready"})
    games = sorted({game for _, game in ready})
    opponents = []
    for game in games:
        for row in await store.call(store.latest_ready, game):
            owner = await store.call(store.user_name, row.user_id)
            opponents.append({"value": f"agent:{owner}/{row.name}", "label": f"{owner}/{row.name} v{row.version} ({game})"})
    bots = [{"value": f"bot:{bot['name']}", "label": f"{bot['name']} ({bot['game']})"} for bot in hosted_bots() if bot["game"] in games]
    bots += [{"value": f"bot:{name}", "label": f"{name} (any game)"} for name in CHUMPS]
    return _render(
        request, "agents.html", "My agents", user, status, games=_game_choices(), versions=[describe(row) for row in rows],
        hands=CHECK_HANDS, opponent=CHECK_OPPONENT, max_mib=f"{_web(request).host.config.max_agent_bytes / (1 << 20):g}",
        challengers=[{"name": name, "game": game} for name, game in ready], opponents=opponents, bots=bots,
        max_hands=_web(request).host.config.max_hands, challenges=await challenges.mine(user), challenge_error=challenge_error,
    )


async def _challenge(request: Request, user: User) -> Response:
    """The challenge form: as ``POST /api/challenges`` takes it; back to the list, or to the form with the reason."""
    web = _web(request)
    fields = await _form(request, web.host.config.max_body_bytes)
    game, _, name = fields.get("agent", "").partition(" ")
    challenges: Challenges = request.app.state.challenges
    try:
        document = {"agent": name, "game": game, "opponent": fields.get("opponent", ""), "hands": _whole_field(fields, "hands"),
                    "duplicate": fields.get("duplicate") == "on"}
        await challenges.create(user, document)
    except RequestError as refused:
        return await _agents(request, user, str(refused), refused.status)
    return RedirectResponse("/agents#challenges", status_code=303)


# -- tournaments ------------------------------------------------------------------


async def _admin(request: Request, user: User, config: str = EXAMPLE, problem: str = "", status: int = 200,
                 event: str = json.dumps(EVENT_EXAMPLE, indent=2), event_problem: str = "") -> Response:
    """The admin page; a refused config or event comes back in its box with the reason under it."""
    if not user.admin:
        raise RequestError(403, "only an admin sees this page")
    web = _web(request)
    tournaments = [{**t, "game": _game_word(t["game"])} for t in web.tournaments.all()]
    return _render(request, "admin.html", "Admin", user, status, where=web.host.config.dask or "a local pool",
                   config=config, error=problem, tournaments=tournaments, event=event, event_error=event_problem)


async def _admin_submit(request: Request, user: User) -> Response:
    web = _web(request)
    if not user.admin:
        raise RequestError(403, "only an admin submits tournaments")
    fields = await _form(request, 4 * web.host.config.max_body_bytes)
    text = fields.get("config", "").replace("\r\n", "\n")
    assert web.host.nursery is not None  # the host runs before the app serves
    try:
        status = web.tournaments.start(user, text.encode(), web.host.nursery, by_token=False)
    except RequestError as refused:
        return await _admin(request, user, text, str(refused), refused.status)
    return RedirectResponse(f"/tournaments/{status['id']}", status_code=303)


async def _tournament(request: Request, user: User) -> Response:
    status = _web(request).tournaments.get(request.path_params["id"], admin=user.admin)
    return _render(request, "tournament.html", f"Tournament {status['id']}", user, tournament=status,
                   game_name=friendly_name(_game_word(status["game"])), output=status["output"])


async def _tournament_report(request: Request, user: User) -> Response:
    tournament_id = request.path_params["id"]
    title, body = _web(request).tournaments.report(tournament_id)
    return _render(request, "report.html", title, user, tournament_id=tournament_id, report=body)


# -- events -----------------------------------------------------------------------


async def _admin_event(request: Request, user: User) -> Response:
    """The admin page's event box: its JSON as ``POST /api/events`` takes it; to the event's page, or back with the reason."""
    web = _web(request)
    if not user.admin:
        raise RequestError(403, "only an admin creates events")
    text = (await _form(request, web.host.config.max_body_bytes)).get("event", "").replace("\r\n", "\n")
    events: Events = request.app.state.events
    try:
        try:
            document = json.loads(text)
        except ValueError as bad:
            raise RequestError(400, f"the event is not JSON: {bad}") from None
        if not isinstance(document, dict):
            raise RequestError(400, "the event is a JSON object: {\"name\", \"game\", \"hands\", ...}")
        event = await events.create(user, document)
    except RequestError as refused:
        return await _admin(request, user, status=refused.status, event=text, event_problem=str(refused))
    return RedirectResponse(f"/events/{event.id}", status_code=303)


async def _events(request: Request, user: User) -> Response:
    events: Events = request.app.state.events
    return _render(request, "events.html", "Events", user, events=await events.all())


async def _event(request: Request, user: User) -> Response:
    """An event: its entrants and status; once over, both rankings, the crosstable, the forfeits and the logs."""
    events: Events = request.app.state.events
    event = await events.get(request.path_params["id"], admin=user.admin)
    results = event["results"]
    shown = None
    if results is not None:
        doc = results["ranking"]
        header, grid = crosstable_grid(doc)
        shown = {**_ranking_rows(doc), "header": header, "interval": doc["crosstable"]["interval"], "unit": doc["unit"],
                 "three": doc["players_per_match"] == 3, "forfeits": results["forfeits"],
                 "grid": [[label, *("-" if c is None else cell_text(c, doc["unit"]) for c in cells)] for label, cells in grid]}
    return _render(request, "event.html", f"Event: {event['name']}", user, event=event, game_name=friendly_name(event["game"]),
                   results=shown, output=event.get("output"))


async def _static(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    if name not in _WEB_FILES:
        return error(404, "no such file")
    return Response(web.files[name], media_type=_WEB_FILES[name], headers={"Cache-Control": "no-store"})


def install_pages(app: Starlette, host: Host, tournaments: Tournaments) -> None:
    """Add the pages and the web tables to the service's app."""
    app.state.web = Web(host, tournaments)
    routes = [
        Route("/login", _login, methods=["GET"]),
        Route("/", _page(_lobby), methods=["GET"]),
        Route("/tables", _page(_sit), methods=["POST"]),
        Route("/tables/{id}", _page(_table), methods=["GET"]),
        Route("/tables/{id}/", _page(_table), methods=["GET"]),
        Route("/tables/{id}/static/{name}", _page(_table_file), methods=["GET"]),
        WebSocketRoute("/tables/{id}/ws", _table_socket),
        Route("/leaderboard", _page(_leaderboard), methods=["GET"]),
        Route("/agents", _page(_agents), methods=["GET"]),
        Route("/agents/challenges", _page(_challenge), methods=["POST"]),
        Route("/matches/{id}", _page(_match), methods=["GET"]),
        Route("/matches/{id}/replay.json", _page(_replay), methods=["GET"]),
        Route("/matches/{id}/{what}", _page(_download), methods=["GET"]),
        Route("/admin", _page(_admin), methods=["GET"]),
        Route("/admin/tournaments", _page(_admin_submit), methods=["POST"]),
        Route("/tournaments/{id}", _page(_tournament), methods=["GET"]),
        Route("/tournaments/{id}/report", _page(_tournament_report), methods=["GET"]),
        Route("/admin/events", _page(_admin_event), methods=["POST"]),
        Route("/events", _page(_events), methods=["GET"]),
        Route("/events/{id}", _page(_event), methods=["GET"]),
        Route("/web/{name}", _static, methods=["GET"]),
    ]
    app.router.routes.extend(routes)
