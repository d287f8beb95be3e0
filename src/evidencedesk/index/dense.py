"""Exact vector search: dot products over the allowed rows only (read in place, see ``dense_jit``),
top-k by partition.

Vectors are unit length, so the dot product is the cosine. Only positive scores count as
matches: a search never pads its result with unrelated rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

import numpy as np

from evidencedesk.index.embedders import Embedder
from evidencedesk.index.string_table import StringTable

# Up to this many rows an unfiltered search scores every row on one thread (``dense_jit.all_best``):
# beside the query model's threads that is faster than BLAS's own (see ``all_best``). The loop costs
# about 0.11 us a row and BLAS about 0.02 plus some 2.5 ms of competing threads: above about 25,000
# rows one BLAS product on every core wins.
ONE_THREAD_ROWS = 25_000
VECTORS_FILE = "vectors.npy"
META_FILE = "dense.json"


def top_k(scores: np.ndarray, rows: np.ndarray, ids: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` positive ``scores`` (with their ``rows``), highest first; ties broken by id."""
    positive = scores > 0
    if not positive.all():
        scores, rows = scores[positive], rows[positive]
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth  # every row tied with the k-th, so the tie-break does not depend on row order
        scores, rows = scores[keep], rows[keep]
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):  # equal scores: the ids decide
        by_score, by_row = scores.tolist(), rows.tolist()
        order = np.array(sorted(range(len(by_row)), key=lambda i: (-by_score[i], ids[by_row[i]])), dtype=np.int64)
    order = order[:k]
    return rows[order].astype(np.int64), scores[order].astype(np.float32)


class DenseMeta(TypedDict):
    """``dense.json``: the embedder's name, the vectors' width and the chunk id of each row."""

    model_name: str
    dim: int
    ids: list[str]


