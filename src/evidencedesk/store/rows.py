"""Converting Documents and Chunks to table rows and back."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from evidencedesk.documents import Chunk, Document, Location, Metadata, Section

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
    return Document(
        id=row["id"],
        title=row["title"],
        path=row["path"],
        format=row["format"],
        text=row["text"],
        content_hash=row["content_hash"],
        metadata=Metadata.from_dict(json.loads(row["metadata"])),
        sections=tuple(Section.from_dict(s) for s in json.loads(row["sections"])),
        first_line=row["first_line"],
    )


def chunk_from_row(row: sqlite3.Row) -> Chunk:
    """A chunk row joined with its document's ``title`` (as doc_title) and ``path`` (as doc_path)."""
    return Chunk(
        id=row["id"],
        doc_id=row["doc_id"],
        text=row["text"],
        kind=row["kind"],
        location=Location.from_stored(json.loads(row["heading_path"]), row["first_line"], row["last_line"]),
        metadata=Metadata.from_dict(json.loads(row["metadata"])),
        title=row["doc_title"],
        source=row["doc_path"],
        parent_id=row["parent_id"],
        parent_text=row["parent_text"],
    )


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
