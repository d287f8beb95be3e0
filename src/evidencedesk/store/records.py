"""What the store hands back about its runs: Build (one recorded ingest) and IngestReport."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from evidencedesk.store.json_data import JsonObject


@dataclass(frozen=True)
class Build:
    """One ingest run as recorded: the chunking it used and the store's size after it."""

    id: int
    created_at: str
    chunking: JsonObject
    chunking_hash: str
    n_documents: int
    n_chunks: int
    report: JsonObject

    def to_dict(self) -> JsonObject:
        return asdict(self)


class FailedFile(TypedDict):
    """A file (or document) an ingest run could not store: its path, why, and the id of the stored version
    that stays because of it (None when there is none)."""

    path: str
    reason: str
    kept: str | None


@dataclass
class IngestReport:
    """What one ingest run did, by document id.

    ``updated`` holds documents whose content changed or that were re-chunked with a new config.
    ``failed`` holds ``{"path", "reason", "kept"}``: ``kept`` is the id of a previously stored
    version that stays in the store because the file now fails, else None. ``skipped`` lists files
    no parser handles. ``n_documents`` and ``n_chunks`` count the whole store after the run.
    ``progress`` holds how the run went: ``files`` (and, when embeddings were computed at ingest,
    ``embedding``) with their count, total, seconds and rate per second. ``unknown_supersedes``
    holds ``{"path", "doc_id", "supersedes"}`` for each document of the run whose ``supersedes:``
    names no document of its tenant in the store; the JSON has the key only when one does.
    """

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[FailedFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    build_id: int | None = None
    chunking: JsonObject = field(default_factory=dict)
    n_documents: int = 0
    n_chunks: int = 0
    progress: dict[str, JsonObject] = field(default_factory=dict)
    unknown_supersedes: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        out = asdict(self)
        if not self.unknown_supersedes:  # the report of a run without one reads as it always did
            del out["unknown_supersedes"]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IngestReport:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})
