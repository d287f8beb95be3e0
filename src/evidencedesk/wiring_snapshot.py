"""Snapshots as the settings describe them: write one for a store, and search it when it still fits.

This is wiring (settings to objects), so it lives beside the core and not in ``retrieval``, which
never reads the settings model.

A snapshot is used only if it was written for the store's latest build and with the BM25 and dense
settings now in force (tokenizer, k1, b, embedding model, contextual text); otherwise the searchers
are built in memory from the stored chunks as usual, and ``snapshot_status`` says why. An ingest
brings an existing snapshot up to date with one new segment (``update_store_snapshot``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evidencedesk.config import LegSettings, Settings
from evidencedesk.documents import Chunk
from evidencedesk.errors import SnapshotError
from evidencedesk.index.embedders import Embedder, vectors_name
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.segments import Vectorize
from evidencedesk.retrieval.snapshot import Snapshot, SnapshotSearcher, read_manifest, write_snapshot
from evidencedesk.retrieval.snapshot_update import DEFAULT_POLICY, TieredPolicy, update_snapshot, wait_for_writer
from evidencedesk.store.contract import SnapshotStore, StoreProtocol
from evidencedesk.text.tokenizer import Tokenizer

SNAPSHOT_METHODS = ("bm25", "dense")


def _leg(settings: Settings, method: str) -> LegSettings:
    found = next((x for x in settings.retrieval.legs if x.method == method), None)
    return found if found is not None else LegSettings(method=method)


def identity(settings: Settings) -> dict[str, Any]:
    """What a snapshot must have been written with to stand in for the in-memory searchers."""
    bm25, dense = _leg(settings, "bm25"), _leg(settings, "dense")
    return {
        "tokenizer": Tokenizer(stem=bm25.stem, stopwords=bm25.stopwords, language=bm25.language).to_dict(),
        "k1": bm25.k1,
        "b": bm25.b,
        "model": vectors_name(dense.model),  # "minilm" named 256-token vectors before it named 512
        "contextual": dense.contextual,
        "bm25_contextual": bm25.contextual,
    }


@contextmanager
def _vectorizer(embedder: Embedder | None, cache_path: Path | None, contextual: bool) -> Iterator[Vectorize | None]:
    """Embeds a batch of chunks through the embedding cache at ``cache_path`` (None without an embedder)."""
    from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
    from evidencedesk.retrieval.contextual import index_text

    if embedder is None:
        yield None
        return
    cache = EmbeddingCache(cache_path) if cache_path is not None else None

    def vectorize(batch: Sequence[Chunk]) -> Any:
        return embed_cached(embedder, [index_text(c, contextual) for c in batch], cache)

    try:
        yield vectorize
    finally:
        if cache is not None:
            cache.close()


def write_store_snapshot(
    store: SnapshotStore,
    settings: Settings,
    embedder: Embedder | None,
    cache_path: Path | None,
    ann: bool = True,
    timings: dict[str, float] | None = None,
) -> Path:
    """Write ``<store>/snapshot`` whole, as one segment, for the latest build: BM25 always, vectors when
    ``embedder`` is given (through the embedding cache at ``cache_path``), and HNSW graphs when ``ann``.
    The caller holds the snapshot's ``writer_lock``."""
    ident = identity(settings)
    build = store.latest_build()
    with _vectorizer(embedder, cache_path, ident["contextual"]) as vectorize:
        return write_snapshot(
            store.snapshot_dir,
            store.iter_chunks(batch=10_000),
            tokenizer=Tokenizer.from_dict(ident["tokenizer"]),
            k1=ident["k1"],
            b=ident["b"],
            contextual=ident["bm25_contextual"],
            vectorize=vectorize,
            model_name=embedder.name if embedder is not None else None,
            ann=ann,
            build_id=build.id if build else None,
            timings=timings,
            labels={"identity": ident},
        )


def updatable(store: SnapshotStore, settings: Settings) -> tuple[dict[str, Any] | None, str]:
    """``(manifest, why)``: the snapshot's manifest if it can be brought up to date with these settings."""
    try:
        manifest = read_manifest(store.snapshot_dir)
    except SnapshotError as exc:
        return None, str(exc)
    if manifest.get("labels", {}).get("identity") != identity(settings):
        return None, "snapshot was written with other BM25 or dense settings"
    return manifest, "ok"


