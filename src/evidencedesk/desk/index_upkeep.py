"""Ingest and index upkeep for the Desk: folders into the store, dense embeddings ahead of the first
query, the memory-mapped snapshot (written, brought up to date by every ingest, and whether searches
can use it), and the stored chunks for in-memory searchers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError
from evidencedesk.progress import Callback, Meter
from evidencedesk.results.ingest import (
    EmbeddingProgress,
    IngestReport,
    SnapshotNotUpdated,
    SnapshotUpdate,
    StepProgress,
)
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors
from evidencedesk.wiring import dense_contextual, dense_embedder

from .state import DeskState

if TYPE_CHECKING:
    from evidencedesk.retrieval.snapshot import Snapshot


class IndexUpkeep:
    """Writes to the store and keeps its indexes current; reads the chunks in-memory searchers need."""

    def __init__(self, state: DeskState) -> None:
        self.state = state

    def ingest(
        self,
        folder: str | Path,
        *,
        max_bytes: int | None,
        progress: Callable[[int, int, str], None] | None,
        remove_missing: bool,
        embed: bool,
        embed_progress: Callback | None,
        chunker: Mapping[str, object],
    ) -> IngestReport:
        from evidencedesk.config import ChunkerSettings
        from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES
        from evidencedesk.ingest.sync import ingest_folder

        state = self.state
        try:
            chunking = ChunkerSettings.model_validate({**state.settings.chunker.model_dump(), **chunker}).to_chunking()
        except ValueError as exc:
            raise ConfigError(f"chunker: {exc}") from None
        limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        if limit < 1:
            raise ConfigError(f"max_bytes: must be at least 1, got {limit}")
        record, index = self._keep_index(
            lambda: ingest_folder(
                state.store, folder, chunking, max_bytes=limit, progress=progress, remove_missing=remove_missing
            ).to_dict()
        )
        state.build_id()
        report = IngestReport.from_dict(record)
        embedding = self.embed(embed_progress) if embed else None
        return replace(report, progress=replace(report.progress, index=index, embedding=embedding))

    def embed(self, progress: Callback | None = None) -> EmbeddingProgress:
        from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
        from evidencedesk.retrieval.contextual import index_text

        state = self.state
        embedder = dense_embedder(state.settings)
        meter = Meter(callback=progress)
        contextual = dense_contextual(state.settings)
        if isinstance(state.store, HoldsVectors):
            meter.update(state.store.ensure_vectors(embedder, state.embeddings_file, contextual=contextual))
            total = state.store.chunk_count()
        else:
            chunks = self.chunks()
            with EmbeddingCache(state.embeddings_file) as cache:
                embed_cached(embedder, [index_text(c, contextual) for c in chunks], cache, on_progress=meter.update)
            total = len(chunks)
        done = StepProgress.from_dict(meter.summary())
        return EmbeddingProgress(done.count, total, done.seconds, done.per_second, embedder.name)

    def chunks(self) -> list[Chunk]:
        state = self.state
        state.build_id()
        with state.lock:
            if state.cache.chunks is not None:
                return state.cache.chunks
        chunks = state.store.chunks()
        if not state.is_postgres and self.snapshot()[0] is None:
            self.keep_chunks(chunks)
        return chunks

    def keep_chunks(self, chunks: list[Chunk]) -> None:
        """Hold ``chunks`` for this build: an in-memory searcher was built over them."""
        with self.state.lock:
            self.state.cache.chunks = chunks

    def write_index(
        self,
        dense: bool,
        ann: bool,
        timings: dict[str, float] | None,
        *,
        rebuild: bool,
        merge: bool,
        report: dict[str, object] | None,
    ) -> Path:
        from evidencedesk.retrieval.snapshot_update import merge_snapshot, writer_lock
        from evidencedesk.wiring_snapshot import updatable, update_store_snapshot, write_store_snapshot

        state = self.state
        if not isinstance(state.store, HoldsSnapshots):
            raise ConfigError("write_index: a PostgreSQL store keeps its indexes in the database")
        store, settings = state.store, state.settings
        done: dict[str, object] = {}
        with writer_lock(store.snapshot_dir):
            manifest, _ = updatable(store, settings)
            same = manifest is not None and (manifest.get("dense") is not None) == dense
            same = same and manifest is not None and bool(manifest.get("ann")) == (ann and dense)
            if rebuild or not same:
                embedder = dense_embedder(settings) if dense else None
                path = write_store_snapshot(store, settings, embedder, state.embeddings_file, ann, timings)
                done["mode"] = "rebuild"
            else:
                done["mode"] = "update"
                done["update"] = update_store_snapshot(
                    store, settings, lambda: dense_embedder(settings), state.embeddings_file, timings
                )
                path = store.snapshot_dir
            if merge:
                done["merge"] = merge_snapshot(path)
        if report is not None:
            report.update(done)
        state.drop_cached()
        return path

    def _keep_index(
        self, ingest: Callable[[], Mapping[str, object]]
    ) -> tuple[Mapping[str, object], SnapshotUpdate | SnapshotNotUpdated | None]:
        """Run ``ingest`` (it returns the store's record of the run) and, when the store has a snapshot, bring
        it up to date in the same step: readers that see the new build wait for the new segment instead of
        building an index in memory. Returns the record and how the snapshot was updated (None: no snapshot)."""
        from evidencedesk.errors import SnapshotError
        from evidencedesk.retrieval.snapshot import MANIFEST
        from evidencedesk.retrieval.snapshot_update import writer_lock
        from evidencedesk.wiring_snapshot import update_store_snapshot

        state = self.state
        if not isinstance(state.store, HoldsSnapshots) or not (state.store.snapshot_dir / MANIFEST).is_file():
            return ingest(), None
        store, settings = state.store, state.settings
        with writer_lock(store.snapshot_dir):
            record = ingest()
            started = time.perf_counter()
            try:
                done = update_store_snapshot(store, settings, lambda: dense_embedder(settings), state.embeddings_file)
            except (SnapshotError, ValueError) as exc:
                return record, SnapshotNotUpdated(f"snapshot not updated: {exc}")
        return record, SnapshotUpdate.from_dict({**done, "seconds": round(time.perf_counter() - started, 3)})

    def snapshot_status(self) -> str:
        self.state.build_id()
        return self.snapshot()[1]

    def snapshot(self) -> tuple[Snapshot | None, str]:
        """``(snapshot, why)``: the snapshot that fits the latest build (None when there is none), and why."""
        state = self.state
        if not isinstance(state.store, HoldsSnapshots):
            return None, "PostgreSQL store: searches run in the database"
        store = state.store
        with state.lock:
            if state.cache.snapshot is None:
                from evidencedesk.wiring_snapshot import snapshot_status

                state.cache.snapshot = snapshot_status(store, state.settings)
            return state.cache.snapshot


__all__ = ["IndexUpkeep"]
