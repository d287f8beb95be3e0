"""``POST /search`` and ``POST /ask``: the same objects ``evidencedesk search --json`` and ``ask --json`` print."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from evidencedesk.retrieval.rerank import get_reranker
from evidencedesk.server.deps import CallerDep, StateDep, check_candidates, check_k, check_text, refuse, scope_for
from evidencedesk.server.models import AskRequest, AskResponse, SearchHit, SearchRequest
from evidencedesk.server.state import ServiceState
from evidencedesk.service_ops import answer, search_rows

router = APIRouter(tags=["query"])


@router.post("/search", response_model=list[SearchHit])
def search(body: SearchRequest, state: StateDep, caller: CallerDep) -> list[dict[str, Any]]:
    """Rank the stored chunks inside the scope (the key's, narrowed by the request's) with one method."""
    body = state.with_defaults(body)
    check_text(state, body.query, "query")
    check_k(state, body.k)
    scope = scope_for(caller, body.scope)
    corpus = state.corpus()
    start = time.perf_counter()
    try:
        searcher = state.searcher(corpus, body.method, body.legs)
        rows = search_rows(searcher, body.query, body.k, scope)
    except ValueError as exc:
        refuse(400, str(exc))
    state.metrics.record_search(len(rows), (time.perf_counter() - start) * 1000)
    return rows


def ask_options(state: ServiceState, body: AskRequest) -> dict[str, Any]:
    """``ask``'s keyword arguments: the request's values, else the shared config's."""
    ctx = state.settings.context
    k = check_k(state, body.k or state.settings.retrieval.k)
    try:
        reranker = get_reranker(body.rerank)
    except ValueError as exc:
        refuse(400, str(exc))
    return {
        "k": k,
        "candidates": check_candidates(state, body.candidates),
        "reranker": reranker,
        "budget_tokens": body.budget or ctx.budget_tokens,
        "floor": body.floor if body.floor is not None else ctx.floor,
        "dedup_threshold": body.dedup or ctx.dedup_threshold,
        "order": body.order or ctx.order,
    }


@router.post("/ask", response_model=AskResponse)
def ask(body: AskRequest, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """Answer with a citation after every sentence, or abstain with the reason; the trace is stored."""
    check_text(state, body.question, "question")
    scope = scope_for(caller, body.scope)
    options = ask_options(state, body)
    corpus = state.corpus()
    try:
        generator = state.generator(body.generator)
        searcher = state.searcher(corpus, body.method or state.settings.retrieval.method)
        out, trace = answer(body.question, searcher, corpus.visible(scope), generator, scope, **options)
    except ValueError as exc:
        refuse(400, str(exc))
    except (ImportError, FileNotFoundError, RuntimeError) as exc:
        refuse(503, f"generator not available: {exc}")
    state.store.save_trace(trace.id, out, owner=caller.name, keep=state.service.trace_retention)
    state.metrics.record_ask(out, scope.day)
    return out
