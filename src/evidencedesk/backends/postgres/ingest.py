"""One ingest run against the PostgreSQL store, with the embedded store's semantics.

Unchanged documents (same content hash and chunking) are skipped, changed ones are replaced with
their new chunks, documents no longer present are deleted (unless their file failed this time, in
which case the stored version is kept), and a build row records the report. Documents are written
in batches with COPY; a batch that fails is retried document by document, each under its own
SAVEPOINT, so one bad document is reported and the others are stored. The caller owns the
transaction: a run that dies part way leaves the previous content as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import psycopg
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres.writer import Item, Writer
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import duplicate_id
from evidencedesk.store.apply import Chunker, Progress
from evidencedesk.store.records import IngestReport

BATCH_DOCUMENTS = 500


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PgRun:
    """Feed it documents (or ingest errors), then ``finish``; every write goes through ``writer``."""

    def __init__(self, writer: Writer, config: ChunkingConfig, chunker: Chunker, batch: int = BATCH_DOCUMENTS) -> None:
        if batch < 1:
            raise ValueError(f"batch: must be at least 1, got {batch}")
        self.writer = writer
        self.conn = writer.conn
        self.config = config
        self.config_hash = config.hash()
        self.chunker = chunker
        self.batch = batch
        self.report = IngestReport(chunking={**config.to_dict(), "hash": self.config_hash})
        rows = self.conn.execute("SELECT id, path, content_hash, chunking_hash FROM documents").fetchall()
        self.stored = {r[0]: (r[1], r[2], r[3]) for r in rows}
        self.seen: dict[str, str] = {}  # doc id -> path, stored or confirmed unchanged in this run
        self.pending: list[Item] = []
        self.pending_paths: dict[str, str] = {}
        self.moved: list[tuple[str, str]] = []  # (path, id) of unchanged documents whose path changed
        self.failures: list[IngestError] = []
        row = self.conn.execute(
            "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
            " VALUES (%s, %s, %s, 0, 0, '{}') RETURNING id",
            (now(), Jsonb(config.to_dict()), self.config_hash),
        ).fetchone()
        self.build_id = int(row[0]) if row else 0
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
        self.flush()

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
        earlier = self.seen.get(doc.id) or self.pending_paths.get(doc.id)
        if earlier is not None:
            raise duplicate_id(doc, earlier)
        prev = self.stored.get(doc.id)
        if prev is not None and prev[1] == doc.content_hash and prev[2] == self.config_hash:
            self.seen[doc.id] = doc.path
            if prev[0] != doc.path:
                self.moved.append((doc.path, doc.id))
            self.report.unchanged.append(doc.id)
            return
        chunks = self._chunks(doc)
        self.pending.append((doc, chunks))
        self.pending_paths[doc.id] = doc.path
        if len(self.pending) >= self.batch:
            self.flush()

    def flush(self) -> None:
        items, self.pending, self.pending_paths = self.pending, [], {}
        if not items:
            return
        try:
            with self.conn.transaction():  # a SAVEPOINT inside the run's transaction
                self.writer.replace(items, self.config_hash, self.build_id)
            self._stored(items)
        except psycopg.Error:
            self.writer.vocab.forget()
            for item in items:
                try:
                    with self.conn.transaction():
                        self.writer.replace([item], self.config_hash, self.build_id)
                except psycopg.Error as exc:
                    self.writer.vocab.forget()
                    doc = item[0]
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    self.failures.append(IngestError(doc.path, f"cannot store document {doc.id}: {reason}"))
                else:
                    self._stored([item])

    def _stored(self, items: list[Item]) -> None:
        for doc, _ in items:
            self.seen[doc.id] = doc.path
            (self.report.updated if doc.id in self.stored else self.report.added).append(doc.id)

    def finish(self, *, remove_missing: bool, skipped: Iterable[str] = ()) -> IngestReport:
        self.flush()
        if self.moved:
            with self.conn.cursor() as cur:
                cur.executemany("UPDATE documents SET path = %s WHERE id = %s", self.moved)
        failed_paths = {f.path for f in self.failures}
        kept: dict[str, str] = {}
        gone: list[str] = []
        for doc_id, (path, _, _) in self.stored.items():
            if doc_id in self.seen:
                continue
            if path in failed_paths:
                kept[path] = doc_id
            elif remove_missing:
                gone.append(doc_id)
        self.writer.delete(gone)
        self.report.removed.extend(gone)
        self.report.failed = [{**f.to_dict(), "kept": kept.get(f.path)} for f in self.failures]
        self.report.skipped = list(skipped)
        counts = self.conn.execute("SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks)").fetchone()
        self.report.n_documents, self.report.n_chunks = (int(counts[0]), int(counts[1])) if counts else (0, 0)
        self.conn.execute(
            "UPDATE builds SET n_documents = %s, n_chunks = %s, report = %s WHERE id = %s",
            (self.report.n_documents, self.report.n_chunks, Jsonb(self.report.to_dict()), self.build_id),
        )
        return self.report
