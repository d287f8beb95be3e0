"""ChunkingConfig: which chunker, with which parameters; hashed so a changed chunker is visible."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from evidencedesk.constants import CHUNKERS, UNITS
from evidencedesk.json_types import JsonObject

DEFAULT_SEPARATORS = ("\n\n", "\n", ". ", " ")


@dataclass(frozen=True)
class ChunkingConfig:
    """``size`` and ``overlap`` are counted in ``unit`` (characters or words).

    ``parent_child`` uses ``size`` for the children and returns the whole section as the parent.
    """

    name: str = "structure"
    size: int = 120
    overlap: int = 0
    unit: str = "words"
    separators: tuple[str, ...] = field(default=DEFAULT_SEPARATORS)

    def __post_init__(self) -> None:
        if self.name not in CHUNKERS:
            raise ValueError(f"chunker: unknown name {self.name!r}; choose one of {', '.join(CHUNKERS)}")
        if self.unit not in UNITS:
            raise ValueError(f"chunker unit: must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.size < 1:
            raise ValueError(f"chunker size: must be at least 1, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ValueError(f"chunker overlap: must be at least 0 and below size {self.size}, got {self.overlap}")
        if not self.separators or any(not s for s in self.separators):
            raise ValueError("chunker separators: need at least one non-empty separator")

    def to_dict(self) -> JsonObject:
        """The config as JSON (what a build records and ``hash`` digests)."""
        return {
            "name": self.name,
            "size": self.size,
            "overlap": self.overlap,
            "unit": self.unit,
            "separators": list(self.separators),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChunkingConfig:
        unknown = set(d) - {"name", "size", "overlap", "unit", "separators"}
        if unknown:
            raise ValueError(f"chunker: unknown key(s) {', '.join(sorted(unknown))}")
        d = dict(d)
        if "separators" in d:
            d["separators"] = tuple(d["separators"])
        return cls(**d)

    def hash(self) -> str:
        """A short stable digest of the config; recorded with every build."""
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]
