"""``POST /search`` and ``POST /ask``: the Desk's ``search_rows`` and ``ask``, the same objects
``evidencedesk search --json`` and ``ask --json`` print.

``POST /ask`` streams server-sent events (``server.sse``) when the body says ``"stream": true`` or the
request accepts ``text/event-stream``. A local model whose request queue is full answers 503 with
``Retry-After``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from evidencedesk import AnswerDone, AskStream
from evidencedesk.errors import GenerationError, ModelBusy
from evidencedesk.server.deps import CallerDep, StateDep, check_candidates, check_k, check_text, refuse, scope_for
from evidencedesk.server.models import AskRequest, AskResponse, SearchHit, SearchRequest
from evidencedesk.server.sse import MEDIA_TYPE, event_stream, wants_events

router = APIRouter(tags=["query"])


@router.post("/search", response_model=list[SearchHit])
def search(body: SearchRequest, state: StateDep, caller: CallerDep) -> list[dict[str, Any]]:
    """Rank the stored chunks inside the scope (the key's, narrowed by the request's) with one method."""
    body = state.with_defaults(body)
    check_text(state, body.query, "query")
    assert body.k is not None  # with_defaults filled it in
    check_k(state, body.k)
    scope = scope_for(caller, body.scope)
    start = time.perf_counter()
    rows = state.desk.search_rows(body.query, body.k, body.method, scope, body.legs)
    state.metrics.record_search(len(rows), (time.perf_counter() - start) * 1000)
    return rows


def busy(exc: ModelBusy) -> HTTPException:
    """503 with Retry-After for a full model queue."""
    return HTTPException(503, f"generator busy: {exc}", headers={"Retry-After": str(exc.retry_after)})


def open_stream(start: Callable[[], AskStream]) -> AskStream:
    """``start()`` with the generator's errors as HTTP answers (503 with Retry-After when busy, 503)."""
    try:
        return start()
    except ModelBusy as exc:
        raise busy(exc) from None
    except (ImportError, FileNotFoundError, GenerationError) as exc:
        refuse(503, f"generator not available: {exc}")


def drain(events: AskStream) -> dict[str, Any]:
    """The final result of a stream read whole (the JSON answer)."""
    try:
        with events:
            for event in events:
                if isinstance(event, AnswerDone):
                    return event.result
    except GenerationError as exc:
        refuse(503, f"generator failed: {exc}")
    refuse(503, "the generator stopped before it finished its answer")


@router.post(
    "/ask",
    response_model=AskResponse,
    responses={
        200: {"content": {MEDIA_TYPE: {}}, "description": "The answer, or its events when streamed."},
        503: {"description": "Generator not available, or busy (with Retry-After)."},
    },
)
def ask(body: AskRequest, request: Request, state: StateDep, caller: CallerDep) -> Any:
    """Answer with a citation after every sentence, or abstain with the reason; the trace is stored.

    Streamed (``"stream": true`` or ``Accept: text/event-stream``): ``delta`` events as the answer is
    written, then a ``done`` event with the same object the JSON answer holds."""
    check_text(state, body.question, "question")
    scope = scope_for(caller, body.scope)
    k = check_k(state, body.k or state.settings.retrieval.k)
    candidates = check_candidates(state, body.candidates or max(state.settings.retrieval.rerank.candidates, k))

    def start() -> AskStream:
        name = state.generator_name(body.generator)
        state.generator(name)  # built (and its queue sized) before the stream joins that queue
        return state.desk.ask_stream(
            body.question, scope, generator=name, method=body.method, k=k, candidates=candidates,
            rerank=body.rerank, budget_tokens=body.budget, floor=body.floor, dedup_threshold=body.dedup,
            order=body.order, save=False, max_tokens=body.max_tokens,
        )  # fmt: skip

    events = open_stream(start)

    def done(out: dict[str, Any]) -> dict[str, Any]:
        state.desk.save_trace(out, owner=caller.name, keep=state.service.trace_retention)
        state.metrics.record_ask(out, scope.day)
        return out

    if wants_events(request.headers.get("accept"), body.stream):
        return event_stream(events, done)
    return done(drain(events))
