"""Plain text files (.txt): no front matter, so every metadata field takes its default.

The id comes from the relative path, the title is the file stem, and the whole file is one section
with an empty heading path.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from evidencedesk.documents import Document, Metadata, Section
from evidencedesk.ingest.raw import content_hash, decode_text, doc_id_from_path


def whole_section(text: str, first_line: int = 1) -> tuple[Section, ...]:
    """One untitled section from the first to the last non-blank line of ``text``."""
    filled = [i for i, line in enumerate(text.split("\n")) if line.strip()]
    return (Section((), first_line + filled[0], first_line + filled[-1]),) if filled else ()


def parse_text(raw: bytes, rel: str) -> Document:
    """Parse a plain text file's bytes; ``rel`` is its path relative to the ingested folder."""
    text = decode_text(raw, rel)
    return Document(
        id=doc_id_from_path(rel),
        title=PurePosixPath(rel).stem,
        path=rel,
        format="text",
        text=text,
        content_hash=content_hash(raw),
        metadata=Metadata(),
        sections=whole_section(text),
        first_line=1,
    )
