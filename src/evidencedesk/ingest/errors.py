"""IngestError: why one file could not be turned into a Document."""

from __future__ import annotations

from typing import Any


class IngestError(Exception):
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
