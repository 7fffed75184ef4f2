"""The service's HTTP side: a Starlette app of JSON routes under ``/api``.

Every route but ``/api/login`` needs ``Authorization: Bearer TOKEN`` or the
session cookie a login sets (401 without either or with a wrong one, the same
words either way); a request with the cookie that changes something, and a
login, from a page of another origin (another port of this host included) is
refused (403, :func:`arena.serve.httpkit.same_origin`); a match of another user is a 404 worded as a match that
does not exist. Every error is ``{"error": "one line"}``
with its status: malformed JSON and bodies past ``max_body_bytes`` are refused
before anything else reads them (400, 413), requests past
``requests_per_minute`` get 429 with ``Retry-After``. A failing request ends
only itself.

For the web pages: ``POST /api/login`` ``{"token"}`` answers the user and sets
the session cookie (:data:`SESSION_COOKIE`: HttpOnly, SameSite=Strict, so no
other site's page can send it; Secure over HTTPS), ``POST /api/logout`` ends
it. Submitted agents (``/api/agents``: uploads, versions, their check
matches) are :mod:`arena.serve.agents`; events (``/api/events``: an admin
creates one, everyone reads it) are :mod:`arena.serve.events`; challenges
(``/api/challenges``: a user's agent against another's or a hosted bot, no
admin needed) are :mod:`arena.serve.challenges`. The kit every route is built with (the error shape, the token and
cookie check, JSON bodies, the rate limit) is :mod:`arena.serve.httpkit`;
this module holds the one table of ``/api`` routes, and :func:`make_app` adds
the pages' routes (:mod:`arena.serve.pages`) beside it. The one WebSocket,
``/api/matches/ID/seat``, carries an agent to its seat over this port
(:mod:`arena.serve.relay`, bearer token only).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute

from arena.serve.agents import Agents, describe
from arena.serve.challenges import Challenges
from arena.serve.events import Events
from arena.serve.hosting import HISTORIES, Host
from arena.serve.httpkit import (
    CROSS_ORIGIN,
    SESSION_COOKIE,
    RateLimiter,
    RequestError,
    api_route,
    bearer_token,
    error,
    read_body,
    read_json,
    same_origin,
    user_for_token,
)
from arena.serve.pages import install_pages
from arena.serve.relay import seat_socket
from arena.serve.store import User
from arena.serve.tournaments import Tournaments
from arena.serve.validation import hosted_bots, match_request

__all__ = ["make_app"]


async def _login(request: Request) -> Response:
    """``{"token"}`` -> the user, and a session cookie for the web pages."""
    host: Host = request.app.state.host
    limiter: RateLimiter = request.app.state.limiter
    try:
        if not same_origin(request):  # another origin's page would log the browser in as someone else
            raise RequestError(403, CROSS_ORIGIN)
        document = await read_json(request, host.config.max_body_bytes)
        token = document.get("token")
        user = await user_for_token(host.store, token) if isinstance(token, str) else None
        if user is None:  # wrong tokens are counted by address; a right one from there is never locked out
            limiter.check_address(request)
            raise RequestError(401, "wrong token: log in with the token arena users add printed")
        limiter.check_user(user)  # the user's own budget bounds the sessions a token opens
    except RequestError as refused:
        return error(refused.status, str(refused), refused.headers)
    secret = await host.store.call(host.store.new_session, user, host.config.session_lifetime_s)
    response = JSONResponse({"name": user.name, "admin": user.admin})
    response.set_cookie(
        SESSION_COOKIE, secret, max_age=int(host.config.session_lifetime_s), path="/", httponly=True,
        samesite="strict", secure=_https(request, host.config.tls_proxy),
    )
    return response


def _https(request: Request, tls_proxy: str | None) -> bool:
    """Whether the browser reached us over HTTPS: directly, or through the
    TLS proxy named in ``serve.toml`` (its ``X-Forwarded-Proto``; no one else's)."""
    if request.url.scheme == "https":
        return True
    peer = request.client.host if request.client is not None else None
    return tls_proxy is not None and peer == tls_proxy and request.headers.get("x-forwarded-proto", "").lower() == "https"


async def _logout(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    session = request.cookies.get(SESSION_COOKIE)
    if session is not None:
        await host.store.call(host.store.end_session, session)
    response = JSONResponse({"name": user.name, "logged_out": True})
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


async def _me(request: Request, user: User) -> Response:
    return JSONResponse({"name": user.name, "admin": user.admin})


async def _bots(request: Request, user: User) -> Response:
    return JSONResponse({"bots": hosted_bots()})


async def _create_match(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    document = await read_json(request, host.config.max_body_bytes)
    peer = request.client.host if request.client is not None else None
    row = await host.create_match(user, match_request(document, host.config.max_hands), peer)
    answer = {"id": row.id, "host": host.config.advertised_host, "ports": list(row.ports), "seat_keys": host.seat_keys(row)}
    return JSONResponse(answer, status_code=201)


async def _list_matches(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    return JSONResponse({"matches": await host.list_matches(user)})


async def _show_match(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    return JSONResponse(await host.describe(user, request.path_params["id"]))


async def _match_log(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    text = await host.log_bytes(user, request.path_params["id"])
    return Response(text, media_type="text/plain; charset=utf-8")


async def _match_hands(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    data = await host.hand_bytes(user, request.path_params["id"])
    return Response(data, media_type="application/msgpack")


async def _match_history(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    form = request.url.path.rsplit("/", 1)[1]  # the route names it: phh or pokerstars
    data = await host.history_bytes(user, request.path_params["id"], form)
    return Response(data, media_type=HISTORIES[form][1])


async def _leaderboard(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    game = request.query_params.get("game")
    return JSONResponse(await host.leaderboard(game))


async def _submit_tournament(request: Request, user: User) -> Response:
    """``POST /api/tournaments``: an admin's bearer token, the config (TOML) as the body; 201 and its status."""
    host: Host = request.app.state.host
    tournaments: Tournaments = request.app.state.tournaments
    body = await read_body(request, 4 * host.config.max_body_bytes)
    assert host.nursery is not None  # the host runs before the app serves
    return JSONResponse(tournaments.start(user, body, host.nursery, by_token=bool(bearer_token(request))), status_code=201)


async def _show_tournament(request: Request, user: User) -> Response:
    """``GET /api/tournaments/ID``: its status (any user) and the end of its output (an admin)."""
    tournaments: Tournaments = request.app.state.tournaments
    return JSONResponse(tournaments.get(request.path_params["id"], admin=user.admin))


async def _submit_agent(request: Request, user: User) -> Response:
    """``POST /api/agents?name=NAME&game=GAME``, the archive as the body: 201 and the new version (:mod:`arena.serve.agents`)."""
    agents: Agents = request.app.state.agents
    row = await agents.submit(user, request)
    return JSONResponse({"id": row.id, "name": row.name, "version": row.version, "status": row.status}, status_code=201)


async def _list_agents(request: Request, user: User) -> Response:
    agents: Agents = request.app.state.agents
    return JSONResponse({"agents": [describe(row, output=False) for row in await agents.mine(user)]})


async def _show_agent(request: Request, user: User) -> Response:
    agents: Agents = request.app.state.agents
    return JSONResponse(describe(await agents.get(user, request.path_params["id"])))


async def _create_event(request: Request, user: User) -> Response:
    """``POST /api/events``: an admin's event (:mod:`arena.serve.events`); 201 and its id."""
    host: Host = request.app.state.host
    events: Events = request.app.state.events
    event = await events.create(user, await read_json(request, host.config.max_body_bytes))
    return JSONResponse({"id": event.id}, status_code=201)


async def _list_events(request: Request, user: User) -> Response:
    events: Events = request.app.state.events
    return JSONResponse({"events": await events.all()})


async def _show_event(request: Request, user: User) -> Response:
    events: Events = request.app.state.events
    return JSONResponse(await events.get(request.path_params["id"], admin=user.admin))


async def _event_logs(request: Request, user: User) -> Response:
    """``GET /api/events/ID/logs``: every match's logs as a ``.tar.gz``, once the event is over (409 before)."""
    events: Events = request.app.state.events
    data = await events.logs(request.path_params["id"])
    disposition = f'attachment; filename="event-{request.path_params["id"]}-logs.tar.gz"'
    return Response(data, media_type="application/gzip", headers={"Content-Disposition": disposition})


async def _create_challenge(request: Request, user: User) -> Response:
    """``POST /api/challenges``: any user's (:mod:`arena.serve.challenges`); 201, its id and status."""
    host: Host = request.app.state.host
    challenges: Challenges = request.app.state.challenges
    row = await challenges.create(user, await read_json(request, host.config.max_body_bytes))
    return JSONResponse({"id": row.id, "status": row.status}, status_code=201)


async def _list_challenges(request: Request, user: User) -> Response:
    challenges: Challenges = request.app.state.challenges
    return JSONResponse({"challenges": await challenges.mine(user)})


async def _show_challenge(request: Request, user: User) -> Response:
    challenges: Challenges = request.app.state.challenges
    return JSONResponse(await challenges.get(user, request.path_params["id"]))


async def _challenge_logs(request: Request, user: User) -> Response:
    """``GET /api/challenges/ID/logs``: each seating's logs as a ``.tar.gz``, once it is over (409 before)."""
    challenges: Challenges = request.app.state.challenges
    data = await challenges.logs(user, request.path_params["id"])
    disposition = f'attachment; filename="challenge-{request.path_params["id"]}-logs.tar.gz"'
    return Response(data, media_type="application/gzip", headers={"Content-Disposition": disposition})


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    message = {404: "no such route", 405: "method not allowed"}.get(status, "request failed")
    return error(status, f"{message}: {request.method} {request.url.path[:200]}")


def make_app(host: Host) -> Starlette:
    """The app over ``host`` (the matches and the store): the API's routes,
    all of them here, and the pages' (:func:`arena.serve.pages.install_pages`)."""
    routes = [
        Route("/api/login", _login, methods=["POST"]),
        Route("/api/logout", api_route(_logout), methods=["POST"]),
        Route("/api/me", api_route(_me)),
        Route("/api/bots", api_route(_bots)),
        Route("/api/matches", api_route(_create_match), methods=["POST"]),
        Route("/api/matches", api_route(_list_matches), methods=["GET"]),
        Route("/api/matches/{id}", api_route(_show_match), methods=["GET"]),
        WebSocketRoute("/api/matches/{id}/seat", seat_socket),
        Route("/api/matches/{id}/log", api_route(_match_log), methods=["GET"]),
        Route("/api/matches/{id}/hands", api_route(_match_hands), methods=["GET"]),
        *(Route(f"/api/matches/{{id}}/{form}", api_route(_match_history), methods=["GET"]) for form in HISTORIES),
        Route("/api/leaderboard", api_route(_leaderboard), methods=["GET"]),
        Route("/api/tournaments", api_route(_submit_tournament), methods=["POST"]),
        Route("/api/tournaments/{id}", api_route(_show_tournament), methods=["GET"]),
        Route("/api/agents", api_route(_submit_agent), methods=["POST"]),
        Route("/api/agents", api_route(_list_agents), methods=["GET"]),
        Route("/api/agents/{id}", api_route(_show_agent), methods=["GET"]),
        Route("/api/events", api_route(_create_event), methods=["POST"]),
        Route("/api/events", api_route(_list_events), methods=["GET"]),
        Route("/api/events/{id}", api_route(_show_event), methods=["GET"]),
        Route("/api/events/{id}/logs", api_route(_event_logs), methods=["GET"]),
        Route("/api/challenges", api_route(_create_challenge), methods=["POST"]),
        Route("/api/challenges", api_route(_list_challenges), methods=["GET"]),
        Route("/api/challenges/{id}", api_route(_show_challenge), methods=["GET"]),
        Route("/api/challenges/{id}/logs", api_route(_challenge_logs), methods=["GET"]),
    ]
    agents = Agents(host)
    events = Events(host)
    challenges = Challenges(host)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        """As the server starts: check again the agent versions a stopped service
        left checking, and play on the events it left waiting or running."""
        await agents.resume()
        await events.resume()
        await challenges.resume()
        yield

    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error, Exception: _http_error},
                    lifespan=lifespan)
    app.state.host = host
    app.state.store = host.store
    app.state.agents = agents
    app.state.events = events
    app.state.challenges = challenges
    app.state.limiter = RateLimiter(host.config.requests_per_minute)
    app.state.tournaments = Tournaments(host.config.data, host.config.dask)
    install_pages(app, host, app.state.tournaments)
    return app
