"""Request limits that need no route's help: per-key rate and cost windows, and the streamed body size.

``RateLimiter`` keeps, per key name, the calls of the last ``window_seconds`` with their cost; a call
that would pass the key's ``requests`` or ``cost`` limit is refused with the seconds until enough of
the window has expired (the 429 answer's Retry-After). ``BodyLimit`` is an ASGI middleware that
counts the bytes of a request body as they arrive and answers 413 once they pass the limit, so a
client that sends no Content-Length (chunked transfer) or a false one is cut off all the same.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencedesk.server.settings import CostSpec, LimitSpec

# the limited routes by path prefix, and the name of their entry in ``CostSpec``
LIMITED = (("/ask", "ask"), ("/eval", "eval"), ("/lab/", "lab"), ("/ingest", "ingest"))


def route_cost(method: str, path: str, costs: CostSpec) -> int | None:
    """The cost of a call to a limited route (None: the route is not limited). Reads are never limited."""
    if method != "POST":
        return None
    for prefix, name in LIMITED:
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return int(getattr(costs, name))
    return None


class RateLimiter:
    """Sliding-window request and cost counts per key. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._calls: dict[str, deque[tuple[float, int]]] = {}

    def charge(self, key: str, limits: LimitSpec, cost: int) -> float | None:
        """Count one call of ``cost`` for ``key``; None when allowed, else the seconds to wait (nothing counted)."""
        now = self._clock()
        window = limits.window_seconds
        with self._lock:
            calls = self._calls.setdefault(key, deque())
            while calls and calls[0][0] <= now - window:
                calls.popleft()
            waits: list[float] = []
            if limits.requests is not None and len(calls) + 1 > limits.requests:
                waits.append(calls[len(calls) - limits.requests][0] + window - now)
            if limits.cost is not None:
                if cost > limits.cost:
                    waits.append(window)  # never fits; the caller sees a full window and a clear message
                else:
                    excess = sum(c for _, c in calls) + cost - limits.cost
                    for when, c in calls:
                        if excess <= 0:
                            break
                        excess -= c
                        if excess <= 0:
                            waits.append(when + window - now)
            if waits:
                return max(waits)
            calls.append((now, cost))
            return None


def too_many(retry_after: float, limits: LimitSpec) -> HTTPException:
    seconds = max(1, math.ceil(retry_after))
    return HTTPException(
        429,
        f"rate limit: at most {limits.requests} calls and {limits.cost} cost units per "
        f"{limits.window_seconds:g} s for this key; retry after {seconds} s",
        headers={"Retry-After": str(seconds)},
    )


class _TooLarge(HTTPException):
    """Raised from ``receive``: an HTTPException, so body parsers pass it on and the app answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes", headers={"Connection": "close"})


class BodyLimit:
    """Answer 413 once a request body passes ``limit_for(path)`` bytes, counted while it streams in."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(send, limit)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge(limit)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(send, limit)
        except Exception as exc:  # a parser may wrap our signal; find it in the chain
            if not _caused_by_too_large(exc) or started:
                raise
            await self._refuse(send, limit)

    @staticmethod
    async def _refuse(send: Send, limit: int) -> None:
        body = json.dumps({"detail": f"request body larger than {limit} bytes"}).encode()
        headers: list[tuple[bytes, bytes]] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _caused_by_too_large(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, _TooLarge):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def body_limits(service: Any) -> Callable[[str], int]:
    """The byte limit per path: uploads to ``/ingest`` get their own, every other body ``max_body_bytes``."""

    def limit_for(path: str) -> int:
        if path == "/ingest":
            return int(service.max_upload_bytes * service.max_upload_files + 64 * 1024)
        return int(service.max_body_bytes)

    return limit_for


__all__ = ["LIMITED", "BodyLimit", "RateLimiter", "body_limits", "route_cost", "too_many"]
