"""Snapshot: a store's whole index saved to disk and reopened memory-mapped.

A snapshot holds, for one build of a store, everything a search needs except the chunk text:

- ``ids.bin``: chunk ids in row order, and ``tie.npy``: each row's rank in sorted-id order (the
  tie-break every searcher uses);
- ``scope/``: the metadata columns as integer codes and the validity days, so a Scope becomes a
  row mask without a single Chunk object;
- ``bm25/``: the BM25 postings (see ``index.bm25_files``);
- ``dense/vectors.f32``: the unit vectors, raw float32, and optionally ``dense/hnsw.usearch``.

``write_snapshot`` streams the chunks batch by batch (a million chunks never sit in memory as
objects); ``Snapshot(directory)`` maps the files, which takes milliseconds whatever the size, and
pages in only what queries touch. ``SnapshotSearcher`` ranks rows inside the scope and fetches the
text of the top k only, from the store.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.errors import SnapshotError
from evidencedesk.index.bm25 import BM25Index
from evidencedesk.index.bm25_files import MappedBM25, save_bm25
from evidencedesk.index.counts import TermCounts
from evidencedesk.index.dense import DenseIndex
from evidencedesk.index.embedders import embed_query
from evidencedesk.index.string_table import StringTable, load_mapped, write_strings
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.rows import COLUMNS, RowMasks, id_ranks, top_k
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer

FORMAT = 1
MANIFEST = "manifest.json"
VECTORS = "dense/vectors.f32"
GRAPH = "dense/hnsw.usearch"

Vectorize = Callable[[Sequence[Chunk]], np.ndarray]


def write_snapshot(
    directory: str | Path,
    batches: Iterable[Sequence[Chunk]],
    *,
    tokenizer: Tokenizer | None = None,
    k1: float = 1.5,
    b: float = 0.75,
    contextual: bool = False,
    vectorize: Vectorize | None = None,
    model_name: str | None = None,
    ann: bool = False,
    threads: int = 0,
    ann_params: dict[str, Any] | None = None,
    build_id: int | None = None,
    timings: dict[str, float] | None = None,
    labels: dict[str, Any] | None = None,
) -> Path:
    """Index ``batches`` of chunks into ``directory`` (replaced as a whole only once complete).

    ``vectorize`` maps a batch of chunks to unit vectors (one row each); without it the snapshot is
    lexical only. ``contextual`` tokenises each chunk after its ``title > heading path`` line, as
    ``BM25Searcher(contextual=True)`` does. ``ann`` also builds an HNSW graph over the vectors with
    ``threads`` threads (0: all).
    ``labels`` is kept in the manifest as is (e.g. the settings the snapshot was written with).
    ``ann_params`` go to ``AnnIndex`` (connectivity, expansion_add, ...). ``timings``, when given,
    receives the seconds spent per stage (read, tokenize, count, vectors, bm25, ann).
    """
    clock = _Clock(timings)
    directory = Path(directory)
    tokenizer = tokenizer or Tokenizer()
    work = directory.with_name(directory.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    (work / "dense").mkdir(parents=True)
    (work / "scope").mkdir()
    ids: list[str] = []
    values: dict[str, list[str]] = {name: [] for name in COLUMNS}
    days: list[tuple[int, int]] = []
    counts = TermCounts()
    dim = 0
    with (work / VECTORS).open("wb") as vec_out:
        for batch in clock.each("read", batches):
            for c in batch:
                m = c.metadata
                ids.append(c.id)
                for name, value in zip(COLUMNS, (m.status, m.audience, m.lang, m.tenant, c.doc_id), strict=True):
                    values[name].append(value)
                days.append(RowMasks.days(m))
            with clock("tokenize"):
                if tokenizer.per_language:
                    tokens = [tokenizer.tokenize(index_text(c, contextual), c.metadata.lang) for c in batch]
                else:
                    tokens = [tokenizer.tokenize(index_text(c, contextual)) for c in batch]
            with clock("count"):
                counts.add(tokens)
            del tokens
            if vectorize is not None and batch:
                with clock("vectors"):
                    vectors = np.ascontiguousarray(vectorize(batch), dtype=np.float32)
                if vectors.shape[0] != len(batch) or (dim and vectors.shape[1] != dim):
                    raise ValueError(f"vectorize: returned shape {vectors.shape} for {len(batch)} chunks")
                dim = vectors.shape[1]
                vec_out.write(vectors.tobytes())
    if len(set(ids)) != len(ids):
        raise ValueError("chunks: chunk ids must be unique")

    with clock("bm25"):
        bm25 = BM25Index.from_counts(counts, k1=k1, b=b)
        save_bm25(bm25, work / "bm25")
        del bm25, counts
    write_strings(work / "ids.bin", ids)
    np.save(work / "tie.npy", id_ranks(ids))
    day_array = np.array(days, dtype=np.int64).reshape(-1, 2)
    masks = RowMasks.from_values(values, day_array[:, 0], day_array[:, 1])
    del values, days
    column_values, arrays = masks.to_arrays()
    for name, array in arrays.items():
        np.save(work / "scope" / f"{name}.npy", array)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_id": build_id,
        "n_rows": len(ids),
        "tokenizer": tokenizer.to_dict(),
        "columns": column_values,
        "dense": None,
        "labels": labels or {},
    }
    if vectorize is not None:
        manifest["dense"] = {"model_name": model_name or "unnamed", "dim": dim, "ann": bool(ann and len(ids))}
        if manifest["dense"]["ann"]:
            from evidencedesk.index.ann import AnnIndex

            table = StringTable(work / "ids.bin")
            dense = DenseIndex(_vectors(work, len(ids), dim), table, manifest["dense"]["model_name"], dim)
            with clock("ann"):
                AnnIndex(dense, threads=threads, **(ann_params or {})).save(work / GRAPH)
    else:
        (work / VECTORS).unlink()
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if directory.exists():
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        directory.rename(old)
        work.rename(directory)
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(directory)
    return directory


class _Clock:
    """Adds up the seconds spent in named stages into ``totals`` (a no-op when it is None)."""

    def __init__(self, totals: dict[str, float] | None) -> None:
        self.totals = totals

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.totals is not None:
                self.totals[stage] = self.totals.get(stage, 0.0) + time.perf_counter() - start

    def each(self, stage: str, items: Iterable[Any]) -> Iterator[Any]:
        """Iterate ``items``, counting the time spent producing each one (e.g. reading the store)."""
        it = iter(items)
        while True:
            with self(stage):
                item = next(it, _END)
            if item is _END:
                return
            yield item


_END = object()


def _vectors(directory: Path, n: int, dim: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    return np.memmap(directory / VECTORS, dtype=np.float32, mode="r", shape=(n, dim)).view(np.ndarray)


class Snapshot:
    """A snapshot directory opened read-only; the large arrays stay on disk until a query reads them."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        manifest_path = self.directory / MANIFEST
        if not manifest_path.is_file():
            raise SnapshotError(f"no index snapshot in {self.directory} (missing {MANIFEST})")
        try:
            self.manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SnapshotError(f"{manifest_path}: unreadable manifest ({exc})") from None
        if self.manifest.get("format") != FORMAT:
            raise SnapshotError(f"{self.directory}: snapshot format {self.manifest.get('format')!r}, expected {FORMAT}")
        self.n_rows = int(self.manifest["n_rows"])
        self.build_id: int | None = self.manifest.get("build_id")
        try:
            self.ids = StringTable(self.directory / "ids.bin")
            self.tie = load_mapped(self.directory / "tie.npy")
            arrays = {
                name: load_mapped(self.directory / "scope" / f"{name}.npy")
                for name in (*COLUMNS, "valid_from", "valid_to")
            }
        except (OSError, ValueError) as exc:
            raise SnapshotError(f"{self.directory}: damaged snapshot ({exc})") from None
        if len(self.ids) != self.n_rows or len(self.tie) != self.n_rows:
            raise SnapshotError(f"{self.directory}: the id table does not match the manifest's {self.n_rows} rows")
        self.masks = RowMasks.from_arrays(self.manifest["columns"], arrays)
        self.tokenizer = Tokenizer.from_dict(self.manifest["tokenizer"])
        # the languages of the indexed chunks: a per-language tokenizer reads a query in each of them
        self.langs: list[str] = sorted(self.manifest["columns"]["langs"]) if self.tokenizer.per_language else []

    def __len__(self) -> int:
        return self.n_rows

    @cached_property
    def bm25(self) -> MappedBM25:
        return MappedBM25(self.directory / "bm25")

    @property
    def has_dense(self) -> bool:
        return self.manifest.get("dense") is not None

    @cached_property
    def dense(self) -> DenseIndex:
        info = self.manifest.get("dense")
        if info is None:
            raise SnapshotError(f"{self.directory}: this snapshot has no vectors (written without an embedder)")
        dim = int(info["dim"])
        return DenseIndex(_vectors(self.directory, self.n_rows, dim), self.ids, info["model_name"], dim)

    @cached_property
    def ann(self) -> Any:
        """The HNSW graph over ``dense``, memory-mapped from its file."""
        from evidencedesk.index.ann import AnnIndex

        if not (self.manifest.get("dense") or {}).get("ann"):
            raise SnapshotError(f"{self.directory}: this snapshot has no HNSW graph (written with ann=False)")
        return AnnIndex.restore(self.dense, self.directory / GRAPH, view=True)

    def mask(self, scope: Scope | None) -> tuple[np.ndarray, Hashable]:
        return self.masks.mask(scope), self.masks.key(scope)


