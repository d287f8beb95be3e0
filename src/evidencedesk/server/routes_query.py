"""``POST /search`` and ``POST /ask``: the Desk's ``search_rows`` and ``ask``, the same objects
``evidencedesk search --json`` and ``ask --json`` print.

``POST /ask`` streams server-sent events (``server.sse``) when the body says ``"stream": true`` or the
request accepts ``text/event-stream``. A local model whose request queue is full answers 503 with
``Retry-After``."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response
from pydantic import JsonValue, TypeAdapter

from evidencedesk.results.ask import AskResult
from evidencedesk.server.asking import AskOrder, drain, start_ask
from evidencedesk.server.deps import CallerDep, StateDep, check_k, check_text, scope_for
from evidencedesk.server.models import AskRequest, SearchHit, SearchRequest
from evidencedesk.server.sse import MEDIA_TYPE, event_stream, wants_events

router = APIRouter(tags=["query"])


@router.post("/search", response_model=list[SearchHit])
def search(body: SearchRequest, state: StateDep, caller: CallerDep) -> list[dict[str, object]]:
    """Rank the stored chunks inside the scope (the key's, narrowed by the request's) with one method."""
    body = state.with_defaults(body)
    check_text(state, body.query, "query")
    assert body.k is not None  # with_defaults filled it in
    check_k(state, body.k)
    scope = scope_for(caller, body.scope)
    start = time.perf_counter()
    hits = state.desk.search_rows(body.query, body.k, body.method, scope, body.legs)
    state.metrics.record_search(len(hits), (time.perf_counter() - start) * 1000)
    return [hit.to_dict() for hit in hits]


ASK_FIRST = (
    "trace_id", "query", "answer", "abstained", "abstain_reason", "citations", "sources", "context",
    "context_candidates", "retrieved", "findings", "timings", "prompt", "scope",
)  # fmt: skip
"""The keys ``POST /ask`` has always listed first; the others follow in ``AskResult.to_dict()``'s order."""
_JSON = TypeAdapter(dict[str, JsonValue])


def ask_response(result: AskResult) -> Response:
    """The JSON answer of ``POST /ask``: ``result.to_dict()`` with the keys of ``ASK_FIRST`` first."""
    data = result.to_dict()
    ordered = {key: data[key] for key in ASK_FIRST} | data
    return Response(_JSON.dump_json(ordered), media_type="application/json")


@router.post(
    "/ask",
    response_model=AskResult,
    responses={
        200: {"content": {MEDIA_TYPE: {}}, "description": "The answer, or its events when streamed."},
        503: {"description": "Generator not available, or busy (with Retry-After)."},
    },
)
def ask(body: AskRequest, request: Request, state: StateDep, caller: CallerDep) -> Response:
    """Answer with a citation after every sentence, or abstain with the reason; the trace is stored.

    Streamed (``"stream": true`` or ``Accept: text/event-stream``): ``delta`` events as the answer is
    written, then a ``done`` event with the same object the JSON answer holds."""
    order = AskOrder(
        body.question, body.scope, body.generator, body.method, body.k, body.candidates,
        {"rerank": body.rerank, "budget_tokens": body.budget, "floor": body.floor, "dedup_threshold": body.dedup,
         "order": body.order, "max_tokens": body.max_tokens},
    )  # fmt: skip
    asking = start_ask(state, caller, order)
    if wants_events(request.headers.get("accept"), body.stream):
        return event_stream(asking.events, asking.finish)
    return ask_response(asking.finish(drain(asking.events)))
