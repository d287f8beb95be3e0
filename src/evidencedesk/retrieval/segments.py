"""Segments: the immutable parts a snapshot is made of, written once and only read after.

A segment folder holds everything a search needs about its rows except the chunk text:

- ``segment.json``: the row count, total length in tokens, the scope columns' distinct values and
  the vectors' dimension (and whether an HNSW graph was built);
- ``ids.bin``: chunk ids in row order, and ``tie.npy``: each row's rank in sorted-id order;
- ``scope/``: the metadata columns as integer codes and the validity days;
- ``bm25/``: raw term frequencies and row lengths (see ``index.bm25_segment``);
- ``dense/vectors.f32``: unit vectors, raw float32, and ``dense/hnsw.usearch`` for a segment of at
  least ``ANN_MIN_ROWS`` rows when a graph was asked for (a smaller one is searched exactly).

A segment is never changed. Deleted rows are recorded outside it, in a tombstone file the snapshot's
manifest names (``Segment(..., deleted=...)``), and leave it only when it is merged into a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, TypeVar, cast

if TYPE_CHECKING:
    from evidencedesk.index.ann import AnnIndex, AnnParams

import numpy as np
import scipy.sparse as sp

from evidencedesk.documents import Chunk
from evidencedesk.index.bm25_segment import SegmentBM25, save_segment_bm25
from evidencedesk.index.counts import TermCounts
from evidencedesk.index.dense import DenseIndex
from evidencedesk.index.string_table import StringTable, load_mapped, write_strings
from evidencedesk.progress import timed_into
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.rows import COLUMNS, RowMasks, id_ranks
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer

SEGMENT_META = "segment.json"
VECTORS = "dense/vectors.f32"
GRAPH = "dense/hnsw.usearch"
ANN_MIN_ROWS = 10_000  # a segment with fewer rows gets no graph: exact search over it is as fast
_MASKS = 16

Vectorize = Callable[[Sequence[Chunk]], np.ndarray]


T = TypeVar("T")


class Clock:
    """Adds up the seconds spent in named stages into ``totals`` (a no-op when it is None)."""

    def __init__(self, totals: dict[str, float] | None) -> None:
        self.totals = totals

    def __call__(self, stage: str) -> AbstractContextManager[None]:
        return timed_into(self.totals, stage) if self.totals is not None else nullcontext()

    def each(self, stage: str, items: Iterable[T]) -> Iterator[T]:
        """Iterate ``items``, counting the time spent producing each one (e.g. reading the store)."""
        it = iter(items)
        while True:
            with self(stage):
                try:
                    item = next(it)
                except StopIteration:
                    return
            yield item


class SegmentWriter:
    """Collects rows (from chunks, or from live rows of other segments) and writes them as one segment."""

    def __init__(self, directory: Path, clock: Clock | None = None) -> None:
        self.directory = directory
        self.clock = clock or Clock(None)
        (directory / "dense").mkdir(parents=True)
        (directory / "scope").mkdir()
        self.ids: list[str] = []
        self.values: dict[str, list[str]] = {name: [] for name in COLUMNS}
        self.days: list[np.ndarray] = []
        self.counts = TermCounts()
        self.dim = 0
        self._vectors = (directory / VECTORS).open("wb")

    def add_chunks(
        self, batch: Sequence[Chunk], tokenizer: Tokenizer, vectorize: Vectorize | None, contextual: bool = False
    ) -> None:
        for c in batch:
            m = c.metadata
            self.ids.append(c.id)
            for name, value in zip(COLUMNS, (m.status, m.audience, m.lang, m.tenant, c.doc_id), strict=True):
                self.values[name].append(value)
        self.days.append(np.array([RowMasks.days(c.metadata) for c in batch], dtype=np.int64).reshape(-1, 2))
        with self.clock("tokenize"):
            if tokenizer.per_language:
                tokens = [tokenizer.tokenize(index_text(c, contextual), c.metadata.lang) for c in batch]
            else:
                tokens = [tokenizer.tokenize(index_text(c, contextual)) for c in batch]
        with self.clock("count"):
            self.counts.add(tokens)
        del tokens
        if vectorize is not None and batch:
            with self.clock("vectors"):
                vectors = np.ascontiguousarray(vectorize(batch), dtype=np.float32)
            self._add_vectors(vectors, len(batch))

    def add_live_rows(self, segment: Segment) -> None:
        """Copy ``segment``'s live rows (ids, scope columns, term counts and vectors)."""
        rows = np.arange(segment.n_rows) if segment.live is None else np.flatnonzero(segment.live)
        if not len(rows):
            return
        self.ids.extend(segment.ids[int(r)] for r in rows)
        for name, column in segment.masks.columns().items():
            values, codes = column
            self.values[name].extend(values[int(c)] for c in codes[rows])
        self.days.append(np.stack([segment.masks.valid_from[rows], segment.masks.valid_to[rows]], axis=1))
        with self.clock("count"):
            bm25 = segment.bm25
            p = bm25.postings
            shape = (segment.n_rows, len(bm25.terms))
            matrix = sp.csc_matrix((p.scores, p.rows, p.indptr), shape=shape).tocsr()[rows]
            self.counts.add_matrix(matrix, list(bm25.terms))
        if segment.has_dense:
            self._add_vectors(np.ascontiguousarray(segment.dense.vectors[rows]), len(rows))

    def _add_vectors(self, vectors: np.ndarray, n: int) -> None:
        if vectors.ndim != 2 or vectors.shape[0] != n or (self.dim and vectors.shape[1] != self.dim):
            raise ValueError(f"vectorize: returned shape {vectors.shape} for {n} chunks")
        self.dim = vectors.shape[1]
        self._vectors.write(vectors.tobytes())

    def finish(self, dense: bool, ann: bool, threads: int = 0, ann_params: AnnParams | None = None) -> int:
        """Write the segment; returns its row count. ``dense``: the rows came with vectors."""
        self._vectors.close()
        n = len(self.ids)
        if len(set(self.ids)) != n:
            raise ValueError("chunks: chunk ids must be unique")
        with self.clock("bm25"):
            save_segment_bm25(self.counts.matrix, self.counts.terms, self.directory / "bm25")
            total_length = int(self.counts.matrix.sum())
            self.counts = TermCounts()
        write_strings(self.directory / "ids.bin", self.ids)
        np.save(self.directory / "tie.npy", id_ranks(self.ids))
        days = np.concatenate(self.days) if self.days else np.zeros((0, 2), dtype=np.int64)
        masks = RowMasks.from_values(self.values, days[:, 0], days[:, 1])
        column_values, arrays = masks.to_arrays()
        for name, array in arrays.items():
            np.save(self.directory / "scope" / f"{name}.npy", array)
        meta: SegmentMeta = {"n_rows": n, "total_length": total_length, "columns": column_values, "dense": None}
        if dense and n and not self.dim:
            raise ValueError("segment: rows without vectors in a snapshot that has them")
        if dense:
            vectors: SegmentDense = {"dim": self.dim, "ann": bool(ann and n >= ANN_MIN_ROWS)}
            meta["dense"] = vectors
            if vectors["ann"]:
                from evidencedesk.index.ann import AnnIndex

                table = StringTable(self.directory / "ids.bin")
                index = DenseIndex(_vectors(self.directory, n, self.dim), table, "segment", self.dim)
                with self.clock("ann"):
                    AnnIndex(index, threads=threads, **(ann_params or {})).save(self.directory / GRAPH)
        else:
            (self.directory / VECTORS).unlink()
        (self.directory / SEGMENT_META).write_text(json.dumps(meta), encoding="utf-8")
        return n