class DenseIndex:
    """Unit vectors (one row per id) plus the name and dimension of the embedder that made them."""

    def __init__(self, vectors: np.ndarray, ids: Sequence[str], model_name: str, dim: int) -> None:
        if not model_name:
            raise ValueError("model_name: must not be empty")
        if dim < 1:
            raise ValueError(f"dim: must be at least 1, got {dim}")
        vectors = np.asarray(vectors, dtype=np.float32)  # a float32 memory map stays mapped (no copy)
        if len(ids) == 0 and vectors.size == 0:
            vectors = np.zeros((0, dim), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != dim:
            raise ValueError(f"vectors: expected shape (n, {dim}), got {vectors.shape}")
        if vectors.shape[0] != len(ids):
            raise ValueError(f"ids: {len(ids)} ids for {vectors.shape[0]} vectors")
        # a list, or a read-only sequence such as a memory-mapped StringTable (then the id -> row map
        # is built only if someone asks for a row by id, and the table is trusted to be unique)
        self.ids: Sequence[str] = ids if isinstance(ids, StringTable) else list(ids)
        self._row_map: dict[str, int] | None = None
        if isinstance(self.ids, list) and len(self._row) != len(self.ids):
            raise ValueError("ids: must be unique")
        self.vectors = vectors
        self.model_name = model_name
        self.dim = dim

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def _row(self) -> dict[str, int]:
        if self._row_map is None:
            self._row_map = {id_: n for n, id_ in enumerate(self.ids)}
        return self._row_map

    def _own_ids(self) -> list[str]:
        """The ids as a list that updates may change (a mapped table is copied on the first update)."""
        if not isinstance(self.ids, list):
            self.ids = list(self.ids)
        return self.ids

    def row(self, id_: str) -> int:
        return self._row[id_]

    def __contains__(self, id_: object) -> bool:
        return id_ in self._row

    def check(self, embedder: Embedder) -> None:
        """Refuse an embedder other than the one the index was built with."""
        if embedder.name != self.model_name or embedder.dim != self.dim:
            raise ValueError(
                f"index built with {self.model_name} (dim {self.dim}) cannot be searched with "
                f"{embedder.name} (dim {embedder.dim}); rebuild the index with that embedder"
            )

    def _query(self, query_vec: np.ndarray) -> np.ndarray:
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ValueError(f"query vector: expected dimension {self.dim}, got {q.shape[0]}")
        return q

    def scores(self, query_vec: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        q = self._query(query_vec)
        if rows is None:
            every: np.ndarray = self.vectors @ q  # every row: one BLAS matrix-vector product
            return every
        from evidencedesk.index.dense_jit import rows_dot  # the allowed rows, read in place

        return rows_dot(self.vectors, np.asarray(rows, dtype=np.int64), q)

    def search(
        self, query_vec: np.ndarray, k: int = 10, allowed_mask: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows and cosine scores of the best ``k`` allowed rows with a positive score, best first."""
        if k < 1:
            raise ValueError(f"k: must be at least 1, got {k}")
        if allowed_mask is not None:
            allowed_mask = np.asarray(allowed_mask, dtype=bool)
            if allowed_mask.shape != (len(self),):
                raise ValueError(f"allowed_mask: expected {len(self)} entries, got shape {allowed_mask.shape}")
            if allowed_mask.all():
                allowed_mask = None
        if allowed_mask is None and len(self) > ONE_THREAD_ROWS:
            rows = np.arange(len(self), dtype=np.int64)
            scores = self.scores(query_vec)
        else:  # the allowed rows, read in place, and only those that can make the top k kept
            from evidencedesk.index.dense_jit import all_best, masked_best

            q = self._query(query_vec)
            if allowed_mask is None:
                rows, scores = all_best(self.vectors, q, k)
            else:
                rows, scores = masked_best(self.vectors, allowed_mask, q, k)
        return top_k(scores, rows, self.ids, k)

    # ---- incremental updates -------------------------------------------------------------------

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> None:
        """Append rows; an id already present is an error (remove it first)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(ids), self.dim):
            raise ValueError(f"vectors: expected shape ({len(ids)}, {self.dim}), got {vectors.shape}")
        clash = [i for i in ids if i in self._row]
        if clash or len(set(ids)) != len(ids):
            raise ValueError(f"ids: already in the index or repeated: {', '.join(clash[:5]) or 'repeated ids'}")
        self.vectors = np.concatenate([np.asarray(self.vectors), vectors]) if len(self) else vectors.copy()
        own, rows = self._own_ids(), self._row
        for id_ in ids:
            rows[id_] = len(own)
            own.append(id_)

    def remove(self, ids: Sequence[str]) -> np.ndarray:
        """Drop the rows of ``ids`` (unknown ids are ignored); returns the removed row numbers."""
        gone = np.array(sorted({self._row[i] for i in ids if i in self._row}), dtype=np.int64)
        if len(gone):
            keep = np.ones(len(self), dtype=bool)
            keep[gone] = False
            self.vectors = np.asarray(self.vectors)[keep]
            self.ids = [i for i, k in zip(self.ids, keep, strict=True) if k]
            self._row_map = None
        return gone

    # ---- persistence ---------------------------------------------------------------------------

    def meta(self) -> DenseMeta:
        return {"model_name": self.model_name, "dim": self.dim, "ids": list(self.ids)}

    def save(self, directory: str | Path) -> Path:
        """Write ``vectors.npy`` and ``dense.json`` into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / VECTORS_FILE, np.asarray(self.vectors, dtype=np.float32))
        (directory / META_FILE).write_text(json.dumps(self.meta()), encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True) -> DenseIndex:
        directory = Path(directory)
        meta_path, vec_path = directory / META_FILE, directory / VECTORS_FILE
        if not meta_path.is_file() or not vec_path.is_file():
            raise ValueError(f"no dense index in {directory} (expected {VECTORS_FILE} and {META_FILE})")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        vectors = np.load(vec_path, mmap_mode="r" if mmap else None)
        return cls(vectors, meta["ids"], meta["model_name"], int(meta["dim"]))
