"""The service's HTTP side: a Starlette app of JSON routes under ``/api``.

Every route but ``/api/login`` needs ``Authorization: Bearer TOKEN`` or the
session cookie a login sets (401 without either or with a wrong one, the same
words either way); a match of another user is a 404 worded as a match that
does not exist. Every error is ``{"error": "one line"}``
with its status: malformed JSON and bodies past ``max_body_bytes`` are refused
before anything else reads them (400, 413), requests past
``requests_per_minute`` get 429 with ``Retry-After``. A failing request ends
only itself.

For the web pages: ``POST /api/login`` ``{"token"}`` answers the user and sets
the session cookie (:data:`SESSION_COOKIE`: HttpOnly, SameSite=Strict, so no
other site's page can send it; Secure over HTTPS), ``POST /api/logout`` ends
it. :func:`current_user` is the check every route makes (bearer token, then
cookie), :func:`user_for_token` the login's; both go through hashed,
constant-time lookups (:class:`arena.serve.store.Store`).
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.serve.hosting import HISTORIES, Host, RequestError
from arena.serve.store import User

__all__ = [
    "make_app",
    "current_user",
    "user_for_token",
    "error",
    "read_json",
    "RateLimiter",
    "UNAUTHORIZED",
    "SESSION_COOKIE",
]

#: What a request without a valid token reads (the same for none and a wrong one).
UNAUTHORIZED: Final = "missing or wrong token: send Authorization: Bearer TOKEN (arena users add NAME prints one)"
_BEARER: Final = "bearer "
#: The web login's cookie.
SESSION_COOKIE: Final = "arena_session"


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The one error shape: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def user_for_token(host: Host, token: str) -> User | None:
    """The live user a token belongs to, or None (the login form's check)."""
    if not token or len(token) > 256:
        return None
    return await host.store.call(host.store.user_for_token, token)


async def current_user(request: Request) -> User:
    """The user the request's bearer token names, or else its session cookie.

    Raises:
        RequestError: 401, neither or a wrong one.
    """
    host: Host = request.app.state.host
    header = request.headers.get("authorization", "")
    token = header[len(_BEARER):].strip() if header.lower().startswith(_BEARER) else ""
    user = await user_for_token(host, token)
    session = request.cookies.get(SESSION_COOKIE, "")
    if user is None and not token and 0 < len(session) <= 256:
        user = await host.store.call(host.store.user_for_session, session)
    if user is None:
        raise RequestError(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
    return user


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's body as a JSON object, read up to ``limit`` bytes.

    Raises:
        RequestError: 413 past the limit, 400 for anything but a JSON object.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise RequestError(413, f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(413, f"request body over {limit} bytes")
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as problem:
        raise RequestError(400, f"malformed JSON: {str(problem)[:200]}") from None
    if not isinstance(document, dict):
        raise RequestError(400, "the body must be a JSON object")
    return document


class RateLimiter:
    """At most ``per_minute`` requests per key in any 60 seconds (a sliding
    window); keys are users, or the address for requests without a valid token."""

    WINDOW_S: Final = 60.0
    _KEYS: Final = 100_000

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self.seen: dict[str, deque[float]] = {}

    def retry_after(self, key: str) -> int:
        """0 if the request may go on (it is counted), else whole seconds to wait."""
        now = self.clock()
        times = self.seen.get(key)
        if times is None:
            if len(self.seen) >= self._KEYS:
                self.seen.clear()  # a flood of addresses: forget all rather than grow
            times = self.seen[key] = deque()
        while times and times[0] <= now - self.WINDOW_S:
            times.popleft()
        if len(times) >= self.per_minute:
            return max(1, math.ceil(times[0] + self.WINDOW_S - now))
        times.append(now)
        return 0


Handler = Callable[[Request, User], Awaitable[Response]]


def api_route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` behind the token check, the rate limit and the error shape."""

    async def endpoint(request: Request) -> Response:
        limiter: RateLimiter = request.app.state.limiter
        try:
            try:
                user = await current_user(request)
            except RequestError:
                peer = request.client.host if request.client is not None else "?"
                wait = limiter.retry_after(f"addr:{peer}")
                if wait:
                    raise _too_many(wait) from None
                raise
            wait = limiter.retry_after(f"user:{user.id}")
            if wait:
                raise _too_many(wait)
            return await handler(request, user)
        except RequestError as refused:
            return error(refused.status, str(refused), refused.headers)

    return endpoint


def _too_many(wait: int) -> RequestError:
    return RequestError(429, f"too many requests: retry in {wait} s", {"Retry-After": str(wait)})


async def _login(request: Request) -> Response:
    """``{"token"}`` -> the user, and a session cookie for the web pages."""
    host: Host = request.app.state.host
    limiter: RateLimiter = request.app.state.limiter
    try:
        wait = limiter.retry_after(f"addr:{request.client.host if request.client is not None else '?'}")
        if wait:
            raise _too_many(wait)
        document = await read_json(request, host.config.max_body_bytes)
        token = document.get("token")
        user = await user_for_token(host, token) if isinstance(token, str) else None
        if user is None:
            raise RequestError(401, "wrong token: log in with the token arena users add printed")
    except RequestError as refused:
        return error(refused.status, str(refused), refused.headers)
    secret = await host.store.call(host.store.new_session, user, host.config.session_lifetime_s)
    response = JSONResponse({"name": user.name, "admin": user.admin})
    response.set_cookie(
        SESSION_COOKIE, secret, max_age=int(host.config.session_lifetime_s), path="/", httponly=True,
        samesite="strict", secure=request.url.scheme == "https",
    )
    return response


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
    host: Host = request.app.state.host
    return JSONResponse({"bots": host.hosted_bots()})


async def _create_match(request: Request, user: User) -> Response:
    host: Host = request.app.state.host
    document = await read_json(request, host.config.max_body_bytes)
    peer = request.client.host if request.client is not None else None
    answer = await host.create_match(user, document, peer)
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


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    message = {404: "no such route", 405: "method not allowed"}.get(status, "request failed")
    return error(status, f"{message}: {request.method} {request.url.path[:200]}")


def make_app(host: Host) -> Starlette:
    """The API app over ``host`` (the matches and the store)."""
    routes = [
        Route("/api/login", _login, methods=["POST"]),
        Route("/api/logout", api_route(_logout), methods=["POST"]),
        Route("/api/me", api_route(_me)),
        Route("/api/bots", api_route(_bots)),
        Route("/api/matches", api_route(_create_match), methods=["POST"]),
        Route("/api/matches", api_route(_list_matches), methods=["GET"]),
        Route("/api/matches/{id}", api_route(_show_match), methods=["GET"]),
        Route("/api/matches/{id}/log", api_route(_match_log), methods=["GET"]),
        Route("/api/matches/{id}/hands", api_route(_match_hands), methods=["GET"]),
        *(Route(f"/api/matches/{{id}}/{form}", api_route(_match_history), methods=["GET"]) for form in HISTORIES),
        Route("/api/leaderboard", api_route(_leaderboard), methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error, Exception: _http_error})
    app.state.host = host
    app.state.limiter = RateLimiter(host.config.requests_per_minute)
    from arena.serve.pages import install_pages  # [web hook] the browser side (it imports this module)

    install_pages(app, host)
    return app