class SnapshotSearcher:
    """BM25 or dense search over a Snapshot; ``fetch`` returns stored chunks by id (e.g. ``Store.chunks_by_id``).

    ``method``: "bm25", "dense" (exact) or "dense-ann" (the HNSW graph, exact inside small filters).
    Dense methods need the ``embedder`` the snapshot's vectors were made with.
    """

    def __init__(
        self,
        snapshot: Snapshot,
        method: str,
        fetch: Callable[[Sequence[str]], list[Chunk]],
        embedder: Any = None,
    ) -> None:
        if method not in ("bm25", "dense", "dense-ann"):
            raise ValueError(f"method: must be bm25, dense or dense-ann, got {method!r}")
        self.snapshot = snapshot
        self.method = method
        self.name = "bm25" if method == "bm25" else "dense"
        self.fetch = fetch
        self.embedder = embedder
        self.tokenizer = snapshot.tokenizer  # what BM25 matched query words with (for explanations)
        if method != "bm25":
            if embedder is None:
                raise ValueError(f"method {method!r}: needs the embedder the snapshot's vectors were made with")
            snapshot.dense.check(embedder)

    def __len__(self) -> int:
        return len(self.snapshot)

    def rows(self, query: str | np.ndarray, k: int, scope: Scope | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Best ``k`` rows and scores inside ``scope``; a dense method also takes a query vector."""
        mask, key = self.snapshot.mask(scope)
        if not mask.any():
            return np.empty(0, dtype=np.int64), np.empty(0)
        if self.method == "bm25":
            terms = self.snapshot.tokenizer.query_terms(str(query), self.snapshot.langs)
            rows, scores = self.snapshot.bm25.scores(terms, mask, key, k)
            return top_k(rows, scores, k, self.snapshot.tie) if len(rows) else (rows, scores)
        vector = embed_query(self.embedder, query) if isinstance(query, str) else query
        index = self.snapshot.ann if self.method == "dense-ann" else self.snapshot.dense
        return index.search(vector, k, mask)

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        if not isinstance(query, str):
            raise ValueError(f"query: must be a string, got {type(query).__name__}")
        if not query.strip() or not len(self.snapshot):
            return []
        rows, scores = self.rows(query, k, scope)
        ids = [self.snapshot.ids[int(r)] for r in rows]
        found = {c.id: c for c in self.fetch(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise SnapshotError(
                f"{self.snapshot.directory}: chunk {missing[0]!r} is no longer stored; the snapshot is out of "
                "date (write it again after ingesting)"
            )
        pairs = zip(ids, scores.tolist(), strict=True)
        return [Candidate(found[i], float(s), n, self.name) for n, (i, s) in enumerate(pairs, 1)]
