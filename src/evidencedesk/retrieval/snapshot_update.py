"""Bringing a segmented snapshot up to date: a new segment per ingest, tombstones, and merges.

``update_snapshot`` takes the documents a store holds now (each with the build that last wrote it)
and a way to read their chunks. Documents written after the snapshot's build, or not in it yet,
are indexed into one new segment; their rows in older segments, and the rows of documents the
store no longer holds, are marked deleted in a new tombstone file per touched segment. Then the
merge policy may merge segments. Segments themselves are never changed: every change is new files
plus a new manifest, written atomically and last, so a reader sees the old snapshot or the new one.
Files the new manifest no longer names are removed afterwards.

``TieredPolicy`` is the automatic merge policy: segments fall into tiers by their number of live
rows (a factor of ``tier_factor`` between tiers); a tier holding ``per_tier`` segments is merged
into one, and a segment with more than ``max_deleted`` of its rows deleted is rewritten without
them. Merging reads the segments' own stored counts and vectors, never the chunk text.
``merge_snapshot`` merges every segment into one (``evidencedesk index --merge``).

Only one writer may change a snapshot at a time: ``writer_lock`` holds an exclusive lock on
``<snapshot>.lock``, and ``wait_for_writer`` lets a reader wait until a running update is done.
"""

from __future__ import annotations

import fcntl
import math
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.segments import Clock, Segment, SegmentWriter, Vectorize
from evidencedesk.retrieval.snapshot import SEGMENTS, read_manifest, segment_name, write_manifest
from evidencedesk.retrieval.snapshot_manifest import Manifest, SegmentEntry, as_manifest
from evidencedesk.text.tokenizer import Tokenizer


class MergeReport(TypedDict):
    """What ``merge_snapshot`` did: the segment count before and after, and the rows kept."""

    segments_before: int
    segments: int
    rows: int


@dataclass(frozen=True)
class TieredPolicy:
    """Merge ``per_tier`` segments of a similar size into one; rewrite a mostly deleted segment."""

    per_tier: int = 8
    tier_factor: int = 10
    max_deleted: float = 0.5

    def __post_init__(self) -> None:
        if self.per_tier < 2:
            raise ValueError(f"per_tier: must be at least 2, got {self.per_tier}")
        if self.tier_factor < 2:
            raise ValueError(f"tier_factor: must be at least 2, got {self.tier_factor}")
        if not 0 < self.max_deleted <= 1:
            raise ValueError(f"max_deleted: must be in (0, 1], got {self.max_deleted}")

    def plan(self, segments: Sequence[Segment]) -> list[list[str]]:
        """Groups of segment names to merge (each group becomes one segment)."""
        groups: list[list[str]] = []
        tiers: dict[int, list[str]] = {}
        for seg in segments:
            if seg.n_rows and seg.n_deleted / seg.n_rows > self.max_deleted:
                groups.append([seg.name])
                continue
            tier = int(math.log(max(seg.n_live, 1), self.tier_factor))
            tiers.setdefault(tier, []).append(seg.name)
        groups += [names for names in tiers.values() if len(names) >= self.per_tier]
        return groups


DEFAULT_POLICY = TieredPolicy()


def lock_path(directory: Path) -> Path:
    return directory.with_name(directory.name + ".lock")


@contextmanager
def writer_lock(directory: str | Path) -> Iterator[None]:
    """Hold the snapshot's writer lock (waits for another writer to finish)."""
    path = lock_path(Path(directory))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def wait_for_writer(directory: str | Path) -> None:
    """Return once no writer holds the snapshot's lock (at once when none does)."""
    path = lock_path(Path(directory))
    if not path.is_file():
        return
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        fcntl.flock(f, fcntl.LOCK_UN)


ChunksOf = Callable[[Sequence[str]], Iterable[Sequence[Chunk]]]


