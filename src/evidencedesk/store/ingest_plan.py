"""Incremental ingest, once for every backend: which documents are added, updated, unchanged or removed.

A document is unchanged when its fingerprint (content hash, title and metadata) and the chunking
it was stored with both match what is stored; then only a moved path is recorded. Ids are scoped
by tenant (``documents.stored_id``): a document whose tenant changed is a new document (added) and
its old version is removed, or kept with ``remove_missing`` off, never overwritten. Anything else
is re-chunked and written (added or updated). Documents stored before but not seen in this run
are removed, unless ``remove_missing`` is off or their file failed this time: then the stored
version stays and the report says so (``failed[i]["kept"]``).

The algorithm talks to the database only through a backend's ``DocumentWriter``, inside the
transaction the backend opened; a run that dies part way leaves the previous content as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document, stored_id, tenant_scoped
from evidencedesk.errors import IngestError
from evidencedesk.store.contract import Chunker, Progress
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import FailedFile, IngestReport

Item = tuple[Document, Sequence[Chunk]]
"""A document with exactly the chunks to store for it."""


def now() -> str:
    """The time stamp stored with builds, traces and evaluation runs (UTC, ISO 8601, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def fingerprint(content_hash: str, title: str, metadata: Mapping[str, Any]) -> str:
    """What decides that a stored document is unchanged: its content hash, title and metadata."""
    payload = json.dumps([content_hash, title, metadata], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def document_fingerprint(doc: Document) -> str:
    return fingerprint(doc.content_hash, doc.title, doc.metadata.to_dict())


@dataclass(frozen=True)
class StoredVersion:
    """What the store holds of one document, as far as the ingest plan needs it."""

    path: str
    fingerprint: str
    chunking_hash: str


class DocumentWriter(Protocol):
    """One backend's writes inside its open ingest transaction."""

    batch_size: int
    """How many changed documents the plan hands to ``write`` at once."""

    def stored_versions(self) -> dict[str, StoredVersion]:
        """Every stored document by id."""
        ...

    def begin_build(self, chunking: JsonObject, chunking_hash: str) -> int:
        """Record a new build (filled in by ``end_build``) and return its id."""
        ...

    def write(self, items: Sequence[Item], chunking_hash: str, build_id: int) -> list[IngestError]:
        """Store each document with exactly its chunks, replacing a stored version.

        A document that cannot be stored leaves nothing behind and comes back as an IngestError;
        the others are stored.
        """
        ...

    def move(self, moves: Sequence[tuple[str, str]]) -> None:
        """Record new paths for unchanged documents: ``(doc_id, path)`` pairs."""
        ...

    def remove(self, doc_ids: Sequence[str]) -> None:
        """Delete these documents with their chunks."""
        ...

    def totals(self) -> tuple[int, int]:
        """``(documents, chunks)`` in the store now."""
        ...

    def end_build(self, build_id: int, report: IngestReport) -> None:
        """Record the finished report (and the store's size) in the build."""
        ...


class IngestRun:
    """Feed it documents (or ingest errors), then ``finish``; every write goes through ``writer``."""

    def __init__(self, writer: DocumentWriter, config: ChunkingConfig, chunker: Chunker) -> None:
        if writer.batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {writer.batch_size}")
        self.writer = writer
        self.config = config
        self.config_hash = config.hash()
        self.chunker = chunker
        self.report = IngestReport(chunking={**config.to_dict(), "hash": self.config_hash})
        self.stored = writer.stored_versions()
        self.seen: dict[str, str] = {}  # doc id -> path, stored or confirmed unchanged in this run
        self.pending: list[Item] = []
        self.pending_paths: dict[str, str] = {}
        self.moved: list[tuple[str, str]] = []  # (id, new path) of unchanged documents
        self.failures: list[IngestError] = []
        self.supersedes: dict[str, tuple[str, str, str]] = {}  # doc id -> (path, supersedes as written, stored id)
        self.build_id = writer.begin_build(config.to_dict(), self.config_hash)
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
        self._flush()

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
        doc = tenant_scoped(doc)  # a document handed in directly, not parsed from a file, is scoped too
        earlier = self.seen.get(doc.id) or self.pending_paths.get(doc.id)
        if earlier is not None:
            raise IngestError.duplicate_id(doc.path, doc.id, earlier)
        named = doc.metadata.supersedes
        if named:
            self.supersedes[doc.id] = (doc.path, named, stored_id(named, doc.metadata.tenant))
        prev = self.stored.get(doc.id)
        same = prev is not None and prev.fingerprint == document_fingerprint(doc)
        if prev is not None and same and prev.chunking_hash == self.config_hash:
            self.seen[doc.id] = doc.path
            if prev.path != doc.path:
                self.moved.append((doc.id, doc.path))
            self.report.unchanged.append(doc.id)
            return
        self.pending.append((doc, self._chunks(doc)))
        self.pending_paths[doc.id] = doc.path
        if len(self.pending) >= self.writer.batch_size:
            self._flush()

    def _flush(self) -> None:
        items, self.pending, self.pending_paths = self.pending, [], {}
        if not items:
            return
        failed = self.writer.write(items, self.config_hash, self.build_id)
        self.failures.extend(failed)
        failed_paths = {f.path for f in failed}
        for doc, _ in items:
            if doc.path in failed_paths:
                continue
            self.seen[doc.id] = doc.path
            (self.report.updated if doc.id in self.stored else self.report.added).append(doc.id)

    def finish(self, *, remove_missing: bool, skipped: Iterable[str] = ()) -> IngestReport:
        self._flush()
        if self.moved:
            self.writer.move(self.moved)
        failed_paths = {f.path for f in self.failures}
        kept: dict[str, str] = {}  # path -> id of the stored version that stays
        gone: list[str] = []
        for doc_id, version in self.stored.items():
            if doc_id in self.seen:
                continue
            if version.path in failed_paths:
                kept[version.path] = doc_id
            elif remove_missing:
                gone.append(doc_id)
        if gone:
            self.writer.remove(gone)
        self.report.removed.extend(gone)
        present = (set(self.stored) - set(gone)) | set(self.seen)
        self.report.unknown_supersedes = [
            {"path": path, "doc_id": doc_id, "supersedes": named}
            for doc_id, (path, named, target) in self.supersedes.items()
            if doc_id in self.seen and target not in present
        ]
        self.report.failed = [FailedFile(path=f.path, reason=f.reason, kept=kept.get(f.path)) for f in self.failures]
        self.report.skipped = list(skipped)
        self.report.n_documents, self.report.n_chunks = self.writer.totals()
        self.writer.end_build(self.build_id, self.report)
        return self.report


__all__ = [
    "DocumentWriter",
    "IngestRun",
    "Item",
    "StoredVersion",
    "document_fingerprint",
    "fingerprint",
    "now",
]
