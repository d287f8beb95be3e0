"""The web lab's API: labelled questions, re-chunked searches with grades and the exact context, asks.

The lab re-chunks the stored documents in memory with the chunker and size picked (cached per
config), ranks with the method and k picked, marks each passage with its labelled grade, and shows
the delimited context a generator would receive. Every call runs inside the caller's scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any

from fastapi import APIRouter, Request

from evidencedesk import Label, Scope
from evidencedesk.constants import CHUNKERS, LEGS, METHODS, UNITS
from evidencedesk.desk import candidate_rows, hybrid_legs, leg_names, searcher_tokenizer, words_shared
from evidencedesk.results.ask import AskResult, JSONObject
from evidencedesk.server.access import Caller
from evidencedesk.server.asking import AskOrder, drain, start_ask
from evidencedesk.server.deps import CallerDep, StateDep, check_k, check_text, refuse, scope_for
from evidencedesk.server.labels import label_summary, visible_labels
from evidencedesk.server.models import LabAskRequest, LabOptions, LabQuestion, LabSearchRequest, LabSearchResponse
from evidencedesk.server.sse import event_stream, wants_events
from evidencedesk.server.state import Corpus, ServiceState

router = APIRouter(prefix="/lab", tags=["lab"])
MIN_SIZE = {"words": 10, "chars": 50}  # smaller lab chunks would only multiply the index, never teach anything


def _labels(state: ServiceState, scope: Scope) -> list[Label]:
    return visible_labels(state.labels(), state.each_document(), scope)


@router.get("/options", response_model=LabOptions)
def options(state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """What the lab's controls offer: chunkers, methods, and the scope values the caller may narrow to."""
    docs = [d for d in state.document_headers() if caller.scope.allows(d.metadata, d.id)]
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
        "legs": list(LEGS),
        "default_method": state.settings.retrieval.method,
        "default_legs": list(hybrid_legs(state.settings)),
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


@dataclass
class _Lab:
    """One lab request resolved: the query, its label, the scope, and where it runs (a re-chunked
    corpus with its searcher, or the stored chunks through the Desk when ``corpus`` is None)."""

    query: str
    label: Label | None
    scope: Scope
    corpus: Corpus | None
    searcher: Any


def _prepare(state: ServiceState, caller: Caller, body: LabSearchRequest) -> _Lab:
    scope = scope_for(caller, body.scope)
    check_k(state, body.k or state.settings.retrieval.k)
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
    if body.chunker is None:
        return _Lab(query, label, scope, None, state.desk.searcher(body.method, body.legs))
    corpus = state.corpus(body.chunker.to_chunking())
    method = body.method or state.settings.retrieval.method
    return _Lab(query, label, scope, corpus, state.corpus_searcher(corpus, method, body.legs))


def _allowed_count(state: ServiceState, lab: _Lab) -> int:
    """How many chunks the scope allows: counted per document for the stored chunks."""
    if lab.corpus is not None:
        return sum(lab.scope.allows_chunk(c) for c in lab.corpus.chunks)
    counts = state.desk.chunk_counts()
    return sum(counts.get(d.id, 0) for d in state.document_headers() if lab.scope.allows(d.metadata, d.id))


@router.post("/search", response_model=LabSearchResponse)
def lab_search(body: LabSearchRequest, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """Ranked passages with scores, shared words, grades and each leg's rank, plus the exact context."""
    body = state.with_defaults(body)
    lab = _prepare(state, caller, body)
    assert body.k is not None  # with_defaults filled it in
    if lab.corpus is None:
        results = state.desk.search(lab.query, body.k, body.method, lab.scope, body.legs)
    else:  # the same first stage (collapsing, diversity) over the re-chunked corpus
        results = state.desk.first_stage(over=lab.searcher).search(lab.query, body.k, lab.scope)
    rows = candidate_rows(results, lab.query, searcher_tokenizer(lab.searcher))
    for row, cand in zip(rows, results, strict=True):
        row["grade"] = lab.label.grade_of(cand.chunk) if lab.label else None
    preview = state.desk.lab.prompt_preview(lab.query, results)
    return {
        "query": lab.query,
        "label": label_summary(lab.label) if lab.label else None,
        "chunking": lab.corpus.chunking if lab.corpus is not None else None,
        "n_chunks": _allowed_count(state, lab),
        "legs": leg_names(lab.searcher),
        "results": rows,
        "context": preview.context.to_dict(),
        "prompt": preview.prompt,
    }


@dataclass(frozen=True)
class LabAnswer(AskResult):
    """The lab's answer: ``Desk.ask``'s result, each retrieved passage with the words it shares with the
    query, plus the labelled grade of each retrieved chunk (empty without a label) and the lab's chunking
    (None: the stored chunks)."""

    grades: Mapping[str, int] = field(default_factory=dict)
    chunking: JSONObject | None = None

    def to_dict(self) -> JSONObject:
        return {**super().to_dict(), "grades": dict(self.grades), "chunking": self.chunking}


@router.post("/ask")
def lab_ask(body: LabAskRequest, request: Request, state: StateDep, caller: CallerDep) -> Any:
    """Answer over the lab's chunks; with a labelled question the trace also carries its diagnosis
    (which reads the chunks inside the scope to find where the evidence is). Streamed as server-sent
    events (the answer growing, then the whole result) with ``"stream": true``."""
    body = state.with_defaults(body)
    lab = _prepare(state, caller, body)
    assert body.k is not None  # with_defaults filled it in
    k = body.k
    over = None
    if lab.corpus is not None:
        over = (lab.searcher, lab.corpus.chunks)

    options = {"label": lab.label, "over": over}
    asking = start_ask(state, caller, AskOrder(lab.query, lab.scope, body.generator, body.method, k, None, options))

    def complete(out: AskResult) -> AskResult:
        retrieved = tuple(
            replace(p, shared_words=tuple(words_shared(lab.query, p.text, lab.searcher))) for p in out.retrieved
        )
        grades: dict[str, int] = {}
        if lab.label is not None:
            ids = [p.chunk_id for p in out.retrieved]
            found = [lab.corpus.by_id[i] for i in ids] if lab.corpus is not None else state.store.chunks_by_id(ids)
            grades = {c.id: lab.label.grade_of(c) for c in found}
        chunking = lab.corpus.chunking if lab.corpus is not None else None
        fields = {f.name: getattr(out, f.name) for f in dataclass_fields(AskResult)}
        return LabAnswer(**{**fields, "retrieved": retrieved}, grades=grades, chunking=chunking)

    def done(out: AskResult) -> AskResult:
        return asking.finish(out, complete)

    if wants_events(request.headers.get("accept"), body.stream):
        return event_stream(asking.events, done)
    return done(drain(asking.events)).to_dict()
