"""Approximate vector search with a usearch HNSW graph, that still honours a filter exactly.

The installed usearch Python binding has no filter callback, so a filtered search works like this:

1. No filter (or every row allowed): one HNSW search for ``k``.
2. A small allowed set (fewer than ``exact_rows`` rows, or under ``exact_fraction`` of the index):
   exact search over the allowed rows only; cheaper than walking the graph and always complete.
3. Otherwise: HNSW search with ``count`` sized to the filter's selectivity (``FILTERED_OVERFETCH``
   times the rows that hold ``k`` allowed ones on average), keep the allowed hits, and grow ``count``
   (x4) until ``k`` allowed hits with a positive score are found or the whole index has been asked for.
4. If the graph still gives fewer than ``k`` allowed positive hits, exact search over the allowed rows
   decides; so a search returns ``k`` results whenever ``k`` allowed rows have a positive score.

Scores are always the exact dot products of the stored vectors, so they equal exact search's scores.

The search defaults were chosen at a million chunks (bench/scale.py; recall@10 against exact search,
one thread): ``expansion_search`` 512 instead of 256 lifts unfiltered recall from 0.91 to 0.96 for
under 1 ms more, and asking the graph for 10x the rows a filter needs instead of 1.5x lifts recall
under a 10% filter from 0.90 to 0.96, at about 5 ms.
The graph keeps its own half-precision copy of the vectors (``dtype="f16"``): on SciFact-derived
vectors that builds about 1.5x faster than float32 with the same recall@10 (bench/scale.py), and the
exact rescoring above removes its rounding from the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

# onnxruntime must be loaded before usearch: in the reverse order onnxruntime's extension crashes
# (SIGSEGV inside libstdc++ while it initialises) when the embedder is created later in the process.
import onnxruntime  # noqa: F401
from usearch.index import Index

from evidencedesk.index.dense import DenseIndex, top_k
from evidencedesk.index.embedders import Embedder

FILTERED_OVERFETCH = 10.0  # a filtered search asks the graph for this many times the rows it needs


class AnnParams(TypedDict, total=False):
    """How an HNSW graph is built and searched: ``AnnIndex``'s keyword arguments other than the threads."""

    connectivity: int
    expansion_add: int
    expansion_search: int
    exact_fraction: float
    exact_rows: int
    dtype: str