def update_snapshot(
    directory: str | Path,
    *,
    build_id: int | None,
    documents: Mapping[str, int | None],
    chunks_of: ChunksOf,
    vectorize: Vectorize | None = None,
    policy: TieredPolicy | None = DEFAULT_POLICY,
    threads: int = 0,
    timings: dict[str, float] | None = None,
) -> dict[str, object]:
    """Bring the snapshot in ``directory`` to ``build_id``; the caller holds ``writer_lock``.

    ``documents``: every stored document id with the id of the build that last wrote it;
    ``chunks_of(doc_ids)`` yields those documents' chunks in batches; ``vectorize`` embeds a batch
    (needed when the snapshot has vectors). ``policy`` None: no automatic merge. Returns what was
    done: rows added and deleted, segments merged, the segment count after.
    """
    directory = Path(directory)
    clock = Clock(timings)
    manifest = as_manifest(read_manifest(directory))
    has_dense = manifest.get("dense") is not None
    if has_dense and vectorize is None:
        raise ValueError(f"{directory}: the snapshot holds vectors; updating it needs the embedder")
    folder = directory / SEGMENTS
    generation = int(manifest["generation"]) + 1
    segments = _open(directory, manifest)
    before = manifest.get("build_id")
    indexed: set[str] = set()
    for seg in segments:
        indexed.update(seg.live_values("doc_ids"))
    changed = sorted(d for d, b in documents.items() if d not in indexed or before is None or (b or 0) > before)
    stale = (indexed & set(changed)) | (indexed - set(documents))
    deleted = 0
    for seg in segments:
        hit = seg.rows_of_docs(stale)
        if seg.live is not None:
            hit &= seg.live
        if hit.any():
            deleted += int(hit.sum())
            seg.live = (seg.live if seg.live is not None else np.ones(seg.n_rows, dtype=bool)) & ~hit
            seg.n_live = int(seg.live.sum())
            seg.tombstones = None  # written anew with the manifest
    number = int(manifest["next_segment"])
    added = 0
    new: list[Segment] = []
    if changed:
        name = segment_name(number)
        number += 1
        writer = SegmentWriter(folder / name, clock)
        tokenizer = Tokenizer.from_dict(manifest["tokenizer"])
        for batch in clock.each("read", chunks_of(changed)):
            writer.add_chunks(batch, tokenizer, vectorize if has_dense else None, bool(manifest.get("contextual")))
        added = writer.finish(has_dense, manifest.get("ann", False), threads, manifest.get("ann_params"))
        if added:
            new.append(Segment(folder / name, None, "segment"))
        else:
            shutil.rmtree(folder / name)
    segments = [s for s in segments if s.n_live] + new
    merged: list[int] = []
    with clock("merge"):
        for _ in range(8):  # a merged segment may fill the next tier: merge again, a few times at most
            groups = policy.plan(segments) if policy is not None else []
            if not groups:
                break
            for group in groups:
                segments, number = _merge(folder, segments, group, number, manifest, threads)
                merged.append(len(group))
    manifest["build_id"] = build_id
    manifest["generation"] = generation
    manifest["next_segment"] = number
    manifest["segments"] = [_entry(folder, seg, generation) for seg in segments]
    write_manifest(directory, manifest)
    _collect(directory, manifest)
    return {"added": added, "deleted": deleted, "documents": len(changed), "merged": merged,
            "segments": len(segments)}  # fmt: skip


def merge_snapshot(directory: str | Path, threads: int = 0) -> MergeReport:
    """Merge every segment into one without deleted rows (``evidencedesk index --merge``); the caller
    holds ``writer_lock``. Returns the segment count before and the rows kept."""
    directory = Path(directory)
    manifest = as_manifest(read_manifest(directory))
    folder = directory / SEGMENTS
    segments = [s for s in _open(directory, manifest) if s.n_live]
    before = len(manifest["segments"])
    number = int(manifest["next_segment"])
    if len(segments) > 1 or any(s.n_deleted for s in segments):
        segments, number = _merge(folder, segments, [s.name for s in segments], number, manifest, threads)
    generation = int(manifest["generation"]) + 1
    manifest["generation"] = generation
    manifest["next_segment"] = number
    manifest["segments"] = [_entry(folder, s, generation) for s in segments]
    write_manifest(directory, manifest)
    _collect(directory, manifest)
    return {"segments_before": before, "segments": len(segments), "rows": sum(s.n_live for s in segments)}


def _open(directory: Path, manifest: Manifest) -> list[Segment]:
    folder = directory / SEGMENTS
    out = []
    for entry in manifest["segments"]:
        tombstones = entry.get("deleted")
        deleted = np.load(folder / tombstones) if tombstones else None
        out.append(Segment(folder / entry["name"], deleted, "segment"))
    for seg, entry in zip(out, manifest["segments"], strict=True):
        seg.live = None if seg.live is None else seg.live.copy()  # writable: this update deletes more rows
        seg.tombstones = entry.get("deleted")  # kept as is unless more rows are deleted
    return out


def _merge(
    folder: Path, segments: list[Segment], names: Sequence[str], number: int, manifest: Manifest, threads: int
) -> tuple[list[Segment], int]:
    """Replace the segments named ``names`` by one holding their live rows (at the first one's place)."""
    chosen = [s for s in segments if s.name in set(names)]
    name = segment_name(number)
    writer = SegmentWriter(folder / name)
    for seg in chosen:
        writer.add_live_rows(seg)
    has_dense = manifest.get("dense") is not None
    rows = writer.finish(has_dense, manifest.get("ann", False), threads, manifest.get("ann_params"))
    out: list[Segment] = []
    placed = False
    for seg in segments:
        if seg.name not in set(names):
            out.append(seg)
        elif not placed:
            placed = True
            if rows:
                out.append(Segment(folder / name, None, "segment"))
    if not rows:
        shutil.rmtree(folder / name)
    return out, number + 1


def _entry(folder: Path, seg: Segment, generation: int) -> SegmentEntry:
    """The manifest entry of ``seg``, writing its tombstones as a new file when it has any."""
    entry: SegmentEntry = {"name": seg.name, "rows": seg.n_rows, "deleted": None, "n_deleted": seg.n_deleted}
    if seg.live is not None and seg.n_deleted:
        if seg.tombstones is None:
            seg.tombstones = f"{seg.name}.del{generation}.npy"
            np.save(folder / seg.tombstones, ~seg.live)
        entry["deleted"] = seg.tombstones
    return entry


def _collect(directory: Path, manifest: Manifest) -> None:
    """Remove the segment folders and tombstone files the manifest no longer names."""
    keep = {e["name"] for e in manifest["segments"]} | {e["deleted"] for e in manifest["segments"] if e["deleted"]}
    for path in (directory / SEGMENTS).iterdir():
        if path.name not in keep:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
