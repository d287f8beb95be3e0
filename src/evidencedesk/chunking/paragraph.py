"""Paragraphs: one chunk per block of non-blank lines, blocks being separated by blank lines.

A Markdown table or code block is always a block of its own, kind ``table`` or ``code``, even when
no blank line sets it apart and even when a code block holds blank lines. Size and overlap are ignored.
"""

from __future__ import annotations

from evidencedesk.chunking.blocks import line_runs
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece, span_piece, to_chunks
from evidencedesk.documents import Chunk, Document


def paragraph_runs(layout: Layout) -> list[tuple[int, int, str]]:
    """``(first line, last line, kind)`` of every paragraph, in order."""
    runs: list[tuple[int, int, str]] = []
    for block in layout.blocks:
        if block.kind in ("table", "code"):
            runs.append((block.first, block.last, block.kind))
            continue
        for first, last in line_runs(layout.lines, block.first, block.last):
            prev = runs[-1] if runs else None
            if prev is not None and prev[2] == "text" and prev[1] + 1 == first:
                runs[-1] = (prev[0], last, "text")
            else:
                runs.append((first, last, "text"))
    return runs


def chunk_paragraph(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """One chunk per paragraph (see the module docstring)."""
    layout = Layout.of(doc)
    pieces: list[Piece | None] = []
    for first, last, kind in paragraph_runs(layout):
        start, end = layout.span(first, last)
        pieces.append(span_piece(layout, start, end, kind))
    return to_chunks(doc, pieces)
