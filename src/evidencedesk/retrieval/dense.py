"""DenseSearcher: rank chunks by the cosine of their embedding to the query's, inside the Scope only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.index.ann import AnnIndex
from evidencedesk.index.dense import DenseIndex
from evidencedesk.index.embedders import Embedder, default_embedder, embed_query
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
from evidencedesk.json_types import JsonObject
from evidencedesk.retrieval.candidates import Candidate, ranked
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.scope import Scope


def dense_identity(method: str, embedder: Embedder, contextual: bool, ann: bool) -> JsonObject:
    """What makes two dense indexes over the same chunks interchangeable (in memory or in PostgreSQL)."""
    return {"method": method, "embedder": embedder.name, "dim": embedder.dim, "contextual": contextual, "ann": ann}


class DenseSearcher:
    """Embeds every chunk once (through the cache when ``cache_path`` is given) and searches exactly,
    or through an HNSW graph when ``ann`` is true. The Scope becomes a row mask before any ranking."""

    def __init__(
        self,
        chunks: Sequence[Chunk],
        embedder: Embedder | None = None,
        cache_path: str | Path | None = None,
        ann: bool = False,
        contextual: bool = False,
        batch_size: int = 32,
        progress: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        self.embedder = embedder if embedder is not None else default_embedder()
        self.contextual = contextual
        self.ann = ann
        self.batch_size = batch_size
        self.progress = progress
        self.name = "dense"
        self._cache = EmbeddingCache(cache_path) if cache_path is not None else None
        self.chunks: list[Chunk] = []
        self._mask_cache: tuple[tuple[Scope, date], np.ndarray] | None = None
        dense = DenseIndex(np.zeros((0, self.embedder.dim), np.float32), [], self.embedder.name, self.embedder.dim)
        self.index: DenseIndex | AnnIndex = AnnIndex(dense) if ann else dense
        self.add(chunks)

    @classmethod
    def from_index(
        cls,
        chunks: Sequence[Chunk],
        index: DenseIndex,
        embedder: Embedder | None = None,
        ann: bool = False,
        contextual: bool = False,
    ) -> DenseSearcher:
        """A searcher over a saved index (see ``save``); refuses an embedder other than the index's."""
        searcher = cls([], embedder=embedder, contextual=contextual)
        index.check(searcher.embedder)
        if index.ids != [c.id for c in chunks]:
            raise ValueError("chunks: do not match the index rows (rebuild the index for these chunks)")
        searcher.chunks = list(chunks)
        searcher.ann = ann
        searcher.index = AnnIndex(index) if ann else index
        return searcher

    def save(self, directory: str | Path) -> Path:
        """Write the vectors of record (the HNSW graph is rebuilt from them on load)."""
        dense = self.index.dense if isinstance(self.index, AnnIndex) else self.index
        return dense.save(directory)

    def __len__(self) -> int:
        return len(self.chunks)

    def _vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        texts = [index_text(c, self.contextual) for c in chunks]
        return embed_cached(self.embedder, texts, self._cache, batch_size=self.batch_size, progress=self.progress)

    def add(self, chunks: Iterable[Chunk]) -> None:
        """Index ``chunks``; a chunk whose id is already indexed replaces the old one."""
        chunks = list(chunks)
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            raise ValueError("chunks: chunk ids must be unique")
        if not chunks:
            return
        self._drop_ids(ids)
        self.index.add(self._vectors(chunks), ids)
        self.chunks.extend(chunks)
        self._mask_cache = None

    def remove(self, doc_ids: Iterable[str]) -> int:
        """Drop every chunk of the given documents; returns how many chunks left the index."""
        docs = set(doc_ids)
        return self._drop_ids([c.id for c in self.chunks if c.doc_id in docs])

    def _drop_ids(self, ids: Sequence[str]) -> int:
        gone = self.index.remove(ids)
        if len(gone):
            keep = np.ones(len(self.chunks), dtype=bool)
            keep[gone] = False
            self.chunks = [c for c, k in zip(self.chunks, keep, strict=True) if k]
            self._mask_cache = None
        return len(gone)

    def identity(self) -> JsonObject:
        return dense_identity(self.name, self.embedder, self.contextual, self.ann)

    def mask(self, scope: Scope) -> np.ndarray:
        """The rows ``scope`` allows (remembered for the last scope and day until the chunks change)."""
        key = (scope, scope.day)
        if self._mask_cache is None or self._mask_cache[0] != key:
            self._mask_cache = (key, scope.mask(self.chunks))
        return self._mask_cache[1]

    def embed_query(self, query: str) -> np.ndarray:
        return embed_query(self.embedder, query)

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        if k < 1:
            raise ValueError(f"k: must be at least 1, got {k}")
        self.index.check(self.embedder)
        if not query.strip() or not self.chunks:
            return []
        mask = self.mask(scope if scope is not None else Scope())
        if not mask.any():
            return []
        rows, scores = self.index.search(self.embed_query(query), k, mask)
        chunks = self.chunks
        return ranked(((chunks[r], s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)), self.name)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