def update_store_snapshot(
    store: SnapshotStore,
    settings: Settings,
    embedder: Callable[[], Embedder],
    cache_path: Path | None,
    timings: dict[str, float] | None = None,
    policy: TieredPolicy | None = DEFAULT_POLICY,
) -> dict[str, Any]:
    """Bring ``<store>/snapshot`` to the latest build with one new segment for what changed (and the
    automatic merges ``policy`` asks for). The caller holds the snapshot's ``writer_lock``.

    Raises SnapshotError when the snapshot cannot be updated (missing, other format or settings).
    """
    manifest, why = updatable(store, settings)
    if manifest is None:
        raise SnapshotError(f"{store.snapshot_dir}: {why}")
    ident = identity(settings)
    model = embedder() if manifest.get("dense") is not None else None

    def chunks_of(doc_ids: Sequence[str]) -> Iterator[list[Chunk]]:
        batch: list[Chunk] = []
        for doc_id in doc_ids:
            batch += store.chunks(doc_id)
            if len(batch) >= 5_000:
                yield batch
                batch = []
        if batch:
            yield batch

    with _vectorizer(model, cache_path, ident["contextual"]) as vectorize:
        return update_snapshot(
            store.snapshot_dir,
            build_id=store.latest_build_id(),
            documents=store.document_builds(),
            chunks_of=chunks_of,
            vectorize=vectorize,
            policy=policy,
            timings=timings,
        )


def snapshot_status(store: SnapshotStore, settings: Settings) -> tuple[Snapshot | None, str]:
    """``(snapshot, why)``: the store's snapshot if it fits the latest build and the settings.

    A snapshot one build behind while a writer updates it is waited for, not dropped."""
    folder = store.snapshot_dir
    if not folder.is_dir():
        return None, "no snapshot (write one with `evidencedesk index`)"
    try:
        snap = Snapshot(folder)
        build = store.latest_build_id()
        if snap.build_id != build:
            wait_for_writer(folder)
            snap, build = Snapshot(folder), store.latest_build_id()
    except SnapshotError as exc:
        return None, str(exc)
    if snap.build_id != build:
        return None, f"snapshot is of build {snap.build_id}, the store is at build {build}"
    if snap.manifest.get("labels", {}).get("identity") != identity(settings):
        return None, "snapshot was written with other BM25 or dense settings"
    segments = f"{len(snap.segments)} segment{'s' if len(snap.segments) != 1 else ''}"
    return snap, f"snapshot of build {snap.build_id}, {len(snap):,} chunks in {segments}"


def snapshot_searcher(
    snap: Snapshot,
    store: StoreProtocol,
    settings: Settings,
    method: str,
    legs: Sequence[str],
    embedder: Callable[[], Embedder],
    per_tenant: bool = False,
) -> Searcher | None:
    """A searcher over ``snap`` for ``method`` (bm25, dense, or a hybrid of those), or None.
    ``per_tenant``: BM25 scores each tenant with its own statistics (dense has none to share)."""
    from evidencedesk.retrieval.hybrid import HybridSearcher

    names = list(legs) if method == "hybrid" else [method]
    if any(n not in SNAPSHOT_METHODS for n in names) or ("dense" in names and not snap.has_dense):
        return None

    def one(name: str) -> SnapshotSearcher:
        if name == "bm25":
            return SnapshotSearcher(snap, "bm25", store.chunks_by_id, per_tenant=per_tenant)
        kind = "dense-ann" if (snap.manifest.get("dense") or {}).get("ann") else "dense"
        return SnapshotSearcher(snap, kind, store.chunks_by_id, embedder())

    if method != "hybrid":
        return one(method)
    r = settings.retrieval
    depth = max([leg.depth for leg in r.legs if leg.method in names] or [leg.depth for leg in r.legs])
    depths: dict[str, int] = {leg.method: leg.depth for leg in r.legs if leg.method in names}
    return HybridSearcher(
        [(one(n), depths.get(n, depth)) for n in names],
        fusion=r.fusion.method,
        rrf_k=r.fusion.k,
        weights=r.fusion.weights,
        depth=depth,
    )
