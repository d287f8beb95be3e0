"""IngestReport: what one ingest did, by document id, and how it went (files read, snapshot updated,
chunks embedded). ``to_dict()`` is the JSON that ``evidencedesk ingest --json`` prints and
``POST /ingest`` returns; ``from_dict`` reads it back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evidencedesk.chunking.config import ChunkingConfig


@dataclass(frozen=True)
class FileFailure:
    """A file the ingest could not store: its path (relative to the folder), why, and ``kept``: the id of
    a previously stored version that stays in the store because the file now fails (else None)."""

    path: str
    reason: str
    kept: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason, "kept": self.kept}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileFailure:
        return cls(str(d["path"]), str(d["reason"]), d.get("kept"))


@dataclass(frozen=True)
class UnknownSupersedes:
    """A document of the run whose ``supersedes:`` names no document of its tenant in the store."""

    path: str
    doc_id: str
    supersedes: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "doc_id": self.doc_id, "supersedes": self.supersedes}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> UnknownSupersedes:
        return cls(str(d["path"]), str(d["doc_id"]), str(d["supersedes"]))


@dataclass(frozen=True)
class StepProgress:
    """How a long step went: ``count`` items done of ``total``, in ``seconds``, at ``per_second``."""

    count: int
    total: int
    seconds: float
    per_second: float

    def to_dict(self) -> dict[str, object]:
        return {"count": self.count, "total": self.total, "seconds": self.seconds, "per_second": self.per_second}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StepProgress:
        return cls(int(d["count"]), int(d["total"]), d["seconds"], d["per_second"])


@dataclass(frozen=True)
class EmbeddingProgress(StepProgress):
    """What ``Desk.embed`` did: ``count`` chunks embedded now, ``total`` chunks stored, with ``model``."""

    model: str = ""

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "model": self.model}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EmbeddingProgress:
        step = StepProgress.from_dict(d)
        return cls(step.count, step.total, step.seconds, step.per_second, str(d["model"]))


@dataclass(frozen=True)
class SnapshotUpdate:
    """How an ingest brought the store's snapshot up to date: chunk rows ``added`` (in one new segment) and
    ``deleted``, the ``documents`` written, the sizes of the automatic ``merged`` groups, the ``segments``
    after, and the ``seconds`` it took."""

    added: int
    deleted: int
    documents: int
    merged: tuple[int, ...]
    segments: int
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"added": self.added, "deleted": self.deleted, "documents": self.documents,
                "merged": list(self.merged), "segments": self.segments, "seconds": self.seconds}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SnapshotUpdate:
        return cls(
            int(d["added"]), int(d["deleted"]), int(d["documents"]), tuple(int(m) for m in d["merged"]),
            int(d["segments"]), d["seconds"],
        )  # fmt: skip


@dataclass(frozen=True)
class SnapshotNotUpdated:
    """Why an ingest could not bring the store's snapshot up to date (searches then build in memory)."""

    error: str

    def to_dict(self) -> dict[str, object]:
        return {"error": self.error}


@dataclass(frozen=True)
class IngestProgress:
    """How the run went: ``files`` read; ``index``, when the store has a snapshot, how it was brought up
    to date; ``embedding``, when embeddings were computed at ingest. A step that did not run is None
    and left out of the JSON."""

    files: StepProgress | None = None
    index: SnapshotUpdate | SnapshotNotUpdated | None = None
    embedding: EmbeddingProgress | None = None

    def to_dict(self) -> dict[str, object]:
        steps = (("files", self.files), ("index", self.index), ("embedding", self.embedding))
        return {name: step.to_dict() for name, step in steps if step is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IngestProgress:
        index = d.get("index")
        return cls(
            files=StepProgress.from_dict(d["files"]) if d.get("files") else None,
            index=None if not index else SnapshotNotUpdated(index["error"]) if "error" in index
            else SnapshotUpdate.from_dict(index),
            embedding=EmbeddingProgress.from_dict(d["embedding"]) if d.get("embedding") else None,
        )  # fmt: skip


@dataclass(frozen=True)
class Chunking:
    """The chunking a run used and its ``hash`` (recorded with every build)."""

    config: ChunkingConfig
    hash: str

    @property
    def name(self) -> str:
        return self.config.name

    def to_dict(self) -> dict[str, object]:
        return {**self.config.to_dict(), "hash": self.hash}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Chunking:
        return cls(ChunkingConfig.from_dict({k: v for k, v in d.items() if k != "hash"}), str(d.get("hash", "")))


def _ids(values: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())


@dataclass(frozen=True)
class IngestReport:
    """What one ingest run did, by document id.

    ``added`` and ``updated`` (content changed or re-chunked with a new config), ``unchanged`` (skipped
    by hash), ``removed`` (the file is gone); ``failed`` names each file that could not be stored and
    why; ``skipped`` lists files no parser handles. ``n_documents`` and ``n_chunks`` count the whole
    store after the run; ``chunking`` is what the run chunked with; ``progress`` how it went.
    ``unknown_supersedes`` lists the documents whose ``supersedes:`` names no document of their
    tenant; the JSON has the key only when there is one.
    """

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    failed: tuple[FileFailure, ...] = ()
    skipped: tuple[str, ...] = ()
    build_id: int | None = None
    chunking: Chunking | None = None
    n_documents: int = 0
    n_chunks: int = 0
    progress: IngestProgress = field(default_factory=IngestProgress)
    unknown_supersedes: tuple[UnknownSupersedes, ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "removed": list(self.removed),
            "failed": [f.to_dict() for f in self.failed],
            "skipped": list(self.skipped),
            "build_id": self.build_id,
            "chunking": self.chunking.to_dict() if self.chunking is not None else {},
            "n_documents": self.n_documents,
            "n_chunks": self.n_chunks,
            "progress": self.progress.to_dict(),
        }
        if self.unknown_supersedes:  # the report of a run without one reads as it always did
            out["unknown_supersedes"] = [u.to_dict() for u in self.unknown_supersedes]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IngestReport:
        """The report ``to_dict`` gave (or a store's record of a run, which has the same keys)."""
        return cls(
            added=_ids(d.get("added")),
            updated=_ids(d.get("updated")),
            unchanged=_ids(d.get("unchanged")),
            removed=_ids(d.get("removed")),
            failed=tuple(FileFailure.from_dict(f) for f in d.get("failed") or ()),
            skipped=_ids(d.get("skipped")),
            build_id=d.get("build_id"),
            chunking=Chunking.from_dict(d["chunking"]) if d.get("chunking") else None,
            n_documents=int(d.get("n_documents", 0)),
            n_chunks=int(d.get("n_chunks", 0)),
            progress=IngestProgress.from_dict(d.get("progress") or {}),
            unknown_supersedes=tuple(UnknownSupersedes.from_dict(u) for u in d.get("unknown_supersedes") or ()),
        )


__all__ = [
    "Chunking",
    "EmbeddingProgress",
    "FileFailure",
    "IngestProgress",
    "IngestReport",
    "SnapshotNotUpdated",
    "SnapshotUpdate",
    "StepProgress",
]
