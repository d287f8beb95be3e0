"""create_app: the FastAPI service over one store, and the web lab served from ``static/``.

Every data route needs a caller (an API key, or anonymous when the settings allow it) and runs
inside that caller's scope. Request bodies are counted as they stream in (FastAPI's ``max_body_size``).
Request counts and latencies per route feed ``/metrics``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from evidencedesk.config import Settings
from evidencedesk.desk import warm_up
from evidencedesk.errors import EvidencedeskError, ModelBusy, RequestRefused, http_status
from evidencedesk.server import (
    routes_eval,
    routes_ingest,
    routes_lab,
    routes_openai,
    routes_ops,
    routes_query,
    routes_records,
)
from evidencedesk.server.limits import JsonTooLarge, upload_limit
from evidencedesk.server.models import REFUSALS
from evidencedesk.server.paths import without_paths
from evidencedesk.server.settings import ServiceSettings, no_keys_file
from evidencedesk.server.state import ServiceState
from evidencedesk.server.validation import validation_failed

STATIC = Path(__file__).resolve().parent / "static"


def _version() -> str:
    try:
        return version("evidencedesk")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "0"


def create_app(state: ServiceState, *, close_on_shutdown: bool = True) -> FastAPI:
    """The service over ``state``; the lab is at ``/`` and the OpenAPI schema at ``/openapi.json``."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        warm_up()  # compiled (or loaded from numba's cache) before the first request, not during it
        state.warm_models()  # the cross-encoder the configured reranker and generator read, loaded once
        yield
        if close_on_shutdown:
            state.close()

    app = FastAPI(
        title="evidencedesk",
        version=_version(),
        summary="Search and answer from documents with citations, inside each API key's scope.",
        lifespan=lifespan,
    )
    app.state.service = state

    @app.middleware("http")
    async def count(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        if request.url.path == "/ingest":  # ingest is bounded by its upload limits, and must not be cut off
            response = await call_next(request)
        else:
            try:
                response = await asyncio.wait_for(call_next(request), state.service.max_request_seconds)
            except TimeoutError:
                limit = state.service.max_request_seconds
                return JSONResponse({"detail": f"request took longer than the limit of {limit} seconds"}, 408)
        route = request.scope.get("route")
        path = getattr(route, "path", None)
        if path is not None and path != "/":  # static files are not counted
            state.metrics.record_request(path, response.status_code, (time.perf_counter() - start) * 1000)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.exception_handler(StarletteHTTPException)
    async def explain(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 413 and exc.detail == "Content Too Large":  # the body limit's own answer
            limit = upload_limit(state.service) if request.url.path == "/ingest" else state.service.max_body_bytes
            exc = StarletteHTTPException(413, f"request body larger than {limit} bytes", exc.headers)
        return await http_exception_handler(request, exc)

    app.add_exception_handler(RequestValidationError, validation_failed)  # NaN and Infinity echoed as names

    async def refuse_error(request: Request, exc: Exception) -> Response:
        """Every error the core raises, answered with its status from ``errors.ERROR_TABLE`` and its message."""
        status = http_status(exc)
        message = exc.message if isinstance(exc, RequestRefused) else str(exc)
        message = without_paths(message, state.store_path, state.service.ingest_root)  # never a server path
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        if isinstance(exc, ModelBusy):
            headers = {"Retry-After": str(exc.retry_after)}
        return JSONResponse({"detail": message}, status, headers=headers)

    for error in (EvidencedeskError, ValueError):  # a ValueError from below the core: a bad argument
        app.add_exception_handler(error, refuse_error)

    def body_limit(path: str) -> int:
        return upload_limit(state.service) if path == "/ingest" else state.service.max_body_bytes

    app.add_middleware(JsonTooLarge, limit_for=body_limit)
    # bodies are counted while they stream in, not taken from Content-Length (FastAPI's max_body_size)
    for module in (routes_ops, routes_records, routes_query, routes_eval, routes_lab):
        app.include_router(module.router, max_body_size=state.service.max_body_bytes, responses=REFUSALS)
    app.include_router(routes_openai.router, max_body_size=state.service.max_body_bytes)  # OpenAI's error shape
    app.include_router(routes_ingest.router, max_body_size=upload_limit(state.service), responses=REFUSALS)
    app.mount("/", StaticFiles(directory=STATIC, html=True), name="lab")
    return app


def build_app(store: str | Path, settings: Settings | None = None, service: ServiceSettings | None = None) -> FastAPI:
    """A service over the store folder ``store`` with the given (or default) settings."""
    return create_app(ServiceState(store, settings or Settings(), service or no_keys_file()))


__all__ = ["STATIC", "build_app", "create_app"]
