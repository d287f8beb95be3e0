"""``POST /search`` and ``POST /ask``: the Desk's ``search_rows`` and ``ask``, the same objects
``evidencedesk search --json`` and ``ask --json`` print."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from evidencedesk.errors import GenerationError
from evidencedesk.server.deps import CallerDep, StateDep, check_candidates, check_k, check_text, refuse, scope_for
from evidencedesk.server.models import AskRequest, AskResponse, SearchHit, SearchRequest

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


@router.post("/ask", response_model=AskResponse)
def ask(body: AskRequest, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """Answer with a citation after every sentence, or abstain with the reason; the trace is stored."""
    check_text(state, body.question, "question")
    scope = scope_for(caller, body.scope)
    k = check_k(state, body.k or state.settings.retrieval.k)
    candidates = check_candidates(state, body.candidates or max(state.settings.retrieval.rerank.candidates, k))
    try:
        out = state.desk.ask(
            body.question, scope, generator=state.generator_name(body.generator), method=body.method, k=k,
            candidates=candidates, rerank=body.rerank, budget_tokens=body.budget, floor=body.floor,
            dedup_threshold=body.dedup, order=body.order, save=False,
        )  # fmt: skip
    except (ImportError, FileNotFoundError, GenerationError) as exc:
        refuse(503, f"generator not available: {exc}")
    state.store.save_trace(out["trace_id"], out, owner=caller.name, keep=state.service.trace_retention)
    state.metrics.record_ask(out, scope.day)
    return out