class AnnIndex:
    """A DenseIndex (the vectors of record) plus an HNSW graph over the same rows."""

    def __init__(
        self,
        dense: DenseIndex,
        connectivity: int = 16,
        expansion_add: int = 64,
        expansion_search: int = 512,
        exact_fraction: float = 0.05,
        exact_rows: int = 2000,
        threads: int = 1,
        graph: Index | None = None,
        dtype: str = "f16",
    ) -> None:
        if connectivity < 2:
            raise ValueError(f"connectivity: must be at least 2, got {connectivity}")
        if expansion_add < 1 or expansion_search < 1:
            raise ValueError("expansion_add and expansion_search: must be at least 1")
        if not 0.0 <= exact_fraction <= 1.0:
            raise ValueError(f"exact_fraction: must be between 0 and 1, got {exact_fraction}")
        if exact_rows < 0:
            raise ValueError(f"exact_rows: must be at least 0, got {exact_rows}")
        self.dense = dense
        self.exact_fraction = exact_fraction
        self.exact_rows = exact_rows
        self._graph = Index(
            ndim=dense.dim,
            metric="ip",  # vectors are unit length: inner product is the cosine
            dtype=dtype,  # the graph's own copy; results are rescored with the exact float32 vectors
            connectivity=connectivity,
            expansion_add=expansion_add,
            expansion_search=expansion_search,
        )
        self.threads = threads  # for building the graph (0: every core); searches use one thread
        self._keys = np.arange(len(dense), dtype=np.uint64)  # graph key of each dense row
        self._next_key = len(dense)
        if graph is not None:  # a saved graph over the same rows (see ``restore``)
            if len(graph) != len(dense):
                raise ValueError(f"graph: {len(graph)} vectors for an index of {len(dense)} rows")
            self._graph = graph
            # a search setting, not taken from the file (usearch sets it; its type stubs call it read-only)
            self._graph.expansion_search = expansion_search  # type: ignore[misc]
        elif len(dense):
            self._graph.add(self._keys, np.asarray(dense.vectors, dtype=np.float32), threads=threads)
        self._rebuild_key_rows()

    def save(self, path: str | Path) -> Path:
        """Write the graph to ``path`` (rows must not have been removed: keys then equal row numbers)."""
        if self._next_key != len(self):
            raise ValueError("save: rows were removed since the graph was built; rebuild it first")
        self._graph.save(str(path))
        return Path(path)

    @classmethod
    def restore(cls, dense: DenseIndex, path: str | Path, view: bool = True, **params: Any) -> AnnIndex:
        """Reopen a saved graph over ``dense``; ``view`` memory-maps it instead of reading it in."""
        if not Path(path).is_file():
            raise ValueError(f"no HNSW graph at {path}")
        graph = Index.restore(str(path), view=view)
        if graph is None:
            raise ValueError(f"{path}: not a usearch index file")
        return cls(dense, graph=graph, **params)

    @property
    def model_name(self) -> str:
        return self.dense.model_name

    @property
    def dim(self) -> int:
        return self.dense.dim

    def __len__(self) -> int:
        return len(self.dense)

    def check(self, embedder: Embedder) -> None:
        self.dense.check(embedder)

    def _rebuild_key_rows(self) -> None:
        self._key_row = np.full(self._next_key, -1, dtype=np.int64)
        self._key_row[self._keys.astype(np.int64)] = np.arange(len(self._keys))

    def _graph_search(self, q: np.ndarray, count: int) -> np.ndarray:
        matches = self._graph.search(q, count=min(count, len(self)), threads=1)
        rows = self._key_row[np.asarray(matches.keys, dtype=np.int64)]
        return rows[rows >= 0]

    def search(
        self, query_vec: np.ndarray, k: int = 10, allowed_mask: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows and cosine scores of (approximately) the best ``k`` allowed rows with a positive score."""
        if k < 1:
            raise ValueError(f"k: must be at least 1, got {k}")
        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if allowed_mask is not None:
            allowed_mask = np.asarray(allowed_mask, dtype=bool)
            if allowed_mask.shape != (n,):
                raise ValueError(f"allowed_mask: expected {n} entries, got shape {allowed_mask.shape}")
            if allowed_mask.all():
                allowed_mask = None
        n_allowed = n if allowed_mask is None else int(np.count_nonzero(allowed_mask))  # 10x a bool sum
        if n_allowed == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if allowed_mask is not None and (n_allowed < self.exact_rows or n_allowed < self.exact_fraction * n):
            return self.dense.search(q, k, allowed_mask)

        factor = 1.5 if allowed_mask is None else FILTERED_OVERFETCH
        count = min(n, int(np.ceil(k * n / n_allowed * factor)) + k)
        while True:
            rows = self._graph_search(q, count)
            if allowed_mask is not None:
                rows = rows[allowed_mask[rows]]
            scores = self.dense.scores(q, rows)
            if int((scores > 0).sum()) >= k or count >= n:
                break
            count = min(n, count * 4)
        if int((scores > 0).sum()) < k:
            return self.dense.search(q, k, allowed_mask)
        return top_k(scores, rows, self.dense.ids, k)

    # ---- incremental updates -------------------------------------------------------------------

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> None:
        self.dense.add(vectors, ids)
        keys = np.arange(self._next_key, self._next_key + len(ids), dtype=np.uint64)
        self._next_key += len(ids)
        if len(ids):
            self._graph.add(keys, np.asarray(vectors, dtype=np.float32), threads=self.threads)
        self._keys = np.concatenate([self._keys, keys])
        self._rebuild_key_rows()

    def remove(self, ids: Sequence[str]) -> np.ndarray:
        gone = self.dense.remove(ids)
        if len(gone):
            self._graph.remove(self._keys[gone])
            self._keys = np.delete(self._keys, gone)
            self._rebuild_key_rows()
        return gone
