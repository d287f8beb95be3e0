"""The PostgreSQL store's writes during an ingest run (the plan itself is ``store.ingest_plan``).

Changed documents arrive in batches and are written with COPY; a batch that fails is retried
document by document, each under its own SAVEPOINT, so one bad document is reported and the
others are stored. The caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres.writer import Writer
from evidencedesk.errors import IngestError
from evidencedesk.store.ingest_plan import Item, StoredVersion, fingerprint, now
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import IngestReport

BATCH_DOCUMENTS = 500
_UNSTORABLE = (psycopg.Error, UnicodeEncodeError)


class PgIngestWriter:
    """A ``DocumentWriter`` over the store's ``Writer`` (which also keeps the BM25 rows current)."""

    def __init__(self, writer: Writer, batch_size: int = BATCH_DOCUMENTS) -> None:
        self.writer = writer
        self.conn = writer.conn
        self.batch_size = batch_size

    def stored_versions(self) -> dict[str, StoredVersion]:
        rows = self.conn.execute("SELECT id, path, content_hash, title, metadata, chunking_hash FROM documents")
        return {r[0]: StoredVersion(r[1], fingerprint(r[2], r[3], r[4]), r[5]) for r in rows.fetchall()}

    def begin_build(self, chunking: JsonObject, chunking_hash: str) -> int:
        row = self.conn.execute(
            "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
            " VALUES (%s, %s, %s, 0, 0, '{}') RETURNING id",
            (now(), Jsonb(chunking), chunking_hash),
        ).fetchone()
        return int(row[0]) if row else 0

    def write(self, items: Sequence[Item], chunking_hash: str, build_id: int) -> list[IngestError]:
        try:
            with self.conn.transaction():  # a SAVEPOINT inside the run's transaction
                self.writer.replace(items, chunking_hash, build_id)
            return []
        except _UNSTORABLE:
            self.writer.vocab.forget()
        failed: list[IngestError] = []
        for item in items:
            try:
                with self.conn.transaction():
                    self.writer.replace([item], chunking_hash, build_id)
            except _UNSTORABLE as exc:  # e.g. a lone surrogate from a YAML escape, which UTF-8 cannot hold
                self.writer.vocab.forget()
                doc = item[0]
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                failed.append(IngestError(doc.path, f"cannot store document {doc.id}: {reason}"))
        return failed

    def move(self, moves: Sequence[tuple[str, str]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany("UPDATE documents SET path = %s WHERE id = %s", [(path, i) for i, path in moves])

    def remove(self, doc_ids: Sequence[str]) -> None:
        self.writer.delete(doc_ids)

    def totals(self) -> tuple[int, int]:
        row = self.conn.execute("SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks)").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def end_build(self, build_id: int, report: IngestReport) -> None:
        self.conn.execute(
            "UPDATE builds SET n_documents = %s, n_chunks = %s, report = %s WHERE id = %s",
            (report.n_documents, report.n_chunks, Jsonb(report.to_dict()), build_id),
        )


__all__ = ["BATCH_DOCUMENTS", "PgIngestWriter"]
