"""The hosted arena in the browser: login, lobby, web tables, leaderboard,
match pages with the analysis and a hand replayer, and tournaments.

Pages are plain HTML written here (escaped), with one stylesheet and two
scripts (the login and logout, the replayer) under ``/web/``: no build step,
no template engine. A page knows its person by the session cookie that
``POST /api/login`` sets (:mod:`arena.serve.httpkit`); without one it redirects
to ``/login?next=PATH``. A form that changes something is a POST, which the
cookie's ``SameSite=Strict`` keeps other sites from sending, and which is
refused (403) when its ``Origin`` is another site's. A match or table of
another person is a 404, as in the API.

The web tables are ``arena play``'s page (:mod:`agent.human.web`), served
at ``/tables/ID/``: the same files, and the same WebSocket handler behind a
check of the session, the table's owner and the ``Origin``.

The admin page submits tournaments (:mod:`arena.serve.tournaments`), as
``POST /api/tournaments`` (:mod:`arena.serve.app`) does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote

import trio
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from agent.human.seat import betting_words
from agent.human.web import POLICY_VIOLATION, STATIC, serve_page
from arena.serve.hosting import HISTORIES, Host, history_problem
from arena.serve.httpkit import RateLimiter, RequestError, error, same_origin, session_user
from arena.serve.store import User
from arena.serve.tables import MAX_TABLE_HANDS, Tables
from arena.serve.tournaments import Tournaments
from arena.serve.validation import hosted_bots
from dealer.log import LogError, read_log
from poker.cards import card_to_text
from poker.gamedef import game_names, load_game

__all__ = ["install_pages", "WEB_STATIC", "GAMES", "REPLAY_CHUNK", "LOGGED_OUT"]

WEB_STATIC: Final = Path(__file__).with_name("static")
#: The games the lobby offers: each heads-up shipped game by its shortest name.
GAMES: Final = tuple(sorted(
    {stem: min((n for n, s in game_names().items() if s == stem), key=len)
     for stem in set(game_names().values()) if ".2p" in stem}.values()
))
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

PageHandler = Callable[[Request, User], Awaitable[Response]]


class Web:
    """What the pages share: the host, the tables, the tournaments."""

    def __init__(self, host: Host, tournaments: Tournaments) -> None:
        self.host = host
        self.tables = Tables(host)
        self.tournaments = tournaments
        self.files = {name: (WEB_STATIC / name).read_bytes() for name in _WEB_FILES}
        self.table_files = {name: (STATIC / name).read_bytes() for name in _TABLE_FILES}
        # arena play's page, with a way back to the lobby
        page = (STATIC / "index.html").read_text()
        self.table_page = page.replace('<span id="title">', '<a id="lobby" href="/" style="color: #8fc3ff">◂ lobby</a> <span id="title">', 1)


def _web(request: HTTPConnection) -> Web:
    web: Web = request.app.state.web
    return web


# -- the frame of every page ---------------------------------------------------------


def _html(title: str, body: str, user: User | None, status: int = 200) -> HTMLResponse:
    nav = ""
    if user is not None:
        admin = ' · <a href="/admin">admin</a>' if user.admin else ""
        nav = (
            f'<nav><a href="/">lobby</a> · <a href="/leaderboard">leaderboard</a>{admin}'
            f'<span class="who">{escape(user.name)}'
            '<button type="button" id="logout">log out</button></span></nav>'
        )
    document = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)} · arena</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="/web/site.css"></head>'
        f"<body>{nav}<main><h1>{escape(title)}</h1>{body}</main>"
        '<script src="/web/site.js"></script></body></html>\n'
    )
    return HTMLResponse(document, status_code=status, headers=_PAGE_HEADERS)


def _problem(user: User | None, status: int, message: str, headers: dict[str, str] | None = None) -> HTMLResponse:
    response = _html("Refused" if status == 403 else "Not found" if status == 404 else "Cannot do that",
                     f'<p class="error" id="error">{escape(message)}</p>', user, status)
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
                return _problem(user, 403, "a form from another site")
            return await handler(request, user)
        except RequestError as refused:
            return _problem(user, refused.status, str(refused), refused.headers)

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


# -- login -------------------------------------------------------------------------


async def _login(request: Request) -> Response:
    """The token form; ``site.js`` posts it to ``/api/login`` (which sets the
    session cookie) and then goes to ``next``, a path of this site only."""
    try:
        request.app.state.limiter.check_address(request)
    except RequestError as refused:
        return _problem(None, refused.status, str(refused), refused.headers)
    target = _next(request.query_params.get("next"))
    body = (
        f'<form class="login" id="login-form" data-next="{escape(target)}">'
        '<label>Token <input type="password" name="token" id="token" autocomplete="current-password" required></label>'
        '<button type="submit" id="login">Log in</button></form><p class="error" id="error"></p>'
        "<p>Your token is the one <code>arena users add NAME</code> printed for you.</p>"
    )
    return _html("Log in", body, None)


# -- the lobby ---------------------------------------------------------------------


def _status_word(status: str) -> str:
    return f'<span class="status {escape(status)}">{escape(status)}</span>'


def _opponent_option(bot: dict[str, Any], stems: dict[str, str]) -> str:
    """A hosted bot in the lobby's list; a named bot carries its game's stem, a simple bot (any game) none."""
    name, game = escape(bot["name"]), bot["game"]
    selected = " selected" if bot["name"] == "leduc-cfr" else ""
    if game is None:
        return f'<option value="{name}"{selected}>{name}</option>'
    return f'<option value="{name}" data-stem="{escape(stems[game])}"{selected}>{name} ({escape(game)})</option>'


async def _lobby(request: Request, user: User) -> Response:
    web = _web(request)
    bots = hosted_bots()
    stems = game_names()  # data-stem: site.js keeps the opponent one that plays the game chosen
    games = "".join(
        f'<option value="{escape(g)}" data-stem="{escape(stems[g])}"{" selected" if g == "leduc" else ""}>{escape(g)}</option>'
        for g in GAMES
    )
    opponents = "".join(_opponent_option(b, stems) for b in bots)
    bot_rows = "".join(
        f'<tr><td>{escape(b["name"])}</td><td>{escape(b["game"] or "any")}</td><td>{escape(b["description"])}</td></tr>'
        for b in bots
    )
    matches = await web.host.list_matches(user)
    match_rows = "".join(
        f'<tr><td><a href="/matches/{m["id"]}">{m["id"]}</a></td><td>{escape(m["game"])}</td>'
        f'<td>{escape(m["opponent"])}</td><td>{m["hands"]}</td><td>{_status_word(m["status"])}</td>'
        + (f'<td><a href="/tables/{m["id"]}/">table</a></td>' if web.tables.of(user, m["id"]) else "<td></td>")
        + "</tr>"
        for m in reversed(matches)
    ) or '<tr><td colspan="6">none yet</td></tr>'
    tournaments = "".join(
        f'<li><a href="/tournaments/{t["id"]}">{escape(t["game"])}, {t["bots"]} bots</a> {_status_word(t["status"])}</li>'
        for t in web.tournaments.all()[:10]
    )
    body = (
        '<section><h2>Sit at a table</h2><form method="post" action="/tables" id="sit">'
        f'<label>Game <select name="game" id="game">{games}</select></label> '
        f'<label>Against <select name="opponent" id="opponent">{opponents}</select></label> '
        f'<label>Hands <input type="number" name="hands" id="hands" value="10" min="2" max="{MAX_TABLE_HANDS}"></label> '
        '<label title="a seed you choose makes the match practice: it is on no leaderboard">Seed (practice) '
        '<input type="number" name="seed" id="seed" min="0" placeholder="random"></label> '
        '<button type="submit" id="sit-button">Sit down</button></form>'
        "<p>Agents play over TCP: <code>POST /api/matches</code> (see the hosting manual).</p></section>"
        '<section><h2>Your matches</h2><table id="matches"><tr><th>match</th><th>game</th><th>opponent</th>'
        f"<th>hands</th><th>status</th><th></th></tr>{match_rows}</table></section>"
        f'<section><h2>Hosted bots</h2><table id="bots"><tr><th>bot</th><th>game</th><th></th></tr>{bot_rows}</table></section>'
        + (f'<section><h2>Tournaments</h2><ul id="tournaments">{tournaments}</ul></section>' if tournaments else "")
    )
    return _html("Lobby", body, user)


# -- tables ------------------------------------------------------------------------


async def _sit(request: Request, user: User) -> Response:
    web = _web(request)
    fields = await _form(request, web.host.config.max_body_bytes)
    hands, seed = _whole_field(fields, "hands"), _whole_field(fields, "seed")
    if hands is None:
        raise RequestError(400, "hands: give a whole number")
    match_id = await web.tables.open(user, fields.get("game", ""), fields.get("opponent", ""), hands, seed)
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
    while table.seat is None:  # the match waits in the queue, or its dealer starts
        with trio.move_on_after(1.0):
            await table.seated.wait()
        if table.seat is None and table.match_id not in web.host.live:
            await websocket.close(code=POLICY_VIOLATION, reason="the match ended before it began: see your matches")
            return
    try:
        await serve_page(table.seat, websocket)
    except Exception:  # a page's connection failed: that page's business only
        return


# -- match pages ------------------------------------------------------------------


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def _estimate_cell(estimate: dict[str, Any] | None) -> str:
    if estimate is None:
        return "<td>–</td><td></td>"
    low, high = estimate["interval"]
    return f'<td>{_number(estimate["mean"])}</td><td>[{_number(low)}, {_number(high)}]</td>'


async def _match(request: Request, user: User) -> Response:
    web = _web(request)
    match_id = request.path_params["id"]
    described = await web.host.describe(user, match_id)
    row = await web.host.store.call(web.host.store.match, match_id)
    assert row is not None  # describe found it
    names = web.host.seat_names(row, user.name)
    result = described["result"] or {}
    over = described["status"] in ("finished", "aborted")
    players = "".join(
        f'<tr><td>{escape(p["name"])}</td><td>{p["chips"]:+g}</td>{_estimate_cell(p["estimate"])}</tr>'
        for p in result.get("players", [])
    )
    unit = escape(next((p["estimate"]["unit"] for p in result.get("players", []) if p["estimate"]), ""))
    duplicate = ""
    if result.get("duplicate"):
        duplicate = "<h2>Duplicate</h2><table id=\"duplicate\"><tr><th>player</th><th>mean</th><th>95% interval</th></tr>" + "".join(
            f"<tr><td>{escape(name)}</td>{_estimate_cell(estimate)}</tr>" for name, estimate in result["duplicate"].items()
        ) + "</table>"
    table_link = f'<p><a href="/tables/{match_id}/" id="to-table">back to the table</a></p>' if web.tables.of(user, match_id) else ""
    body = (
        f'<p id="summary">{escape(row.game)} · you ({escape(names[0])}) vs {escape(row.opponent)} · '
        f'{row.hands} hands{" in duplicate" if row.duplicate else ""} · seed {row.seed if over else "shown once the match is over"} · '
        f'{_status_word(described["status"])}{" · practice (on no leaderboard)" if row.practice else ""}</p>'
        + (f'<p class="error">{escape(described["error"])}</p>' if described.get("error") else "")
        + table_link
        + f'<h2>Result</h2><p id="hands-played">{result.get("hands", 0)} hands played</p>'
        f'<table id="result"><tr><th>player</th><th>chips</th><th>mean ({unit})</th><th>95% interval</th></tr>{players}</table>'
        + duplicate
        + _estimators_html(result, row.opponent, over)
        + (_downloads_html(match_id, row.game) if over else _LATER)
    )
    return _html(f"Match {match_id}", body, user)


#: What the match page says of its cards while the match plays.
_LATER: Final = ('<h2>Downloads</h2><p id="downloads-later">The log, the hands and the replayer are here once the match is '
                 "over: until then they would show cards still to be dealt.</p>")


def _downloads_html(match_id: str, game_name: str) -> str:
    """A match's downloads and replayer (a match that is over: they show its cards)."""
    return (
        f'<h2>Downloads</h2><p><a href="/matches/{match_id}/log" id="download-log">ACPC log</a> · '
        f'<a href="/matches/{match_id}/hands" id="download-hands">hands (msgpack)</a>{_history_links(match_id, game_name)}</p>'
        + _REPLAYER.format(id=match_id, chunk=REPLAY_CHUNK)
    )


