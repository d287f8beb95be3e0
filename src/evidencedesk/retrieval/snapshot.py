"""Snapshot: a store's index saved to disk as a set of immutable segments, reopened memory-mapped.

A snapshot folder holds ``manifest.json`` and ``segments/``. The manifest names the build of the
store the snapshot reflects, the settings it was written with, and its live segments, each with
the tombstone file of its deleted rows (if any). Every segment (see ``retrieval.segments``) keeps
raw term frequencies, row lengths, scope columns and vectors of its own rows only; BM25's idf and
average length are summed over the live rows of every segment when a query runs, so the scores
of any set of segments equal those of one index built over the same live rows.

``write_snapshot`` builds a whole snapshot (one segment) and replaces the folder only once
complete; ``retrieval.snapshot_update`` adds a segment for an ingest's changes, tombstones the
rows they replace, and merges segments. ``Snapshot(directory)`` maps the files, which takes
milliseconds whatever the size; ``SnapshotSearcher`` ranks the rows inside the scope across the
live segments and fetches the text of the top k only, from the store.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.errors import SnapshotError
from evidencedesk.index.bm25_segment import CorpusStats, query_idf
from evidencedesk.index.embedders import embed_query
from evidencedesk.retrieval.candidates import Candidate, candidate
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.scope import Scope
from evidencedesk.retrieval.segments import Clock, Segment, SegmentWriter, Vectorize
from evidencedesk.retrieval.snapshot_manifest import Manifest

if TYPE_CHECKING:
    from evidencedesk.index.ann import AnnParams
from evidencedesk.text.tokenizer import Tokenizer

FORMAT = 2
MANIFEST = "manifest.json"
SEGMENTS = "segments"
_OPEN_TRIES = 3  # a writer may drop a segment between our reading the manifest and opening it

Ranked = tuple[list[str], list[float]]


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
    ann_params: AnnParams | None = None,
    build_id: int | None = None,
    timings: dict[str, float] | None = None,
    labels: Mapping[str, object] | None = None,
) -> Path:
    """Index ``batches`` of chunks into ``directory`` as one segment (the folder is replaced only once complete).

    ``vectorize`` maps a batch of chunks to unit vectors (one row each); without it the snapshot is
    lexical only. ``contextual`` tokenises each chunk after its ``title > heading path`` line, as
    ``BM25Searcher(contextual=True)`` does (kept in the manifest, so later segments do the same).
    ``ann`` also builds an HNSW graph over the vectors (of a segment of at least
    ``segments.ANN_MIN_ROWS`` rows) with ``threads`` threads (0: all). ``labels`` is kept in the
    manifest as is (e.g. the settings the snapshot was written with). ``ann_params`` go to ``AnnIndex``
    (connectivity, expansion_add, ...). ``timings``, when given, receives the seconds spent per stage
    (read, tokenize, count, vectors, bm25, ann).
    """
    clock = Clock(timings)
    directory = Path(directory)
    tokenizer = tokenizer or Tokenizer()
    work = directory.with_name(directory.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    name = segment_name(1)
    writer = SegmentWriter(work / SEGMENTS / name, clock)
    for batch in clock.each("read", batches):
        writer.add_chunks(batch, tokenizer, vectorize, contextual)
    n_rows = writer.finish(vectorize is not None, ann, threads, ann_params)
    manifest: Manifest = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_id": build_id,
        "tokenizer": tokenizer.to_dict(),
        "contextual": bool(contextual),
        "bm25": {"k1": float(k1), "b": float(b)},
        "dense": None,
        "ann": bool(ann),
        "ann_params": ann_params or {},
        "labels": dict(labels) if labels else {},
        "generation": 1,
        "next_segment": 2,
        "segments": [{"name": name, "rows": n_rows, "deleted": None, "n_deleted": 0}],
    }
    if vectorize is not None:
        manifest["dense"] = {"model_name": model_name or "unnamed", "dim": writer.dim, "ann": bool(ann)}
    write_manifest(work, manifest)
    if directory.exists():
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        directory.rename(old)
        work.rename(directory)
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(directory)
    return directory


def segment_name(number: int) -> str:
    return f"s{number:06d}"


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.is_file():
        raise SnapshotError(f"no index snapshot in {directory} (missing {MANIFEST})")
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotError(f"{path}: unreadable manifest ({exc})") from None
    if manifest.get("format") != FORMAT:
        raise SnapshotError(
            f"{directory}: snapshot format {manifest.get('format')!r}, expected {FORMAT} "
            "(write it again with `evidencedesk index --rebuild`)"
        )
    return manifest


def write_manifest(directory: Path, manifest: Mapping[str, object]) -> None:
    """Replace ``directory``'s manifest atomically: a reader sees the old one or the new one, whole."""
    tmp = directory / (MANIFEST + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / MANIFEST)


