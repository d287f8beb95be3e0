"""The storage contract: what every store offers, in two halves, and what only some stores can do.

A store is two things at once, and the contract says each apart:

- ``DocumentStore``: documents, their chunks and one build per ingest run, written all-or-nothing
  by ``sync`` (what search, answering and snapshots read). A store never reads files: parsing a
  folder belongs to the ingest stage, which hands the store parsed documents
  (``evidencedesk.ingest.sync.ingest_folder``);
- ``RecordStore``: traces and evaluation runs, each with the API key that made it (its owner); a
  read for one key returns only that key's (what the service and the evaluation gate keep).

``StoreProtocol`` is both together. The embedded ``Store`` (SQLite in a folder) and ``PgStore``
(PostgreSQL with pgvector) implement it. The core is typed against these protocols, never against
a backend class (against ``RecordStore`` where it keeps or reads records alone), so a third backend
needs only to implement them.

Optional capabilities are small separate protocols, checked with ``isinstance`` where the core
must choose a path:

- ``SearchesInside``: the store ranks chunks itself (BM25 and dense inside PostgreSQL), so no
  chunk is loaded into memory to search;
- ``HoldsVectors``: the store keeps one embedding per chunk and can be asked to complete them;
- ``HoldsSnapshots``: the store lives in a folder where a memory-mapped snapshot of its indexes
  can be written and reopened (see ``retrieval.snapshot``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, Self, TypedDict, runtime_checkable

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import IngestError
from evidencedesk.progress import Meter
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import Build, IngestReport

if TYPE_CHECKING:
    from evidencedesk.index.embedders import Embedder
    from evidencedesk.retrieval.candidates import Searcher

Chunker = Callable[[Document, ChunkingConfig], list[Chunk]]
"""Turns one document into its chunks under a chunking config (``chunking.chunk_document``)."""


class VectorModel(TypedDict):
    """Which vectors a store holds: the embedding model's name, its dimension, and whether each chunk was
    embedded with its context line (``contextual``, absent in a store written before it existed)."""

    model: str
    dim: int
    contextual: NotRequired[bool]


Progress = Callable[[int, int, str], None]
"""Called after each document or failure of a sync with ``(done, total, path)``."""


class DocumentStore(Protocol):
    """Documents, their chunks and one build per ingest run.

    Writes are all-or-nothing: an ingest that fails part way leaves the previous build readable.
    Chunk listings are ordered by document id, then position in the document.
    """

    # -- lifecycle
    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    # -- writes
    def sync(
        self,
        documents: Iterable[Document | IngestError],
        config: ChunkingConfig,
        *,
        failures: Iterable[IngestError] = (),
        remove_missing: bool = True,
        skipped: Iterable[str] = (),
        meter: Meter | None = None,
    ) -> IngestReport:
        """Store ``documents`` as one build: what changed is chunked and written, all or nothing.

        The documents are read once, inside the write, so a source that raises leaves the previous build
        as it was. Reading a folder is ``evidencedesk.ingest.sync.ingest_folder``, over this.

        Args:
            documents: Parsed documents; an ``IngestError`` among them (a file that could not be parsed)
                is reported at its place, and a stored version of its path is kept.
            config: The chunking every changed document is cut with.
            failures: More failures, reported after the documents.
            remove_missing: Remove the stored documents not given.
            skipped: Paths reported as skipped (files no parser handles).
            meter: Follows each item with its path; its summary becomes the report's ``progress["files"]``.

        Returns:
            The build's report (added, updated, unchanged, removed, failed, skipped, the store's size).
        """
        ...

    # -- documents and chunks
    def documents(self) -> list[Document]: ...

    def document_headers(self) -> list[Document]:
        """Every document without its text and sections (``text`` empty), ordered by id."""
        ...

    def document(self, doc_id: str) -> Document | None: ...

    def chunks(self, doc_id: str | None = None) -> list[Chunk]: ...

    def iter_chunks(self, batch: int = 5000) -> Iterator[list[Chunk]]:
        """Every chunk in ``chunks()`` order, ``batch`` at a time."""
        ...

    def chunk(self, chunk_id: str) -> Chunk | None: ...

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (ids not stored are left out)."""
        ...

    def chunk_ids(self) -> list[str]: ...

    def chunk_count(self) -> int: ...

    def chunk_counts(self) -> dict[str, int]: ...

    def tenants(self) -> list[str]: ...

    # -- builds
    def builds(self) -> list[Build]: ...

    def latest_build(self) -> Build | None: ...

    def latest_build_id(self) -> int | None:
        """The latest build's id alone (one cheap query; a search checks it on every call)."""
        ...


class RecordStore(Protocol):
    """Traces (what a search or an answer saw, stage by stage) and evaluation runs.

    ``owner`` names the API key that made a record (None: made outside the service); with an owner,
    a read returns only that key's records. ``keep`` bounds how many traces are kept, the newest.
    An evaluation run saved without a ``build_id`` is tied to the store's latest build.
    """

    def save_trace(
        self, trace_id: str, data: Mapping[str, object], owner: str | None = None, keep: int | None = ...
    ) -> None: ...

    def load_trace(self, trace_id: str, owner: str | None = None) -> JsonObject | None: ...

    def traces(self, limit: int = 50, owner: str | None = None) -> list[JsonObject]: ...

    def save_eval_run(self, data: Mapping[str, object], owner: str | None = None) -> int: ...

    def load_eval_run(self, run_id: int, owner: str | None = None) -> JsonObject | None: ...

    def eval_runs(self, owner: str | None = None) -> list[JsonObject]: ...


class StoreProtocol(DocumentStore, RecordStore, Protocol):
    """A system of record: documents, chunks and builds (``DocumentStore``) with traces and evaluation
    runs (``RecordStore``), as both backends implement it."""


@runtime_checkable
class SearchesInside(Protocol):
    """A store that searches its own chunks (``bm25`` and ``dense`` run inside the database)."""

    def searcher(self, method: str, **params: Any) -> Searcher:
        """A searcher of ``method`` (bm25, dense, tfidf, lsa, hybrid) over this store."""
        ...


@runtime_checkable
class HoldsVectors(Protocol):
    """A store that keeps one embedding per chunk, from one model at a time."""

    def ensure_vectors(
        self,
        embedder: Embedder,
        cache_path: str | Path | None = None,
        batch_size: int = 32,
        contextual: bool = False,
    ) -> int:
        """Embed every chunk that has no vector of ``embedder``'s model (of its text after its context line
        when ``contextual``); returns how many were embedded."""
        ...

    def vector_model(self) -> VectorModel | None:
        """The model, dimension and contextual flag of the vectors held, or None."""
        ...


@runtime_checkable
class HoldsSnapshots(Protocol):
    """A store in a folder, beside which a snapshot of its indexes is written and reopened."""

    @property
    def snapshot_dir(self) -> Path:
        """Where this store's snapshot lives (it may not exist yet)."""
        ...

    def document_builds(self) -> dict[str, int | None]:
        """Every stored document id with the id of the build that last wrote it (what an update reads)."""
        ...


class SnapshotStore(StoreProtocol, HoldsSnapshots, Protocol):
    """A store that can hold a snapshot: what writing, updating and checking one needs."""


__all__ = [
    "Chunker",
    "DocumentStore",
    "HoldsSnapshots",
    "HoldsVectors",
    "Progress",
    "RecordStore",
    "SearchesInside",
    "SnapshotStore",
    "StoreProtocol",
    "VectorModel",
]
