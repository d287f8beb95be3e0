"""Contextual chunk text: prefix a chunk with where it sits (document title > heading path) before indexing.

A chunk such as "Refunds take 14 days." says nothing about which policy it belongs to; with the
prefix "Returns policy > Refunds" its vector and its terms carry that context.
"""

from __future__ import annotations

from evidencedesk.documents import Chunk


def context_line(chunk: Chunk) -> str:
    """``title > heading > subheading`` (the title is not repeated when the first heading is the title)."""
    parts = [p.strip() for p in (chunk.title, *chunk.location.heading_path) if p and p.strip()]
    if len(parts) > 1 and parts[0].casefold() == parts[1].casefold():
        parts = parts[1:]
    return " > ".join(parts)


def index_text(chunk: Chunk, contextual: bool = False) -> str:
    """The text to embed or index for ``chunk``: its own text, or the context line then the text."""
    if not contextual:
        return chunk.text
    line = context_line(chunk)
    if not line or chunk.text.startswith(line):
        return chunk.text
    return f"{line}\n{chunk.text}"