class Snapshot:
    """A snapshot folder opened read-only: its live segments, memory-mapped, and their summed statistics."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        for attempt in range(_OPEN_TRIES):
            self.manifest = read_manifest(self.directory)
            try:
                self.segments = self._open_segments()
                break
            except (OSError, ValueError, KeyError) as exc:
                if attempt + 1 == _OPEN_TRIES or read_manifest(self.directory) == self.manifest:
                    raise SnapshotError(f"{self.directory}: damaged snapshot ({exc})") from None
                time.sleep(0.01)  # the manifest changed meanwhile: open the new one
        self.build_id: int | None = self.manifest.get("build_id")
        self.n_rows = sum(seg.n_live for seg in self.segments)
        self.tokenizer = Tokenizer.from_dict(self.manifest["tokenizer"])
        self._tenant_langs: dict[str, list[str]] = {}
        bm25 = self.manifest["bm25"]
        self.k1, self.b = float(bm25["k1"]), float(bm25["b"])
        # the languages of the indexed chunks: a per-language tokenizer reads a query in each of them
        self.langs: list[str] = []
        if self.tokenizer.per_language:
            self.langs = sorted({v for seg in self.segments for v in seg.live_values("langs")})

    def _open_segments(self) -> list[Segment]:
        folder = self.directory / SEGMENTS
        model = (self.manifest.get("dense") or {}).get("model_name", "unnamed")
        out = []
        for entry in self.manifest["segments"]:
            deleted = np.load(folder / entry["deleted"]) if entry.get("deleted") else None
            segment = Segment(folder / entry["name"], deleted, model, eager=True)
            if segment.n_rows != int(entry["rows"]):
                raise ValueError(f"segment {entry['name']}: {segment.n_rows} rows, the manifest says {entry['rows']}")
            out.append(segment)
        return out

    def __len__(self) -> int:
        return self.n_rows

    @property
    def has_dense(self) -> bool:
        return self.manifest.get("dense") is not None

    @property
    def n_deleted(self) -> int:
        return sum(seg.n_deleted for seg in self.segments)

    @cached_property
    def stats(self) -> CorpusStats:
        return CorpusStats.of(self.n_rows, sum(seg.live_length for seg in self.segments if seg.n_live))

    def check(self, embedder: Any) -> None:
        """Refuse an embedder other than the one the vectors were made with."""
        info = self.manifest.get("dense")
        if info is None:
            raise SnapshotError(f"{self.directory}: this snapshot has no vectors (written without an embedder)")
        if embedder.name != info["model_name"] or embedder.dim != int(info["dim"]):
            raise ValueError(
                f"index built with {info['model_name']} (dim {info['dim']}) cannot be searched with "
                f"{embedder.name} (dim {embedder.dim}); rebuild the index with that embedder"
            )

    # -- per-tenant statistics ----------------------------------------------------------------------
    @cached_property
    def tenant_stats(self) -> dict[str, CorpusStats]:
        """Each tenant's live row count and average length, over every segment."""
        rows: dict[str, int] = {}
        total: dict[str, int] = {}
        for seg in self.segments:
            if seg.n_live:
                for tenant, (n, length) in seg.tenant_totals().items():
                    rows[tenant] = rows.get(tenant, 0) + n
                    total[tenant] = total.get(tenant, 0) + length
        return {t: CorpusStats.of(rows[t], total[t]) for t in sorted(rows)}

    def tenants(self) -> list[str]:
        """The tenants with live rows, sorted."""
        return list(self.tenant_stats)

    def tenant_langs(self, tenant: str) -> list[str]:
        """The languages of ``tenant``'s live rows (what an index of its chunks alone would read a query in)."""
        if not self.tokenizer.per_language:
            return []
        found = self._tenant_langs.get(tenant)
        if found is None:
            langs: set[str] = set()
            for seg in self.segments:
                mask, _ = seg.allowed(_tenant_rows(tenant))
                values, codes = seg.masks.columns()["langs"]
                here = codes if mask is None else codes[mask]
                langs.update(values[int(c)] for c in np.unique(here))
            found = self._tenant_langs[tenant] = sorted(langs)
        return found

    @cached_property
    def _tenant_norms(self) -> dict[int, np.ndarray]:
        """Per segment (by position): the BM25 length norm of each row with its own tenant's average length."""
        out = {}
        for i, seg in enumerate(self.segments):
            values, codes = seg.masks.columns()["tenants"]
            stats = self.tenant_stats
            # a tenant without live rows (or of zero length) has no postings read: any positive value serves
            avgdl = np.array([stats[v].avgdl if v in stats and stats[v].avgdl > 0 else 1.0 for v in values])
            out[i] = seg.bm25.norms_by_row(self.k1, self.b, avgdl[codes])
        return out

    def bm25(self, terms: Sequence[str], k: int, scope: Scope | None = None, tenant: str | None = None) -> Ranked:
        """The best ``k`` live chunk ids inside ``scope`` for the distinct query ``terms``, with BM25 scores.

        ``tenant``: that tenant's rows only, scored with its own statistics (its row count, average
        length and document frequencies), exactly as an index of its chunks alone scores them.
        """
        segments = [(i, seg) for i, seg in enumerate(self.segments) if seg.n_live]
        stats = self.stats
        if tenant is not None:
            base = scope if scope is not None else Scope()
            if tenant not in self.tenant_stats or (base.tenants is not None and tenant not in base.tenants):
                return [], []
            stats, scope = self.tenant_stats[tenant], replace(base, tenants=frozenset({tenant}))
        columns = [seg.bm25.columns(terms) for _, seg in segments]
        dfs = [0] * len(terms)
        for (_, seg), cols in zip(segments, columns, strict=True):
            rows, key = (seg.live, None) if tenant is None else seg.allowed(_tenant_rows(tenant))
            if rows is not None and not rows.any():
                continue
            for i, col in enumerate(cols):
                if col is not None:
                    dfs[i] += seg.bm25.df(col, rows, key)
        known = [i for i, df in enumerate(dfs) if df > 0]  # a term only deleted rows held is not known
        if not known:
            return [], []
        idf = dict(zip(known, query_idf(stats.n_docs, [dfs[i] for i in known]), strict=True))
        found: list[tuple[float, str]] = []
        for (position, seg), cols in zip(segments, columns, strict=True):
            allowed, key = seg.allowed(scope)
            if allowed is not None and not allowed.any():
                continue
            mine = [(col, idf[i]) for i in known if (col := cols[i]) is not None]
            if not mine:
                continue
            own = tenant is not None  # each row's own tenant's average length
            norms = self._tenant_norms[position] if own else seg.bm25.norms(self.k1, self.b, stats.avgdl)
            columns_here, idf_here = [c for c, _ in mine], [w for _, w in mine]
            rows, scores = seg.bm25.top(columns_here, idf_here, self.k1, norms, k, seg.tie, allowed, key)
            found += [(float(s), seg.ids[int(r)]) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]
        return _best(found, k)

    def dense(self, vector: np.ndarray, k: int, scope: Scope | None = None, ann: bool = False) -> Ranked:
        """The best ``k`` live chunk ids inside ``scope`` by cosine; ``ann`` walks each segment's HNSW graph."""
        found: list[tuple[float, str]] = []
        for seg in self.segments:
            if not seg.n_live:
                continue
            allowed, _ = seg.allowed(scope)
            if allowed is not None and not allowed.any():
                continue
            index = seg.ann if ann and seg.ann is not None else seg.dense
            rows, scores = index.search(vector, k, allowed)
            found += [(float(s), seg.ids[int(r)]) for r, s in zip(rows, scores, strict=True)]
        return _best(found, k)


