"""Fixed windows: ``size`` characters or words at a time, each starting ``size - overlap`` after the last.

Blind to structure on purpose: a window may cut a word, a table row or a code block. Character
windows keep the source text (trimmed); word windows rejoin their words with single spaces. The
last window is the first one that reaches the end of the body, so no window lies wholly inside another.
"""

from __future__ import annotations

import re

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece, span_piece, to_chunks
from evidencedesk.documents import Chunk, Document

_WORD = re.compile(r"\S+")


def _windows(total: int, size: int, overlap: int) -> list[tuple[int, int]]:
    windows: list[tuple[int, int]] = []
    start = 0
    while start < total:
        windows.append((start, min(start + size, total)))
        if start + size >= total:
            break
        start += size - overlap
    return windows


def chunk_fixed(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """Fixed windows over the whole body (see the module docstring)."""
    layout = Layout.of(doc)
    pieces: list[Piece | None] = []
    if config.unit == "chars":
        for start, end in _windows(len(doc.text), config.size, config.overlap):
            pieces.append(span_piece(layout, start, end))
    else:
        words = [(m.start(), m.end()) for m in _WORD.finditer(doc.text)]
        for a, b in _windows(len(words), config.size, config.overlap):
            start, end = words[a][0], words[b - 1][1]
            piece = span_piece(layout, start, end)
            if piece is not None:
                text = " ".join(doc.text[s:e] for s, e in words[a:b])
                pieces.append(Piece(text, piece.kind, piece.first, piece.last, piece.heading_path))
    return to_chunks(doc, pieces)
