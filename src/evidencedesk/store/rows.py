"""Converting Documents and Chunks to table rows and back."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from evidencedesk.documents import Chunk, Document, Location, Metadata
from evidencedesk.store.json_data import JsonObject

DOCUMENT_COLUMNS = (
    "id", "path", "format", "title", "content_hash", "chunking_hash", "build_id", "metadata",
    "status", "valid_from", "valid_to", "audience", "lang", "tenant", "sections", "text", "first_line",
)  # fmt: skip
CHUNK_COLUMNS = (
    "id", "doc_id", "n", "text", "kind", "heading_path", "first_line", "last_line", "parent_id", "parent_text",
    "metadata", "status", "valid_from", "valid_to", "audience", "lang", "tenant", "text_hash",
)  # fmt: skip


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _meta_columns(meta: Metadata) -> tuple[Any, ...]:
    d = meta.to_dict()
    return d["status"], d["valid_from"], d["valid_to"], d["audience"], d["lang"], d["tenant"]


def text_hash(text: str) -> str:
    """sha256 of a chunk's text (UTF-8), hex: the key for caching anything computed from the text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_row(doc: Document, chunking_hash: str, build_id: int | None) -> tuple[Any, ...]:
    return (
        doc.id, doc.path, doc.format, doc.title, doc.content_hash, chunking_hash, build_id,
        _dumps(doc.metadata.to_dict()), *_meta_columns(doc.metadata),
        _dumps([s.to_dict() for s in doc.sections]), doc.text, doc.first_line,
    )  # fmt: skip


def chunk_row(chunk: Chunk, n: int, meta_cache: dict[int, tuple[Any, ...]] | None = None) -> tuple[Any, ...]:
    """The row of ``chunk`` at position ``n``; ``meta_cache`` reuses the metadata columns of chunks sharing
    one Metadata object (a chunker copies its document's)."""
    loc = chunk.location
    meta = meta_cache.get(id(chunk.metadata)) if meta_cache is not None else None
    if meta is None:
        meta = (_dumps(chunk.metadata.to_dict()), *_meta_columns(chunk.metadata))
        if meta_cache is not None:
            meta_cache[id(chunk.metadata)] = meta
    return (
        chunk.id, chunk.doc_id, n, chunk.text, chunk.kind, _dumps(loc.stored_heading()), loc.first_line,
        loc.last_line, chunk.parent_id, chunk.parent_text, *meta, text_hash(chunk.text),
    )  # fmt: skip


def document_from_row(row: sqlite3.Row) -> Document:
    """A documents row (metadata and sections as JSON text)."""
    decoded = {"metadata": json.loads(row["metadata"]), "sections": json.loads(row["sections"])}
    return Document.from_dict({**dict(row), **decoded})


def chunk_from_row(row: sqlite3.Row) -> Chunk:
    """A chunk row joined with its document's ``title`` (as doc_title) and ``path`` (as doc_path)."""
    return chunk_from_columns(row, json.loads(row["heading_path"]), json.loads(row["metadata"]))


def chunk_from_columns(r: Any, heading_path: Any, metadata: JsonObject) -> Chunk:
    """A chunk from the columns both stores keep (``CHUNK_COLUMNS`` with the document's ``doc_title`` and
    ``doc_path``), given its heading path and metadata already decoded (each store encodes them its way)."""
    return Chunk(
        id=r["id"],
        doc_id=r["doc_id"],
        text=r["text"],
        kind=r["kind"],
        location=Location.from_stored(heading_path, r["first_line"], r["last_line"]),
        metadata=Metadata.from_dict(metadata),
        title=r["doc_title"],
        source=r["doc_path"],
        parent_id=r["parent_id"],
        parent_text=r["parent_text"],
    )


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
