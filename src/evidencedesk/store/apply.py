"""Applying one ingest run to the database: diff against what is stored, re-chunk what changed, record a build.

The caller owns the transaction; this module only reads and writes inside it. Each document is
written under its own SAVEPOINT, so a document that fails while being written leaves nothing behind.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import duplicate_id
from evidencedesk.store.contract import Chunker, Progress
from evidencedesk.store.records import IngestReport
from evidencedesk.store.rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS, chunk_row, document_row, insert_sql

_INSERT_DOC = insert_sql("documents", DOCUMENT_COLUMNS)
_INSERT_CHUNK = insert_sql("chunks", CHUNK_COLUMNS)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Run:
    """One ingest run inside an open transaction."""

    def __init__(self, conn: sqlite3.Connection, config: ChunkingConfig, chunker: Chunker) -> None:
        self.conn = conn
        self.config = config
        self.config_hash = config.hash()
        self.chunker = chunker
        self.report = IngestReport(chunking={**config.to_dict(), "hash": self.config_hash})
        self.stored = {
            row[0]: (row[1], row[2], row[3])
            for row in conn.execute("SELECT id, path, content_hash, chunking_hash FROM documents")
        }
        self.seen: dict[str, str] = {}  # doc id -> path, for this run
        self.failures: list[IngestError] = []
        cur = conn.execute(
            "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
            " VALUES (?, ?, ?, 0, 0, '{}')",
            (now(), json.dumps(config.to_dict()), self.config_hash),
        )
        self.build_id = int(cur.lastrowid or 0)
        self.report.build_id = self.build_id

    def feed(self, items: Iterable[Document | IngestError], total: int = 0, progress: Progress | None = None) -> None:
        for i, item in enumerate(items, start=1):
            if isinstance(item, IngestError):
                self.failures.append(item)
            else:
                try:
                    self._document(item)
                except IngestError as exc:
                    self.failures.append(exc)
            if progress is not None:
                progress(i, total, item.path)

    def _chunks(self, doc: Document) -> list[Chunk]:
        try:
            chunks = self.chunker(doc, self.config)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise IngestError(doc.path, f"chunking failed: {exc}") from None
        wrong = next((c.id for c in chunks if c.doc_id != doc.id), None)
        if wrong is not None:
            raise IngestError(doc.path, f"chunking failed: chunk {wrong} does not belong to document {doc.id}")
        return chunks

    def _document(self, doc: Document) -> None:
        if doc.id in self.seen:
            raise duplicate_id(doc, self.seen[doc.id])
        prev = self.stored.get(doc.id)
        if prev is not None and prev[1] == doc.content_hash and prev[2] == self.config_hash:
            self.seen[doc.id] = doc.path
            if prev[0] != doc.path:
                self.conn.execute("UPDATE documents SET path = ? WHERE id = ?", (doc.path, doc.id))
            self.report.unchanged.append(doc.id)
            return
        chunks = self._chunks(doc)
        self.conn.execute("SAVEPOINT doc")
        try:
            self.conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc.id,))
            self.conn.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
            self.conn.execute(_INSERT_DOC, document_row(doc, self.config_hash, self.build_id))
            cache: dict[int, tuple[Any, ...]] = {}
            self.conn.executemany(_INSERT_CHUNK, [chunk_row(c, n, cache) for n, c in enumerate(chunks)])
        except (sqlite3.IntegrityError, UnicodeEncodeError) as exc:  # e.g. a lone surrogate from a YAML escape
            self.conn.execute("ROLLBACK TO doc")
            self.conn.execute("RELEASE doc")
            raise IngestError(doc.path, f"cannot store document {doc.id}: {exc}") from None
        self.conn.execute("RELEASE doc")
        self.seen[doc.id] = doc.path
        (self.report.updated if prev is not None else self.report.added).append(doc.id)

    def finish(self, *, remove_missing: bool, skipped: Iterable[str] = ()) -> IngestReport:
        failed_paths = {f.path for f in self.failures}
        kept: dict[str, str] = {}  # path -> id of the stored version that stays
        for doc_id, (path, _, _) in self.stored.items():
            if doc_id in self.seen:
                continue
            if path in failed_paths:
                kept[path] = doc_id
            elif remove_missing:
                self.conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                self.conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
                self.report.removed.append(doc_id)
        self.report.failed = [{**f.to_dict(), "kept": kept.get(f.path)} for f in self.failures]
        self.report.skipped = list(skipped)
        self.report.n_documents = self.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        self.report.n_chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        self.conn.execute(
            "UPDATE builds SET n_documents = ?, n_chunks = ?, report = ? WHERE id = ?",
            (self.report.n_documents, self.report.n_chunks, json.dumps(self.report.to_dict()), self.build_id),
        )
        return self.report
