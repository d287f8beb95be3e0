"""Documents and Chunks as rows of the PostgreSQL tables (for binary COPY) and back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.documents import Chunk, Document
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS, chunk_from_columns, text_hash

# the same columns as the embedded store's tables; PostgreSQL types of those that are not text
_TYPES = {
    "build_id": "int8", "n": "int4", "first_line": "int4", "last_line": "int4", "valid_from": "date",
    "valid_to": "date", "metadata": "jsonb", "sections": "jsonb", "heading_path": "jsonb",
}  # fmt: skip
DOCUMENT_TYPES = tuple(_TYPES.get(c, "text") for c in DOCUMENT_COLUMNS)
CHUNK_TYPES = tuple(_TYPES.get(c, "text") for c in CHUNK_COLUMNS)
# the scope columns copied into chunk_terms and chunk_vectors
SCOPE_COLUMNS = ("doc_id", "status", "audience", "lang", "tenant", "valid_from", "valid_to")
SCOPE_TYPES = tuple(_TYPES.get(c, "text") for c in SCOPE_COLUMNS)


def document_row(doc: Document, chunking_hash: str, build_id: int | None) -> tuple[Any, ...]:
    m = doc.metadata
    return (
        doc.id, doc.path, doc.format, doc.title, doc.content_hash, chunking_hash, build_id, m.to_dict(),
        m.status, m.valid_from, m.valid_to, m.audience, m.lang, m.tenant,
        [s.to_dict() for s in doc.sections], doc.text, doc.first_line,
    )  # fmt: skip


def chunk_row(chunk: Chunk, n: int, meta: JsonObject | None = None) -> tuple[Any, ...]:
    """``meta``: ``chunk.metadata.to_dict()`` when the caller already has it (chunks share their document's)."""
    m, loc = chunk.metadata, chunk.location
    meta = meta if meta is not None else m.to_dict()
    return (
        chunk.id, chunk.doc_id, n, chunk.text, chunk.kind, loc.stored_heading(), loc.first_line, loc.last_line,
        chunk.parent_id, chunk.parent_text, meta, m.status, m.valid_from, m.valid_to, m.audience, m.lang,
        m.tenant, text_hash(chunk.text),
    )  # fmt: skip


def scope_values(chunk: Chunk) -> tuple[Any, ...]:
    m = chunk.metadata
    return chunk.doc_id, m.status, m.audience, m.lang, m.tenant, m.valid_from, m.valid_to


def document_from_record(r: Mapping[str, Any]) -> Document:
    """A documents row (metadata and sections as jsonb, decoded by the driver)."""
    return Document.from_dict(dict(r))


def chunk_from_record(r: Mapping[str, Any]) -> Chunk:
    """A chunk row joined with its document's title (``doc_title``) and path (``doc_path``)."""
    return chunk_from_columns(r, r["heading_path"], r["metadata"])


CHUNK_SELECT = (
    "SELECT c.id, c.doc_id, c.text, c.kind, c.heading_path, c.first_line, c.last_line, c.parent_id, c.parent_text,"
    " c.metadata, c.n, d.title AS doc_title, d.path AS doc_path FROM chunks c JOIN documents d ON d.id = c.doc_id"
)
