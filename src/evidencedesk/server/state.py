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

from evidencedesk import ChunkingConfig, Label, Scope, Searcher, load_labels
from evidencedesk.config import Settings
from evidencedesk.desk import Desk
from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import ConfigError
from evidencedesk.json_types import JsonObject
from evidencedesk.server.access import KeyRing, check_startup, with_tenant_statistics
from evidencedesk.server.cache import BuildCache
from evidencedesk.server.limits import RateLimiter
from evidencedesk.server.metrics import Metrics
from evidencedesk.server.settings import ServiceSettings

RequestT = TypeVar("RequestT", bound=BaseModel)


@dataclass
class Corpus:
    """The lab's re-chunking of the stored documents, and the in-memory searchers built over it."""

    key: tuple[Any, ...]
    chunks: list[Chunk]
    chunking: JsonObject
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
        self.desk.reconfigure(with_tenant_statistics(self.desk.settings, service))
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
        self._example_check: tuple[int | None, bool] | None = None  # (build, store holds the example corpus)

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
            return Corpus(("lab", chunking, build), self.desk.lab.rechunk(chunking), chunking.to_dict())

        return self._corpora.get(("lab", chunking, build), rechunk)

    def document_headers(self) -> list[Document]:
        """Every stored document without its text (ids, titles, paths, metadata)."""
        return self.desk.documents()

    def each_document(self) -> Iterator[Document]:
        """Every stored document, read one at a time (never all of them in memory at once)."""
        for header in self.desk.documents():
            doc = self.desk.document(header.id)
            if doc is not None:
                yield doc

    def corpus_searcher(self, corpus: Corpus, method: str, legs: Sequence[str] | None = None) -> Searcher:
        """An in-memory searcher of ``method`` over a re-chunked ``corpus``, configured as the Desk's
        (cached with the corpus)."""
        names = tuple(legs) if legs else None
        return corpus.searchers.get((method, names), lambda: self.desk.lab.searcher_over(corpus.chunks, method, legs))

    def warm_models(self) -> bool:
        """The Desk's ``warm_models``: the bundled cross-encoder loaded at start when the settings read it."""
        return self.desk.warm_models()

    # -- request defaults and generators -----------------------------------------------------------
    def with_defaults(self, body: RequestT) -> RequestT:
        """The request with an unset ``method`` and ``k`` taken from the configuration."""
        r = self.settings.retrieval
        method, k = getattr(body, "method", None), getattr(body, "k", None)
        return body.model_copy(update={"method": method or r.method, "k": k or r.k})

    def generator_name(self, name: str | None) -> str:
        """``name`` (default: the configured generator) if the service settings enable it."""
        name = name or self.settings.generator.name
        if name not in self.service.generators:
            enabled = ", ".join(self.service.generators)
            raise ConfigError(f"generator: {name!r} is not enabled here; choose from {enabled}")
        return name

    def generator(self, name: str | None) -> bool:
        """Build the enabled generator ``name`` (its errors surface before an answer starts); a local model's
        request queue takes the service's ``model_queue``. Returns whether it writes as it goes."""
        return self.desk.prepare_generator(self.generator_name(name), queue_limit=self.service.model_queue)

    # -- labels ----------------------------------------------------------------------------------
    def labels_path(self) -> Path | None:
        """The labels file of the lab and ``POST /eval``: the ``labels:`` setting (``serve --labels``); without
        one, the bundled example's labels, but only over a store that holds the example corpus (one of their
        evidence phrases is in a stored document), so a user's own store never lists another corpus's questions."""
        if self.service.labels is not None:
            return self.service.labels
        bundled = self.service.labels_path()
        return bundled if bundled is not None and self._holds_example(bundled) else None

    def labels(self, path: Path | None = None) -> list[Label]:
        """The labels of ``path`` (default: ``labels_path()``), re-read when the file changes."""
        path = path or self.labels_path()
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

    def _holds_example(self, bundled: Path) -> bool:
        """Whether the store holds a document with an evidence phrase of the bundled labels (checked once per build)."""
        build = self.desk.build_id()
        with self._labels_lock:
            known = self._example_check
            if known is not None and known[0] == build:
                return bool(known[1])
        golds = [g for label in load_labels(bundled, strict=False) for g in label.gold][:20]
        found = any(g.held_by(d.text) for d in self.each_document() for g in golds)
        with self._labels_lock:
            self._example_check = (build, found)
        return found


__all__ = ["Corpus", "ServiceState"]