class SegmentDense(TypedDict):
    """A segment's vectors: their width, and whether an HNSW graph was built over them."""

    dim: int
    ann: bool


class SegmentMeta(TypedDict):
    """A segment's ``segment.json``: its rows, their total token count, each scope column's values, its vectors."""

    n_rows: int
    total_length: int
    columns: dict[str, list[str]]
    dense: SegmentDense | None


def _vectors(directory: Path, n: int, dim: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    return np.memmap(directory / VECTORS, dtype=np.float32, mode="r", shape=(n, dim)).view(np.ndarray)


class Segment:
    """One segment folder opened read-only; ``deleted`` (a boolean array, or None) marks tombstoned rows.

    ``eager`` maps every file at once (postings, vectors, graph): a merge may remove the folder later,
    and mapped files stay readable after that, so a reader keeps working on the snapshot it opened.
    """

    def __init__(
        self, directory: Path, deleted: np.ndarray | None = None, model_name: str = "unnamed", eager: bool = False
    ) -> None:
        self.directory = directory
        self.meta = cast(SegmentMeta, json.loads((directory / SEGMENT_META).read_text(encoding="utf-8")))
        self.n_rows = int(self.meta["n_rows"])
        self.model_name = model_name
        self.ids = StringTable(directory / "ids.bin")
        self.tie = load_mapped(directory / "tie.npy")
        scope = directory / "scope"
        arrays = {name: load_mapped(scope / f"{name}.npy") for name in (*COLUMNS, "valid_from", "valid_to")}
        if len(self.ids) != self.n_rows or len(self.tie) != self.n_rows:
            raise ValueError(f"{directory}: the id table does not match the segment's {self.n_rows} rows")
        self.masks = RowMasks.from_arrays(self.meta["columns"], arrays)
        if deleted is not None and len(deleted) != self.n_rows:
            raise ValueError(f"{directory}: {len(deleted)} tombstones for {self.n_rows} rows")
        self.live: np.ndarray | None = None
        self.n_live = self.n_rows
        if deleted is not None and deleted.any():
            self.live = ~np.asarray(deleted, dtype=bool)
            self.live.flags.writeable = False
            self.n_live = int(self.live.sum())
        self._allowed: dict[Hashable, np.ndarray | None] = {}
        self.tombstones: str | None = None  # the tombstone file's name, for the snapshot's writer
        if eager:
            _ = self.bm25, (self.dense, self.ann) if self.has_dense else None

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def n_deleted(self) -> int:
        return self.n_rows - self.n_live

    @cached_property
    def live_length(self) -> int:
        """Total length in tokens of the live rows."""
        if self.live is None:
            return int(self.meta["total_length"])
        return int(self.bm25.lengths[self.live].sum())

    def tenant_totals(self) -> dict[str, tuple[int, int]]:
        """Per tenant with live rows here: how many, and their total length in tokens."""
        values, codes = self.masks.columns()["tenants"]
        lengths = self.bm25.lengths
        if self.live is not None:
            codes, lengths = codes[self.live], lengths[self.live]
        rows = np.bincount(codes, minlength=len(values))
        total = np.bincount(codes, weights=lengths, minlength=len(values))  # exact: integers below 2**53
        return {v: (int(rows[i]), int(total[i])) for i, v in enumerate(values) if rows[i]}

    @cached_property
    def bm25(self) -> SegmentBM25:
        return SegmentBM25(self.directory / "bm25", self.n_rows)

    @property
    def has_dense(self) -> bool:
        return self.meta.get("dense") is not None

    @cached_property
    def dense(self) -> DenseIndex:
        vectors = self.meta["dense"]
        if vectors is None:
            raise ValueError(f"{self.directory}: the segment holds no vectors")
        dim = int(vectors["dim"])
        return DenseIndex(_vectors(self.directory, self.n_rows, dim), self.ids, self.model_name, dim)

    @cached_property
    def ann(self) -> AnnIndex | None:
        """The HNSW graph over ``dense`` (memory-mapped), or None for a segment searched exactly."""
        vectors = self.meta.get("dense")
        if vectors is None or not vectors.get("ann"):
            return None
        from evidencedesk.index.ann import AnnIndex

        return AnnIndex.restore(self.dense, self.directory / GRAPH, view=True)

    def live_values(self, column: str) -> list[str]:
        """The distinct values ``column`` takes on live rows."""
        values, codes = self.masks.columns()[column]
        used = np.bincount(codes if self.live is None else codes[self.live], minlength=len(values)) > 0
        return [v for v, u in zip(values, used, strict=True) if u]

    def allowed(self, scope: Scope | None) -> tuple[np.ndarray | None, Hashable]:
        """The live rows inside ``scope`` (None: every row), and a key naming that mask."""
        key = self.masks.key(scope)
        if key in self._allowed:
            return self._allowed[key], key
        mask = self.masks.mask(scope)
        if self.live is not None:
            mask = mask & self.live
        out: np.ndarray | None = None if mask.all() else mask
        if len(self._allowed) >= _MASKS:
            self._allowed.pop(next(iter(self._allowed)))
        self._allowed[key] = out
        return out, key

    def rows_of_docs(self, doc_ids: Iterable[str]) -> np.ndarray:
        """A boolean mask of the rows (live or not) belonging to these documents."""
        values, codes = self.masks.columns()["doc_ids"]
        index = {v: n for n, v in enumerate(values)}
        wanted = np.zeros(len(values), dtype=bool)
        for d in doc_ids:
            n = index.get(d)
            if n is not None:
                wanted[n] = True
        return wanted[codes] if len(values) else np.zeros(self.n_rows, dtype=bool)
