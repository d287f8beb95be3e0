"""The embedded store's writes during an ingest run, inside the transaction the store opened.

Each document is written under its own SAVEPOINT, so a document that fails while being written
(e.g. a lone surrogate from a YAML escape) leaves nothing behind and the others are stored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from evidencedesk.errors import IngestError
from evidencedesk.store.ingest_plan import Item, StoredVersion, fingerprint, now
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import IngestReport
from evidencedesk.store.rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS, chunk_row, document_row, insert_sql

_INSERT_DOC = insert_sql("documents", DOCUMENT_COLUMNS)
_INSERT_CHUNK = insert_sql("chunks", CHUNK_COLUMNS)


class SqliteWriter:
    """A ``DocumentWriter`` on an open SQLite connection."""

    batch_size = 500

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def stored_versions(self) -> dict[str, StoredVersion]:
        rows = self.conn.execute("SELECT id, path, content_hash, title, metadata, chunking_hash FROM documents")
        return {r[0]: StoredVersion(r[1], fingerprint(r[2], r[3], json.loads(r[4])), r[5]) for r in rows}

    def begin_build(self, chunking: JsonObject, chunking_hash: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
            " VALUES (?, ?, ?, 0, 0, '{}')",
            (now(), json.dumps(chunking), chunking_hash),
        )
        return int(cur.lastrowid or 0)

    def write(self, items: Sequence[Item], chunking_hash: str, build_id: int) -> list[IngestError]:
        failed: list[IngestError] = []
        for doc, chunks in items:
            self.conn.execute("SAVEPOINT doc")
            try:
                self.conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc.id,))
                self.conn.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
                self.conn.execute(_INSERT_DOC, document_row(doc, chunking_hash, build_id))
                cache: dict[int, tuple[Any, ...]] = {}
                self.conn.executemany(_INSERT_CHUNK, [chunk_row(c, n, cache) for n, c in enumerate(chunks)])
            except (sqlite3.IntegrityError, UnicodeEncodeError) as exc:
                self.conn.execute("ROLLBACK TO doc")
                failed.append(IngestError(doc.path, f"cannot store document {doc.id}: {exc}"))
            self.conn.execute("RELEASE doc")
        return failed

    def move(self, moves: Sequence[tuple[str, str]]) -> None:
        self.conn.executemany("UPDATE documents SET path = ? WHERE id = ?", [(path, i) for i, path in moves])

    def remove(self, doc_ids: Sequence[str]) -> None:
        ids = [(i,) for i in doc_ids]
        self.conn.executemany("DELETE FROM chunks WHERE doc_id = ?", ids)
        self.conn.executemany("DELETE FROM documents WHERE id = ?", ids)

    def totals(self) -> tuple[int, int]:
        row = self.conn.execute("SELECT (SELECT COUNT(*) FROM documents), (SELECT COUNT(*) FROM chunks)").fetchone()
        return int(row[0]), int(row[1])

    def end_build(self, build_id: int, report: IngestReport) -> None:
        self.conn.execute(
            "UPDATE builds SET n_documents = ?, n_chunks = ?, report = ? WHERE id = ?",
            (report.n_documents, report.n_chunks, json.dumps(report.to_dict()), build_id),
        )


__all__ = ["SqliteWriter"]
