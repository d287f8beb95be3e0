"""``GET /healthz`` (no key needed, no data) and ``GET /metrics`` (JSON, or Prometheus text)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse

from evidencedesk.server.deps import CallerDep, StateDep, refuse
from evidencedesk.server.models import Health

router = APIRouter(tags=["operations"])
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@router.get("/healthz", response_model=Health)
def healthz(state: StateDep) -> dict[str, Any]:
    """Liveness: the store answers. Says nothing about its content."""
    return {"status": "ok", "build_id": state.build_id()}


@router.get(
    "/metrics",
    responses={200: {"content": {"application/json": {}, "text/plain": {}}, "description": "JSON or Prometheus text"}},
)
def metrics(
    request: Request,
    state: StateDep,
    caller: CallerDep,
    format: Literal["json", "prometheus"] | None = Query(None, description="Default: by the Accept header."),
) -> Any:
    """Queries, zero-hit rate, abstention rate, stale-context share (must stay 0), citation validity, latency.

    The counts span every tenant, so they are for admin keys only (and, when no key is configured,
    for the loopback-only anonymous caller)."""
    if not caller.admin and not (caller.anonymous and not state.service.keys):
        refuse(403, "metrics need an admin key")
    accept = request.headers.get("accept", "")
    wants_text = format == "prometheus" or (format is None and "text/plain" in accept and "json" not in accept)
    if wants_text:
        return PlainTextResponse(state.metrics.prometheus(), media_type=PROMETHEUS_TYPE)
    return state.metrics.snapshot()
