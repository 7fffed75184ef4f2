"""The seat route: ``/api/matches/ID/seat``, a WebSocket on the API's own
port that carries a user's agent to its match's next seating.

``arena connect`` (:mod:`arena.commands.connect`) opens it for an agent that
speaks plain ACPC on the user's machine; the service connects to the
seating's dealer on this machine, sends the seating's key line itself
(:func:`poker.protocol.key_line`) and then passes the bytes both ways
untouched (each binary message one piece of the agent's stream). So the seat
rides the API's transport, TLS included behind the proxy that serves it
(docs/hosting.md, Who may connect), and the key never leaves the service.

Only a bearer token opens it, never the session cookie: a WebSocket is not
held to the same-origin rule, and a page of another site could otherwise
open one with a logged-in user's cookie. The refusal comes after the
WebSocket is accepted, as a close with the reason (code 1008), which a
client can read, where a refused handshake says only 403. Wrong tokens count
against the address's rate limit, as the API's do.
"""

from __future__ import annotations

from typing import Final

import trio
from starlette.websockets import WebSocket, WebSocketDisconnect

from arena.serve.hosting import Host
from arena.serve.httpkit import RateLimiter, RequestError, too_many, user_for_token
from poker.protocol import key_line

__all__ = ["seat_socket", "POLICY_VIOLATION", "OVER"]

#: WebSocket close code for a refusal (RFC 6455 "policy violation").
POLICY_VIOLATION: Final = 1008
#: The close reason once the match is over (the agent's connection ends as a dealer's would).
OVER: Final = "the match is over"
_CHUNK: Final = 65536


async def seat_socket(websocket: WebSocket) -> None:
    """Relay the agent's stream to the match's next seating, until either ends."""
    host: Host = websocket.app.state.host
    await websocket.accept()
    try:
        target = await _target(host, websocket)
    except RequestError as refused:
        await websocket.close(code=POLICY_VIOLATION, reason=str(refused)[:120])
        return
    if target is None:
        await websocket.close(code=1000, reason=OVER)
        return
    address, port, key = target
    try:
        dealer = await trio.open_tcp_stream(address, port)
    except OSError as error:
        await websocket.close(code=1011, reason=f"the seating's dealer cannot be reached: {error.strerror or error}"[:120])
        return
    async with dealer:
        await dealer.send_all(key_line(key))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_to_dealer, websocket, dealer, nursery.cancel_scope)
            await _to_agent(dealer, websocket)
            nursery.cancel_scope.cancel()
    try:
        await websocket.close(code=1000)
    except RuntimeError:  # the agent's side is already closed
        pass


async def _target(host: Host, websocket: WebSocket) -> tuple[str, int, str] | None:
    """The seating to relay to (:meth:`arena.serve.hosting.Host.relay_target`) for the token's user.

    Raises:
        RequestError: a missing or wrong token, an address past its limit, not the user's match.
    """
    limiter: RateLimiter = websocket.app.state.limiter
    scheme, _, token = websocket.headers.get("authorization", "").partition(" ")
    user = await user_for_token(host.store, token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        peer = websocket.client.host if websocket.client is not None else "?"
        wait = limiter.retry_after(f"addr:{peer}")
        if wait:
            raise too_many(wait)
        raise RequestError(401, "the seat route needs Authorization: Bearer TOKEN (a wrong or revoked token is refused)")
    limiter.check_user(user)
    return await host.relay_target(user, websocket.path_params["id"])


async def _to_dealer(websocket: WebSocket, dealer: trio.SocketStream, scope: trio.CancelScope) -> None:
    """The agent's bytes to the dealer; when the agent goes, the relay ends."""
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            data = message.get("bytes") or (message.get("text") or "").encode()
            if data:
                await dealer.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError, WebSocketDisconnect):
        pass
    scope.cancel()


async def _to_agent(dealer: trio.SocketStream, websocket: WebSocket) -> None:
    """The dealer's bytes to the agent, until the dealer ends the connection."""
    try:
        while data := await dealer.receive_some(_CHUNK):
            await websocket.send_bytes(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError, WebSocketDisconnect, RuntimeError):
        pass
