"""The HTTP kit every route of the service is built with: the one error shape,
the refusal every layer raises (:class:`RequestError`), who a request comes
from (bearer token, then the session cookie), whether a browser sent it from
this origin (:func:`same_origin`), reading a JSON body with a bound, and the
rate limiter, put together by :func:`api_route`.

It stands under every other module of :mod:`arena.serve` that speaks HTTP
(the API's routes, the pages, the match host's refusals) and imports none of
them: the store (users, sessions) and Starlette are all it needs. The app keeps
what it reads in ``app.state``: ``store`` (:class:`arena.serve.store.Store`)
and ``limiter`` (:class:`RateLimiter`).
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from arena.serve.store import Store, User

__all__ = [
    "RequestError",
    "error",
    "too_many",
    "user_for_token",
    "session_user",
    "current_user",
    "same_origin",
    "CROSS_ORIGIN",
    "read_body",
    "read_json",
    "RateLimiter",
    "Handler",
    "api_route",
    "UNAUTHORIZED",
    "SESSION_COOKIE",
]

#: What a request without a valid token reads (the same for none and a wrong one).
UNAUTHORIZED: Final = "missing or wrong token: send Authorization: Bearer TOKEN (arena users add NAME prints one)"
_BEARER: Final = "bearer "
#: The web login's cookie.
SESSION_COOKIE: Final = "arena_session"
#: The longest token or session secret looked up (longer ones are wrong without asking the store).
_SECRET_LIMIT: Final = 256
#: Methods that change nothing, which a page of another origin may send with the cookie.
_SAFE_METHODS: Final = ("GET", "HEAD", "OPTIONS")
#: Why a cookie's request from another origin is refused (403).
CROSS_ORIGIN: Final = "a request from a page of another origin: use this site's pages, or a bearer token from a script"


class RequestError(Exception):
    """A request the service refuses: ``status`` and one line (and headers, as Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The one error shape: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def too_many(wait: int) -> RequestError:
    """429, with how many seconds to wait."""
    return RequestError(429, f"too many requests: retry in {wait} s", {"Retry-After": str(wait)})


def _store(connection: HTTPConnection) -> Store:
    store: Store = connection.app.state.store
    return store


async def user_for_token(store: Store, token: str) -> User | None:
    """The live user a token belongs to, or None (the login form's check)."""
    if not token or len(token) > _SECRET_LIMIT:
        return None
    return await store.call(store.user_for_token, token)


async def session_user(connection: HTTPConnection) -> User | None:
    """The person of the session cookie (:meth:`arena.serve.store.Store.user_for_session`), or None."""
    session = connection.cookies.get(SESSION_COOKIE, "")
    if not 0 < len(session) <= _SECRET_LIMIT:
        return None
    store = _store(connection)
    return await store.call(store.user_for_session, session)


def same_origin(connection: HTTPConnection) -> bool:
    """Whether a browser sent the request from a page of this origin, or no
    browser sent it (a script: neither header). A page on another port of the
    same host is another origin, and would send the cookie (SameSite goes by
    site, not origin), so ``Sec-Fetch-Site: same-site`` is refused as much as
    ``cross-site``, and an ``Origin`` must name this very host and port."""
    if connection.headers.get("sec-fetch-site", "").lower() in ("cross-site", "same-site"):
        return False
    origin = connection.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == connection.headers.get("host", "")


def bearer_token(request: Request) -> str:
    """The token of the request's ``Authorization: Bearer`` header ("" for none):
    a credential a browser never sends on its own, unlike the session cookie."""
    header = request.headers.get("authorization", "")
    return header[len(_BEARER):].strip() if header.lower().startswith(_BEARER) else ""


async def current_user(request: Request) -> User:
    """The user the request's bearer token names, or else its session cookie
    (a request that sends a token is judged by the token alone). A cookie's
    request that changes something must come from this origin
    (:func:`same_origin`): the cookie goes with a page of another port's
    requests too; a bearer token is never sent by a browser on its own.

    Raises:
        RequestError: 401, neither or a wrong one; 403, the cookie from another origin.
    """
    token = bearer_token(request)
    user = await user_for_token(_store(request), token)
    if user is None and not token:
        user = await session_user(request)
        if user is not None and request.method not in _SAFE_METHODS and not same_origin(request):
            raise RequestError(403, CROSS_ORIGIN)
    if user is None:
        raise RequestError(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
    return user


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, read up to ``limit`` bytes (a longer one is refused
    as soon as it says so or passes the limit, never held whole).

    Raises:
        RequestError: 413 past the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not (declared.isascii() and declared.isdigit()) or int(declared) > limit):
        raise RequestError(413, f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(413, f"request body over {limit} bytes")
    return bytes(body)


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's body as a JSON object, read up to ``limit`` bytes.

    Raises:
        RequestError: 413 past the limit, 400 for anything but a JSON object.
    """
    body = await read_body(request, limit)
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

    def check_address(self, request: Request) -> None:
        """Count a request by its address (one without a valid token, or the login's).

        Raises:
            RequestError: 429, past the limit.
        """
        peer = request.client.host if request.client is not None else "?"
        wait = self.retry_after(f"addr:{peer}")
        if wait:
            raise too_many(wait)

    def check_user(self, user: User) -> None:
        """Count a user's request, an API call or a page alike (one budget for both).

        Raises:
            RequestError: 429, past the limit.
        """
        wait = self.retry_after(f"user:{user.id}")
        if wait:
            raise too_many(wait)


Handler = Callable[[Request, User], Awaitable[Response]]


def api_route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` behind the token check, the rate limit and the error shape."""

    async def endpoint(request: Request) -> Response:
        limiter: RateLimiter = request.app.state.limiter
        try:
            try:
                user = await current_user(request)
            except RequestError:
                limiter.check_address(request)
                raise
            limiter.check_user(user)
            return await handler(request, user)
        except RequestError as refused:
            return error(refused.status, str(refused), refused.headers)

    return endpoint
