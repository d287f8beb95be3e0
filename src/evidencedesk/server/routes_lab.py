"""The web lab's API: labelled questions, re-chunked searches with grades and the exact context, asks.

The lab re-chunks the stored documents in memory with the chunker and size picked (cached per
config), ranks with the method and k picked, marks each passage with its labelled grade, and shows
the delimited context a generator would receive. Every call runs inside the caller's scope.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from evidencedesk.answer.context import assemble
from evidencedesk.answer.prompt import build_prompt, prompt_text
from evidencedesk.chunking.config import CHUNKERS, UNITS
from evidencedesk.evaluation.labels import Label
from evidencedesk.retrieval.explain import shared_words
from evidencedesk.retrieval.factory import METHODS
from evidencedesk.retrieval.scope import Scope
from evidencedesk.server.access import Caller
from evidencedesk.server.deps import CallerDep, StateDep, check_k, check_text, refuse, scope_for
from evidencedesk.server.labels import label_summary, visible_labels
from evidencedesk.server.models import LabAskRequest, LabOptions, LabQuestion, LabSearchRequest, LabSearchResponse
from evidencedesk.server.state import Corpus, ServiceState
from evidencedesk.service_ops import answer, candidate_rows, leg_names, searcher_tokenizer

router = APIRouter(prefix="/lab", tags=["lab"])
MIN_SIZE = {"words": 10, "chars": 50}  # smaller lab chunks would only multiply the index, never teach anything


def _labels(state: ServiceState, scope: Scope) -> list[Label]:
    return visible_labels(state.labels(), state.documents(), scope)


@router.get("/options", response_model=LabOptions)
def options(state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """What the lab's controls offer: chunkers, methods, and the scope values the caller may narrow to."""
    docs = [d for d in state.documents() if caller.scope.allows(d.metadata, d.id)]
    values = {
        "statuses": sorted({d.metadata.status for d in docs}),
        "audiences": sorted({d.metadata.audience for d in docs}),
        "langs": sorted({d.metadata.lang for d in docs}),
        "tenants": sorted({d.metadata.tenant for d in docs}),
    }
    build = state.store.latest_build()
    return {
        "chunkers": list(CHUNKERS),
        "units": list(UNITS),
        "methods": list(METHODS),
        "legs": [m for m in METHODS if m != "hybrid"],
        "default_chunking": build.chunking if build else None,
        "scope": caller.scope.to_dict(),
        "values": values,
        "caller": caller.name,
        "generators": list(state.service.generators),
    }


@router.get("/questions", response_model=list[LabQuestion])
def questions(state: StateDep, caller: CallerDep) -> list[dict[str, Any]]:
    """The labelled questions the caller may use (never their gold phrases or expected answers)."""
    return [label_summary(x) for x in _labels(state, caller.scope)]


def _prepare(
    state: ServiceState, caller: Caller, body: LabSearchRequest
) -> tuple[str, Label | None, Scope, Corpus, Any]:
    scope = scope_for(caller, body.scope)
    check_k(state, body.k)
    labels = {x.id: x for x in _labels(state, scope)}
    label = None
    if body.question_id is not None:
        label = labels.get(body.question_id)
        if label is None:
            refuse(404, f"no labelled question {body.question_id!r}")
    query = body.query if body.query and body.query.strip() else label.question if label else ""
    check_text(state, query, "query")
    if label is None:
        label = next((x for x in labels.values() if x.question.strip() == query.strip()), None)
    if body.chunker is not None and caller.anonymous and not state.service.anonymous_lab:
        refuse(403, "re-chunking in the lab needs an API key (anonymous_lab is off)")
    if body.chunker is not None and body.chunker.size < MIN_SIZE[body.chunker.unit]:
        refuse(400, f"chunker size: at least {MIN_SIZE[body.chunker.unit]} {body.chunker.unit} in the lab")
    try:
        corpus = state.corpus(body.chunker.to_chunking() if body.chunker else None)
        searcher = state.searcher(corpus, body.method, body.legs)
    except ValueError as exc:
        refuse(400, str(exc))
    return query, label, scope, corpus, searcher


@router.post("/search", response_model=LabSearchResponse)
def lab_search(body: LabSearchRequest, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """Ranked passages with scores, shared words, grades and each leg's rank, plus the exact context."""
    body = state.with_defaults(body)
    query, label, scope, corpus, searcher = _prepare(state, caller, body)
    try:
        results = searcher.search(query, body.k, scope)
    except ValueError as exc:
        refuse(400, str(exc))
    rows = candidate_rows(results, query, searcher_tokenizer(searcher))
    for row, cand in zip(rows, results, strict=True):
        row["grade"] = label.grade_of(cand.chunk) if label else None
    ctx = state.settings.context
    assembled = assemble(results, ctx.budget_tokens, ctx.floor, ctx.dedup_threshold, ctx.order)
    return {
        "query": query,
        "label": label_summary(label) if label else None,
        "chunking": corpus.chunking,
        "n_chunks": sum(scope.allows_chunk(c) for c in corpus.chunks),
        "legs": leg_names(searcher),
        "results": rows,
        "context": assembled.to_dict(),
        "prompt": prompt_text(build_prompt(query, assembled)),
    }


@router.post("/ask")
def lab_ask(body: LabAskRequest, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """Answer over the lab's chunks; with a labelled question the trace also carries its diagnosis."""
    body = state.with_defaults(body)
    query, label, scope, corpus, searcher = _prepare(state, caller, body)
    ctx = state.settings.context
    try:
        generator = state.generator(body.generator)
        out, trace = answer(
            query, searcher, corpus.visible(scope), generator, scope, k=body.k, candidates=max(20, body.k),
            budget_tokens=ctx.budget_tokens, floor=ctx.floor, dedup_threshold=ctx.dedup_threshold, order=ctx.order,
            label=label,
        )  # fmt: skip
    except ValueError as exc:
        refuse(400, str(exc))
    except (ImportError, FileNotFoundError, RuntimeError) as exc:
        refuse(503, f"generator not available: {exc}")
    tokenizer = searcher_tokenizer(searcher)
    for row in out["retrieved"]:
        row["shared_words"] = shared_words(query, row["text"], tokenizer)
    grades = {c["chunk_id"]: label.grade_of(corpus.by_id[c["chunk_id"]]) for c in out["retrieved"]} if label else {}
    out["grades"] = grades
    out["chunking"] = corpus.chunking
    state.store.save_trace(trace.id, out, owner=caller.name, keep=state.service.trace_retention)
    return out
