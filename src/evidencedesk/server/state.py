"""ServiceState: the store, the keys, the metrics, and the searchers built once and reused.

A ``Corpus`` is one set of chunks with its searchers: the store's chunks of the latest build, or
(for the lab) the store's documents re-chunked in memory with another ``ChunkingConfig``. Corpora
are keyed by the build id, so an ingest makes the next request see the new chunks.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from evidencedesk.answer.generators import get_generator
from evidencedesk.answer.generators.base import Generator
from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.config import Settings
from evidencedesk.desk import searcher_params
from evidencedesk.documents import Chunk, Document
from evidencedesk.evaluation.labels import Label, load_labels
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.factory import DEFAULT_LEGS, METHODS, make_searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.retrieval.tenant_split import split_by_tenant
from evidencedesk.server.access import KeyRing, check_startup, with_tenant_statistics
from evidencedesk.server.cache import BuildCache
from evidencedesk.server.limits import RateLimiter
from evidencedesk.server.metrics import Metrics
from evidencedesk.server.settings import ServiceSettings
from evidencedesk.store import Store

EMBEDDINGS_FILE = "embeddings.sqlite"  # the embedding cache the command line keeps in the store folder
RequestT = TypeVar("RequestT", bound=BaseModel)


def _close(searcher: Any) -> None:
    close = getattr(searcher, "close", None)
    if callable(close):
        close()
    for leg, _ in getattr(searcher, "legs", []):
        _close(leg)


class Serialized:
    """A searcher whose ``search`` runs one call at a time: searchers keep small caches (scope masks,
    restricted postings) that are not built for concurrent writers. Other attributes pass through."""

    def __init__(self, searcher: Searcher) -> None:
        self._searcher = searcher
        self._lock = threading.Lock()
        self.name = searcher.name

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        with self._lock:
            return self._searcher.search(query, k, scope)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._searcher, name)


@dataclass
class Corpus:
    """One set of chunks (the store's, or the lab's re-chunking) and the searchers built over it."""

    key: tuple[Any, ...]
    chunks: list[Chunk]
    chunking: dict[str, Any] | None  # None: the chunks as stored
    searchers: BuildCache[Serialized] = field(default_factory=lambda: BuildCache(8, _close))

    def __post_init__(self) -> None:
        self.by_id = {c.id: c for c in self.chunks}

    def visible(self, scope: Scope) -> dict[str, Chunk]:
        """The chunks ``scope`` allows, by id."""
        return {c.id: c for c in self.chunks if scope.allows_chunk(c)}


class ServiceState:
    """Everything the routes share. Thread-safe: FastAPI runs the handlers in a thread pool."""

    def __init__(self, store_path: str | Path, settings: Settings, service: ServiceSettings) -> None:
        from evidencedesk.backends import is_postgres_url, open_store

        # a folder, or a postgresql:// URL (the embedding cache and uploads then stay in .evidencedesk)
        self.store_path = Path(".evidencedesk") if is_postgres_url(store_path) else Path(store_path)
        self.settings = with_tenant_statistics(settings, service)
        self.service = service
        self.store: Any = open_store(store_path) if is_postgres_url(store_path) else Store(self.store_path)
        try:
            check_startup(service, self.store.tenants())
        except Exception:
            self.store.close()
            raise
        self.keys = KeyRing(service)
        self.limiter = RateLimiter()
        self.ingest_lock = threading.Lock()  # one ingest at a time: its scope check and its write go together
        self.metrics = Metrics()
        self._corpora: BuildCache[Corpus] = BuildCache(service.lab_cache + 1, self._dispose)
        self._generators: BuildCache[Generator] = BuildCache(len(service.generators) + 1)
        self._labels_lock = threading.Lock()
        self._labels: dict[Path, tuple[float, list[Label]]] = {}

    def close(self) -> None:
        self._corpora.clear()
        self.store.close()

    @staticmethod
    def _dispose(corpus: Corpus) -> None:
        corpus.searchers.clear()

    # -- chunks ----------------------------------------------------------------------------------
    def build_id(self) -> int | None:
        build = self.store.latest_build()
        return build.id if build else None

    def corpus(self, chunking: ChunkingConfig | None = None) -> Corpus:
        """The stored chunks (``chunking`` None) or the stored documents re-chunked with ``chunking``."""
        build = self.build_id()
        if chunking is None:
            return self._corpora.get(("store", build), lambda: Corpus(("store", build), self.store.chunks(), None))

        def rechunk() -> Corpus:
            docs: Sequence[Document] = self.store.documents()
            chunks = [c for d in docs for c in chunk_document(d, chunking)]
            return Corpus(("lab", chunking, build), chunks, chunking.to_dict())

        return self._corpora.get(("lab", chunking, build), rechunk)

    def documents(self) -> list[Document]:
        return self.store.documents()

    # -- searchers and generators ----------------------------------------------------------------
    def default_legs(self) -> list[str]:
        legs = [leg.method for leg in self.settings.retrieval.legs]
        return legs if len(legs) > 1 else list(DEFAULT_LEGS)

    def searcher(self, corpus: Corpus, method: str, legs: Sequence[str] | None = None) -> Serialized:
        """A searcher of ``method`` over ``corpus``, built as the command line builds it (dense
        embeddings are cached in the store folder, which changes no score)."""
        if method not in METHODS:
            raise ValueError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
        if legs is not None and method != "hybrid":
            raise ValueError("legs: only for method hybrid")
        names = tuple(legs) if legs else tuple(self.default_legs()) if method == "hybrid" else ()
        params = searcher_params(self.settings, method, self.store_path / EMBEDDINGS_FILE, names or None)
        split = bool(self.settings.retrieval.tenant_statistics)

        def build() -> Serialized:
            return Serialized(split_by_tenant(corpus.chunks, lambda part: make_searcher(method, part, **params), split))

        return corpus.searchers.get((method, names), build)

    def with_defaults(self, body: RequestT) -> RequestT:
        """The request with an unset ``method`` and ``k`` taken from the configuration."""
        r = self.settings.retrieval
        return body.model_copy(update={"method": body.method or r.method, "k": body.k or r.k})

    def generator(self, name: str | None) -> Generator:
        """A generator the service settings allow, built with the shared config's model settings."""
        name = name or self.settings.generator.name
        if name not in self.service.generators:
            enabled = ", ".join(self.service.generators)
            raise ValueError(f"generator: {name!r} is not enabled here; choose from {enabled}")
        gen = self.settings.generator

        def build() -> Generator:
            params: dict[str, Any] = {}
            if name == "openai":
                params = {"base_url": gen.base_url, "model": gen.model, "max_tokens": gen.max_tokens}
            elif name == "llama-cpp":
                params = {"model_path": gen.model, "max_tokens": gen.max_tokens}
            return get_generator(name, **{k: v for k, v in params.items() if v is not None})

        return self._generators.get(name, build)

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


__all__ = ["EMBEDDINGS_FILE", "Corpus", "Serialized", "ServiceState"]