def _tenant_rows(tenant: str) -> Scope:
    """Every live row of ``tenant``, whatever its status, audience or dates."""
    return Scope(statuses=None, audiences=None, tenants=frozenset({tenant}), check_validity=False)


def _best(found: list[tuple[float, str]], k: int) -> Ranked:
    """The ``k`` best ``(score, id)`` pairs of every segment: score descending, ties by id."""
    found.sort(key=lambda x: (-x[0], x[1]))
    return [i for _, i in found[:k]], [s for s, _ in found[:k]]


class SnapshotSearcher:
    """BM25 or dense search over a Snapshot; ``fetch`` returns stored chunks by id (e.g. ``Store.chunks_by_id``).

    ``method``: "bm25", "dense" (exact) or "dense-ann" (the HNSW graph, exact inside small filters).
    Dense methods need the ``embedder`` the snapshot's vectors were made with. ``per_tenant`` (BM25):
    each tenant's rows are scored with that tenant's own statistics and the tenants' lists merged by
    score, as one index per tenant would rank them (``retrieval.tenant_statistics``).
    """

    def __init__(
        self,
        snapshot: Snapshot,
        method: str,
        fetch: Callable[[Sequence[str]], list[Chunk]],
        embedder: Any = None,
        per_tenant: bool = False,
    ) -> None:
        if method not in ("bm25", "dense", "dense-ann"):
            raise ValueError(f"method: must be bm25, dense or dense-ann, got {method!r}")
        self.snapshot = snapshot
        self.method = method
        self.name = "bm25" if method == "bm25" else "dense"
        self.fetch = fetch
        self.embedder = embedder
        self.tokenizer = snapshot.tokenizer  # what BM25 matched query words with (for explanations)
        self.per_tenant = per_tenant and method == "bm25"
        if method != "bm25":
            if embedder is None:
                raise ValueError(f"method {method!r}: needs the embedder the snapshot's vectors were made with")
            snapshot.check(embedder)

    def __len__(self) -> int:
        return len(self.snapshot)

    def ranked(self, query: str | np.ndarray, k: int, scope: Scope | None = None) -> Ranked:
        """Best ``k`` chunk ids and scores inside ``scope``; a dense method also takes a query vector."""
        snap = self.snapshot
        if self.per_tenant:
            allowed = snap.tenants() if scope is None or scope.tenants is None else sorted(scope.tenants)
            found: list[tuple[float, str]] = []
            for tenant in allowed:
                terms = snap.tokenizer.query_terms(str(query), snap.tenant_langs(tenant))
                ids, scores = snap.bm25(terms, k, scope, tenant=tenant)
                found += zip(scores, ids, strict=True)
            return _best(found, k)
        if self.method == "bm25":
            return snap.bm25(snap.tokenizer.query_terms(str(query), snap.langs), k, scope)
        vector = embed_query(self.embedder, query) if isinstance(query, str) else query
        return self.snapshot.dense(vector, k, scope, ann=self.method == "dense-ann")

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        if not isinstance(query, str):
            raise ValueError(f"query: must be a string, got {type(query).__name__}")
        if not query.strip() or not len(self.snapshot):
            return []
        ids, scores = self.ranked(query, k, scope)
        found = {c.id: c for c in self.fetch(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise SnapshotError(
                f"{self.snapshot.directory}: chunk {missing[0]!r} is no longer stored; the snapshot is out of "
                "date (write it again after ingesting)"
            )
        pairs = zip(ids, scores, strict=True)
        return [candidate(found[i], float(s), n, self.name) for n, (i, s) in enumerate(pairs, 1)]
