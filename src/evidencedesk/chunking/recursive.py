"""Recursive splitting: cut the body on ``config.separators`` in order, then merge pieces up to ``size``.

The body is cut on the first separator it contains; any piece still longer than ``size`` is cut on
the next separator, and so on, with hard cuts when none is left. Consecutive pieces are then merged
while the merged text stays within ``size``; ``overlap`` repeats whole trailing pieces of the chunk
before (see :func:`evidencedesk.chunking.spans.pack`). Headings are ordinary text here.
"""

from __future__ import annotations

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import span_piece, to_chunks
from evidencedesk.chunking.spans import pack, split
from evidencedesk.documents import Chunk, Document


def chunk_recursive(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """Recursive separator splitting of the whole body (see the module docstring)."""
    layout = Layout.of(doc)
    pieces = split(layout, 0, len(doc.text), config.separators, config.size, config.unit)
    spans = pack(layout, pieces, config.size, config.unit, config.overlap)
    return to_chunks(doc, (span_piece(layout, a, b) for a, b in spans))