#: The hand-history links' words, by format (:data:`arena.serve.hosting.HISTORIES`).
_HISTORY_WORDS: Final = {"phh": "hand history (PHH)", "pokerstars": "PokerStars text"}


def _history_links(match_id: str, game_name: str) -> str:
    """The links to the hand histories the match's game has (none for Kuhn and Leduc poker)."""
    game = load_game(game_name)
    return "".join(
        f' · <a href="/matches/{match_id}/{form}" id="download-{form}">{_HISTORY_WORDS[form]}</a>'
        for form in HISTORIES
        if history_problem(game, form) is None
    )


_REPLAYER: Final = """<h2>Replayer</h2>
<div id="replayer" data-match="{id}" data-chunk="{chunk}">
<div class="controls"><button type="button" id="prev-hand">◂ hand</button>
<button type="button" id="back">◂ step</button><button type="button" id="step">step ▸</button>
<button type="button" id="next-hand">hand ▸</button>
<label>hand <input type="number" id="hand-no" min="1" value="1"></label> <span id="replay-count"></span></div>
<div id="replay-title"></div><div id="replay-board"></div><div id="replay-seats"></div>
<ol id="replay-actions"></ol><div id="replay-result"></div></div>
<script src="/web/replay.js"></script>"""


_BEST: Final = ' class="best"'


