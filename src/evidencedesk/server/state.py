"""ServiceState: the Desk over the store, the keys, the metrics, and the lab's re-chunked corpora.

Every search, ask and evaluation goes through the ``Desk`` (``evidencedesk.desk``), the same core
the command line and the Python API call: over PostgreSQL it searches inside the database, over an
embedded store with a current snapshot it searches the snapshot, and it checks the latest build id
on every request, so several service processes over one PostgreSQL store agree and see each
other's ingests. Nothing here holds the store's chunks.

A ``Corpus`` is the lab's experiment: the store's documents re-chunked in memory with another
``ChunkingConfig``, with its own in-memory searchers (kept for a few configs, per build).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from evidencedesk.answer.generators.base import Generator
from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.config import Settings
from evidencedesk.constants import METHODS
from evidencedesk.desk import Desk, Serialized
from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import ConfigError
from evidencedesk.evaluation.labels import Label, load_labels
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.server.access import KeyRing, check_startup, with_tenant_statistics
from evidencedesk.server.cache import BuildCache
from evidencedesk.server.limits import RateLimiter
from evidencedesk.server.metrics import Metrics
from evidencedesk.server.settings import ServiceSettings
from evidencedesk.wiring import EMBEDDINGS_FILE, hybrid_legs, searcher_params, with_collapse

RequestT = TypeVar("RequestT", bound=BaseModel)


@dataclass
class Corpus:
    """The lab's re-chunking of the stored documents, and the in-memory searchers built over it."""

    key: tuple[Any, ...]
    chunks: list[Chunk]
    chunking: dict[str, Any]
    searchers: BuildCache[Searcher] = field(default_factory=lambda: BuildCache(8))

    def __post_init__(self) -> None:
        self.by_id = {c.id: c for c in self.chunks}

    def visible(self, scope: Scope) -> dict[str, Chunk]:
        """The chunks ``scope`` allows, by id."""
        return {c.id: c for c in self.chunks if scope.allows_chunk(c)}


class ServiceState:
    """Everything the routes share. Thread-safe: FastAPI runs the handlers in a thread pool."""

    def __init__(self, store: str | Path | Desk, settings: Settings, service: ServiceSettings) -> None:
        # a folder or a postgresql:// URL (the embedding cache and uploads then stay in .evidencedesk)
        self.desk = store if isinstance(store, Desk) else Desk(store, settings)
        # keys that name tenants turn per-tenant statistics on (unless the shared config decides)
        self.desk.settings = with_tenant_statistics(self.desk.settings, service)
        self.settings = self.desk.settings
        self.desk.max_memory_chunks = service.max_memory_chunks
        self.service = service
        self.store = self.desk.store
        self.store_path = self.desk.path
        try:
            check_startup(service, self.store.tenants())
        except Exception:
            self.desk.close()
            raise
        self.keys = KeyRing(service)
        self.limiter = RateLimiter()
        self.ingest_lock = threading.Lock()  # one ingest at a time: its scope check and its write go together
        self.metrics = Metrics()
        self._corpora: BuildCache[Corpus] = BuildCache(service.lab_cache)
        self._labels_lock = threading.Lock()
        self._labels: dict[Path, tuple[float, list[Label]]] = {}

    def close(self) -> None:
        self._corpora.clear()
        self.desk.close()

    def build_id(self) -> int | None:
        return self.desk.build_id()

    # -- the lab's re-chunked corpora --------------------------------------------------------------
    def corpus(self, chunking: ChunkingConfig) -> Corpus:
        """The stored documents re-chunked with ``chunking`` (cached per config and build)."""
        build = self.build_id()

        def rechunk() -> Corpus:
            self.desk.check_memory("re-chunking in the lab", "search the stored chunks (no chunker)")
            docs: Sequence[Document] = self.store.documents()
            chunks = [c for d in docs for c in chunk_document(d, chunking)]
            return Corpus(("lab", chunking, build), chunks, chunking.to_dict())

        return self._corpora.get(("lab", chunking, build), rechunk)

    def document_headers(self) -> list[Document]:
        """Every stored document without its text (ids, titles, paths, metadata)."""
        return self.store.document_headers()

    def each_document(self) -> Iterator[Document]:
        """Every stored document, read one at a time (never all of them in memory at once)."""
        for doc_id in self.store.document_builds():
            doc = self.store.document(doc_id)
            if doc is not None:
                yield doc

    def corpus_searcher(self, corpus: Corpus, method: str, legs: Sequence[str] | None = None) -> Searcher:
        """An in-memory searcher of ``method`` over a re-chunked ``corpus``, configured as the Desk's."""
        if method not in METHODS:
            raise ConfigError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
        if legs is not None and method != "hybrid":
            raise ConfigError("legs: only for method hybrid")
        names = tuple(legs) if legs else tuple(hybrid_legs(self.settings)) if method == "hybrid" else ()
        params = searcher_params(self.settings, method, self.store_path / EMBEDDINGS_FILE, names or None)
        split = bool(self.settings.retrieval.tenant_statistics)

        def build() -> Searcher:
            made = make_searcher(method, corpus.chunks, tenant_statistics=split, **params)
            return with_collapse(Serialized(made), self.settings)

        return corpus.searchers.get((method, names), build)

    def warm_models(self) -> bool:
        """Load and run the bundled cross-encoder once when the configuration reads it (a cross-encoder
        reranker with no model named, or the extractive generator's reader), so no request pays for it.
        Returns whether it was warmed; a missing model is reported by the first request that needs it."""
        s = self.settings
        rerank = s.retrieval.rerank
        wanted = (rerank.method == "cross-encoder" and not rerank.model) or (
            s.generator.name == "extractive" and s.generator.answerability == "cross-encoder"
        )
        if not wanted:
            return False
        from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, warm

        try:
            warm()
        except (CrossEncoderUnavailable, ImportError, OSError):
            return False
        return True

    # -- request defaults and generators -----------------------------------------------------------
    def with_defaults(self, body: RequestT) -> RequestT:
        """The request with an unset ``method`` and ``k`` taken from the configuration."""
        r = self.settings.retrieval
        return body.model_copy(update={"method": body.method or r.method, "k": body.k or r.k})

    def generator_name(self, name: str | None) -> str:
        """``name`` (default: the configured generator) if the service settings enable it."""
        name = name or self.settings.generator.name
        if name not in self.service.generators:
            enabled = ", ".join(self.service.generators)
            raise ConfigError(f"generator: {name!r} is not enabled here; choose from {enabled}")
        return name

    def generator(self, name: str | None) -> Generator:
        """An enabled generator, built by the Desk with the configured model settings."""
        return self.desk.generator(self.generator_name(name))

    # -- labels ----------------------------------------------------------------------------------
    def labels(self, path: Path | None = None) -> list[Label]:
        """The labels of ``path`` (default: the configured or bundled labels), re-read when the file changes."""
        path = path or self.service.labels_path()
        if path is None:
            return []
        mtime = path.stat().st_mtime
        with self._labels_lock:
            cached = self._labels.get(path)
            if cached is not None and cached[0] == mtime:
                return cached[1]
        labels = load_labels(path)
        with self._labels_lock:
            self._labels[path] = (mtime, labels)
        return labels


__all__ = ["EMBEDDINGS_FILE", "Corpus", "ServiceState"]
