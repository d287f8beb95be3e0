"""One error hierarchy: every error evidencedesk raises on purpose is an ``EvidencedeskError``.

```
EvidencedeskError
├── ConfigError        a settings file or value that cannot be used (also a ValueError)
│   └── NothingInScope the store holds no chunk inside the request's scope
├── StoreError         a store that cannot be opened or written
│   └── PgStoreError   ... because of the PostgreSQL server or schema
├── IngestError        one file that could not become a Document
├── LabelError         a labels file with bad lines (also a ValueError)
├── SnapshotError      a snapshot that is missing, of another format or out of date (also a ValueError)
├── GenerationError    a language model that could not be reached or gave no usable reply (also a RuntimeError)
│   └── ModelBusy      ... because its request queue is full (the service answers 503 with Retry-After)
├── GraphLayoutError   an ONNX graph that is not the layout the fused MiniLM rebuild knows (also a ValueError)
├── TooLargeForMemory  a step that would hold more chunks in memory than its limit allows
└── RequestRefused     a request the service turns down, with its HTTP status
    ├── AccessError    a key that is wrong or does not allow the request (401, 403)
    ├── PathRefused    a server-side path a request may not use (400, 403, 404)
    └── WriteRefused   an ingest outside the key's scope (403)
```

Catch ``EvidencedeskError`` to handle everything the toolkit reports; the classes that were plain
``ValueError`` or ``RuntimeError`` before stay subclasses of them, so older handlers keep working.
``ERROR_TABLE`` says what each class means to the command line (its exit code) and to the service
(its HTTP status); ``exit_code`` and ``http_status`` read it, and nothing else decides either.
This module imports nothing from the package, so every layer can raise these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class EvidencedeskError(Exception):
    """The base of every error evidencedesk raises on purpose."""


class ConfigError(EvidencedeskError, ValueError):
    """A configuration file or value that cannot be used; the message names the file and key."""


class NothingInScope(ConfigError):
    """The store holds chunks, but none inside the scope a request asked for."""


class StoreError(EvidencedeskError):
    """The store cannot be opened or written (not a folder, a newer schema, locked by another run)."""


class PgStoreError(StoreError):
    """The PostgreSQL store cannot be opened (server unreachable, no pgvector, a newer schema)."""


class IngestError(EvidencedeskError):
    """A file that failed to parse. ``path`` is the file (relative to the ingested folder), ``reason`` says why."""

    def __init__(self, path: str, reason: str) -> None:
        if not reason:
            raise ValueError("IngestError reason: must not be empty")
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[IngestError], tuple[str, str]]:
        return IngestError, (self.path, self.reason)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def duplicate_id(cls, path: str, doc_id: str, first_path: str) -> IngestError:
        """The error for the file at ``path`` whose document id ``doc_id`` an earlier file already claimed."""
        return cls(path, f"duplicate id {doc_id!r}: already used by {first_path}")


class LabelError(EvidencedeskError, ValueError):
    """A labels file has bad lines; ``issues`` lists every one of them (each prints as ``path:line: field: why``)."""

    def __init__(self, issues: Sequence[Any]) -> None:
        self.issues = list(issues)
        lines = "\n".join(f"  {i}" for i in self.issues)
        super().__init__(f"{len(self.issues)} problem(s) in labels file:\n{lines}")


class SnapshotError(EvidencedeskError, ValueError):
    """A snapshot that is missing, from another format, or out of date; the message names the folder."""


class GenerationError(EvidencedeskError, RuntimeError):
    """A language model could not be reached or gave no usable reply."""


class ModelBusy(GenerationError):
    """A local model's request queue is full; ``retry_after`` is the suggested wait in whole seconds."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))

    def __reduce__(self) -> tuple[type[ModelBusy], tuple[str, int]]:
        return ModelBusy, (str(self), self.retry_after)


class GraphLayoutError(EvidencedeskError, ValueError):
    """An ONNX graph that is not the BERT layout ``index.minilm_graph.fused_minilm`` knows how to rebuild."""


class TooLargeForMemory(EvidencedeskError):
    """A step that would hold every chunk in memory (an in-memory index, a re-chunking) over a store with
    more chunks than the limit set for it (``Desk.max_memory_chunks``; the service's ``max_memory_chunks``)."""


class RequestRefused(EvidencedeskError):
    """A request the service turns down: ``status`` is the HTTP status, ``message`` says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class AccessError(RequestRefused):
    """A request the caller may not make: ``status`` is 401 (no or wrong key) or 403 (not allowed)."""


class PathRefused(RequestRefused):
    """A path a request may not use: ``status`` is 400 (malformed), 403 (outside the root) or 404."""


class WriteRefused(RequestRefused):
    """An ingest the key may not make (403); the message names the file, never another tenant's data."""

    def __init__(self, message: str) -> None:
        super().__init__(403, message)

    def __reduce__(self) -> tuple[type[WriteRefused], tuple[str]]:
        return WriteRefused, (self.message,)


# What each error means to each face: (class, CLI exit code, HTTP status). The first class an error is
# an instance of decides, so subclasses come before their bases. Exit code 2 is a usage error (a bad
# flag, setting or argument), 1 any other failure. A RequestRefused answers with its own ``status``.
# A plain ValueError is a bad argument that reached a lower layer unchecked: a usage error too.
ERROR_TABLE: tuple[tuple[type[Exception], int, int], ...] = (
    (NothingInScope, 2, 409),
    (ConfigError, 2, 400),
    (LabelError, 1, 400),
    (SnapshotError, 1, 400),
    (IngestError, 1, 400),
    (TooLargeForMemory, 1, 413),
    (StoreError, 1, 409),
    (GenerationError, 1, 503),
    (RequestRefused, 1, 400),
    (EvidencedeskError, 1, 500),
    (ValueError, 2, 400),
)


def _row(exc: BaseException) -> tuple[type[Exception], int, int] | None:
    return next((row for row in ERROR_TABLE if isinstance(exc, row[0])), None)


def exit_code(exc: BaseException) -> int:
    """The command line's exit code for ``exc`` (``ERROR_TABLE``; 1 for anything it does not name)."""
    row = _row(exc)
    return row[1] if row is not None else 1


def http_status(exc: BaseException) -> int:
    """The service's HTTP status for ``exc``: a RequestRefused's own, else ``ERROR_TABLE``'s (500 for
    anything it does not name)."""
    if isinstance(exc, RequestRefused):
        return exc.status
    row = _row(exc)
    return row[2] if row is not None else 500


__all__ = [
    "ERROR_TABLE",
    "AccessError",
    "ConfigError",
    "EvidencedeskError",
    "GenerationError",
    "GraphLayoutError",
    "IngestError",
    "LabelError",
    "ModelBusy",
    "NothingInScope",
    "PathRefused",
    "PgStoreError",
    "RequestRefused",
    "SnapshotError",
    "StoreError",
    "TooLargeForMemory",
    "WriteRefused",
    "exit_code",
    "http_status",
]
