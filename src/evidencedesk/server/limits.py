"""Per-key rate and cost limits on the costly routes, and the byte limit of an upload.

``RateLimiter`` keeps, per key name, the calls of the last ``window_seconds`` with their cost; a call
that would pass the key's ``requests`` or ``cost`` limit is refused with the seconds until enough of
the window has expired (the 429 answer's Retry-After). Body sizes are enforced by FastAPI's
``max_body_size`` (Starlette's ``RequestBodyLimitMiddleware``), which counts the bytes as they
arrive, so a client sending no Content-Length (chunked transfer) or a false one is cut off too.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencedesk.server.settings import CostSpec, LimitSpec, ServiceSettings

# the limited routes by path prefix, and the name of their entry in ``CostSpec``
LIMITED = (("/ask", "ask"), ("/v1/chat/completions", "ask"), ("/eval", "eval"), ("/lab/", "lab"), ("/ingest", "ingest"))


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


class JsonTooLarge:
    """Outermost middleware: the body limit's plain-text 413 becomes JSON naming the limit, like every error."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        replacing = False
        body = b""

        async def rewrite(message: Message) -> None:
            nonlocal replacing, body
            if message["type"] == "http.response.start" and message["status"] == 413:
                kind = dict(message.get("headers") or []).get(b"content-type", b"")
                replacing = kind.startswith(b"text/plain")
                if replacing:
                    limit = self.limit_for(scope["path"])
                    body = json.dumps({"detail": f"request body larger than {limit} bytes"}).encode()
                    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                    await send({**message, "headers": headers})
                    return
            if replacing and message["type"] == "http.response.body":
                if not message.get("more_body"):
                    await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, rewrite)


def upload_limit(service: ServiceSettings) -> int:
    """The byte limit of one ``/ingest`` request: every allowed file at its largest, plus the form's framing."""
    return int(service.max_upload_bytes * service.max_upload_files + 64 * 1024)


__all__ = ["LIMITED", "JsonTooLarge", "RateLimiter", "route_cost", "too_many", "upload_limit"]
