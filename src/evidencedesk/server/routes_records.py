"""Look-ups: documents, chunks and traces. Anything outside the caller's scope is answered 404, exactly as
if it did not exist, so a look-up never reveals what a key may not see."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from evidencedesk.documents import Document
from evidencedesk.results.records import DocumentListing
from evidencedesk.server.access import current_chunk_ok, record_visible
from evidencedesk.server.deps import CallerDep, StateDep, refuse
from evidencedesk.server.models import ChunkOut, DocumentOut, DocumentSummary, TraceSummary

router = APIRouter(tags=["records"])


@router.get("/documents", response_model=list[DocumentSummary])
def list_documents(state: StateDep, caller: CallerDep) -> list[dict[str, object]]:
    """The documents inside the caller's scope, with their chunk counts."""
    counts = state.desk.chunk_counts()
    return [
        DocumentListing.of(doc, counts.get(doc.id, 0)).to_dict()
        for doc in state.document_headers()
        if caller.scope.allows(doc.metadata, doc.id)
    ]


def _document(state: StateDep, caller: CallerDep, doc_id: str) -> Document:
    doc = state.desk.document(doc_id)
    if doc is None or not caller.scope.allows(doc.metadata, doc.id):
        refuse(404, f"no document {doc_id!r}")
    return doc


@router.get("/documents/{doc_id:path}/chunks", response_model=list[ChunkOut])
def document_chunks(doc_id: str, state: StateDep, caller: CallerDep) -> list[dict[str, object]]:
    """One document's chunks in order (404 when the document is outside the scope)."""
    _document(state, caller, doc_id)
    return [c.to_dict() for c in state.desk.chunks(doc_id) if caller.scope.allows_chunk(c)]


@router.get("/documents/{doc_id:path}", response_model=DocumentOut)
def get_document(doc_id: str, state: StateDep, caller: CallerDep) -> dict[str, object]:
    """A whole document: text, metadata and sections."""
    return _document(state, caller, doc_id).to_dict()


@router.get("/chunks/{chunk_id:path}", response_model=ChunkOut)
def get_chunk(chunk_id: str, state: StateDep, caller: CallerDep) -> dict[str, object]:
    """One stored chunk: what a citation points to."""
    chunk = state.desk.chunk(chunk_id)
    if chunk is None or not caller.scope.allows_chunk(chunk):
        refuse(404, f"no chunk {chunk_id!r}")
    return chunk.to_dict()


def _trace_shown(state: StateDep, caller: CallerDep, data: dict[str, Any]) -> bool:
    """Made under a scope the caller's covers, and every chunk it names allowed by its current metadata."""
    return record_visible(caller.scope, data, current_chunk_ok(state.desk, caller.scope))


@router.get("/traces", response_model=list[TraceSummary])
def list_traces(
    state: StateDep, caller: CallerDep, limit: int = Query(20, ge=1, le=200, description="Most recent first.")
) -> list[dict[str, Any]]:
    """Recent traces the caller made (any key's with an admin key), each re-checked against today's
    metadata of the chunks it names. A caller without a key owns none."""
    if caller.anonymous:
        return []
    out = []
    for data in state.desk.traces(limit * 5, owner=caller.owner_filter):
        if _trace_shown(state, caller, data):
            out.append(
                {
                    "trace_id": data.get("trace_id", ""),
                    "query": data.get("query", ""),
                    "method": data.get("method", ""),
                    "answer": data.get("answer"),
                    "abstained": bool(data.get("abstained")),
                    "timings": data.get("timings") or {},
                }
            )
        if len(out) == limit:
            break
    return out


@router.get("/traces/{trace_id}")
def get_trace(trace_id: str, state: StateDep, caller: CallerDep) -> dict[str, Any]:
    """A stored trace in full (the object ``POST /ask`` returned), for the key that made it (or an admin key)."""
    data = None if caller.anonymous else state.desk.trace(trace_id, owner=caller.owner_filter)
    if data is None or not _trace_shown(state, caller, data):
        refuse(404, f"no trace {trace_id!r}")
    return data
