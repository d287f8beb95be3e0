"""Plain text files (.txt): no front matter; metadata comes only from outside the file (:mod:`.sidecar`).

The id comes from the relative path, the title is the file stem, and the whole file is one section
with an empty heading path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.documents import Document, Section
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.raw import content_hash, decode_text


def whole_section(text: str, first_line: int = 1) -> tuple[Section, ...]:
    """One untitled section from the first to the last non-blank line of ``text``."""
    filled = [i for i, line in enumerate(text.split("\n")) if line.strip()]
    return (Section((), first_line + filled[0], first_line + filled[-1]),) if filled else ()


def parse_text(raw: bytes, rel: str, fields: Mapping[str, Any] | None = None) -> Document:
    """Parse a plain text file's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file."""
    text = decode_text(raw, rel)
    info = declared(rel, dict(fields or {}))
    return info.document(rel, "text", text, content_hash(raw), whole_section(text))