def _estimators_html(result: dict[str, Any], bot: str, over: bool) -> str:
    """The lower-variance estimates of the match's score (the ``result``'s
    ``estimators``, each player's ``best`` marked), or why there are none."""
    if not result.get("hands"):
        return ""
    rows = "".join(
        f'<tr{_BEST if e == p["best"] else ""}><td>{escape(p["name"])}</td><td>{escape(e["estimator"])}</td>'
        f'{_estimate_cell(e)}<td>{e["hands"]}</td></tr>'
        for p in result.get("players", [])
        for e in p.get("estimators", [])
    )
    if rows:
        return (
            '<h2>Lower-variance estimates</h2><table id="estimators"><tr><th>player</th><th>estimator</th><th>mean</th>'
            f'<th>95% interval</th><th>hands</th></tr>{rows}</table>'
            f'<p class="note">AIVAT is on the side of {escape(bot)}, whose policy is known, with the value function of'
            " that policy against itself, fixed before the match; yours is its negative. The all-in adjusted value (no-limit)"
            " values each hand all in before the board was complete at its expectation over the rest of the board."
            " The narrowest is marked; a duplicate match averages each hand over its seatings first.</p>"
        )
    if not over:
        return '<p class="note" id="no-estimators">The lower-variance estimates are computed when the match is over.</p>'
    return (
        '<p class="note" id="no-estimators">No lower-variance estimate applies here: AIVAT needs a two-player limit'
        " game whose public tree fits (Kuhn, Leduc) and a bot whose policy is known; the all-in adjustment, a no-limit game.</p>"
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
    game = request.query_params.get("game", "leduc")
    board = await web.host.leaderboard(game)
    choices = " · ".join(
        f'<a href="/leaderboard?game={quote(g)}"{" class=current" if g == game else ""}>{escape(g)}</a>' for g in GAMES
    )
    rows = "".join(
        f'<tr><td>{e.get("rank", "–")}</td><td>{escape(e["user"])}</td><td>{escape(e["bot"])}</td><td>{e["hands"]}</td>'
        f'{_estimate_cell(e.get("duplicate"))}{_estimate_cell(e.get("aivat"))}{_estimate_cell(e.get("estimate"))}'
        f'<td>{"yes" if e["ranked"] else "not yet"}</td></tr>'
        for e in board["entries"]
    ) or '<tr><td colspan="10">no finished match of this game yet</td></tr>'
    body = (
        f'<p class="games">{choices}</p>'
        f'<p>Each user\'s agent against each hosted bot ({escape(board["unit"])}, 95% intervals); a pair is ranked, among '
        f'the users of the same bot, after {board["min_hands"]} hands. The estimate pools every hand (a duplicate match\'s '
        'by their duplicate values); a match the user\'s agent left counts, each hand left charged its largest loss.</p>'
        '<table id="leaderboard"><tr><th>rank</th><th>user</th><th>bot</th><th>hands</th><th>duplicate</th><th></th>'
        f'<th>AIVAT</th><th></th><th>estimate</th><th></th><th>ranked</th></tr>{rows}</table>'
        + _rankings_html(board.get("rankings") or {})
    )
    return _html(f"Leaderboard: {game}", body, user)


def _rankings_html(per_bot: dict[str, dict[str, Any]]) -> str:
    """Per hosted bot, the rankings ``arena rank`` computes over the ranked
    users against it (each match one result; never users of different bots in
    one list): total bankroll, the bankroll instant run-off and the series
    run-off, best first (tied players share a place)."""
    tables = "".join(_bot_rankings_html(bot, rankings) for bot, rankings in per_bot.items())
    return f'<div id="rankings">{tables}</div>' if tables else ""


def _bot_rankings_html(bot: str, rankings: dict[str, Any]) -> str:
    if "error" in rankings:
        return f'<h2>Rankings against {escape(bot)}</h2><p class="note">{escape(str(rankings["error"]))}</p>'
    columns = (
        [[name] for name in rankings["bankroll"]],
        rankings["bankroll_runoff_groups"],
        rankings["series_runoff"],
    )
    places = []
    for groups in columns:
        place, cells = 1, {}
        for group in groups:
            cells[place] = " = ".join(group)
            place += len(group)
        places.append(cells)
    rows = "".join(
        f"<tr><td>{place}</td>" + "".join(f"<td>{escape(cells.get(place, ''))}</td>" for cells in places) + "</tr>"
        for place in range(1, len(rankings["bankroll"]) + 1)
    )
    return (
        f'<h2>Rankings against {escape(bot)}</h2><p class="note">{rankings["matches"]} matches; bots are <code>bot:NAME</code>.</p>'
        '<table><tr><th>place</th><th>total bankroll</th><th>bankroll instant run-off</th>'
        f"<th>series run-off</th></tr>{rows}</table>"
    )


# -- tournaments ------------------------------------------------------------------


def _tournament_list(web: Web) -> str:
    return "".join(
        f'<tr><td><a href="/tournaments/{t["id"]}">{t["id"]}</a></td><td>{escape(t["game"])}</td><td>{t["bots"]}</td>'
        f'<td>{escape(t["by"])}</td><td>{_status_word(t["status"])}</td></tr>'
        for t in web.tournaments.all()
    )


async def _admin(request: Request, user: User) -> Response:
    if not user.admin:
        raise RequestError(403, "only an admin sees this page")
    web = _web(request)
    where = escape(web.host.config.dask or "a local pool")
    body = (
        f"<p>A tournament config as <code>arena tournament</code> takes it, without <code>output</code>; "
        f"it runs on {where}. External bots are commands on this machine: submitting them approves them.</p>"
        '<form method="post" action="/admin/tournaments" id="tournament-form">'
        '<textarea name="config" id="config" rows="16" cols="80" required></textarea><br>'
        '<button type="submit" id="submit-tournament">Submit the tournament</button></form>'
        f'<h2>Tournaments</h2><table id="tournaments"><tr><th>id</th><th>game</th><th>bots</th><th>by</th><th>status</th></tr>'
        f"{_tournament_list(web)}</table>"
    )
    return _html("Admin", body, user)


async def _admin_submit(request: Request, user: User) -> Response:
    web = _web(request)
    if not user.admin:
        raise RequestError(403, "only an admin submits tournaments")
    fields = await _form(request, 4 * web.host.config.max_body_bytes)
    assert web.host.nursery is not None  # the host runs before the app serves
    status = web.tournaments.start(user, fields.get("config", "").replace("\r\n", "\n").encode(), web.host.nursery)
    return RedirectResponse(f"/tournaments/{status['id']}", status_code=303)


async def _tournament(request: Request, user: User) -> Response:
    web = _web(request)
    status = web.tournaments.get(request.path_params["id"])
    report = f'<p><a href="/tournaments/{status["id"]}/report" id="report-link">the report</a></p>' if status["report"] else ""
    body = (
        f'<p id="tournament-status">{escape(status["game"])}, {status["bots"]} bots, submitted by {escape(status["by"])}: '
        f'{_status_word(status["status"])}</p>{report}'
        f'<h2>Output</h2><pre id="tournament-output">{escape(status["output"])}</pre>'
    )
    return _html(f"Tournament {status['id']}", body, user)


async def _tournament_report(request: Request, user: User) -> Response:
    data = _web(request).tournaments.report(request.path_params["id"])
    return HTMLResponse(data, headers=_PAGE_HEADERS)


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
        Route("/matches/{id}", _page(_match), methods=["GET"]),
        Route("/matches/{id}/replay.json", _page(_replay), methods=["GET"]),
        Route("/matches/{id}/{what}", _page(_download), methods=["GET"]),
        Route("/admin", _page(_admin), methods=["GET"]),
        Route("/admin/tournaments", _page(_admin_submit), methods=["POST"]),
        Route("/tournaments/{id}", _page(_tournament), methods=["GET"]),
        Route("/tournaments/{id}/report", _page(_tournament_report), methods=["GET"]),
        Route("/web/{name}", _static, methods=["GET"]),
    ]
    app.router.routes.extend(routes)
