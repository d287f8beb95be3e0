"""Sections: one chunk per heading section, from the heading line to the line before the next heading.

Size and overlap are ignored: a section is a chunk however long it is. Text before the first heading
is a section of its own with an empty heading path. Formats that are not Markdown use the document's
own sections (a PDF's pages; the whole file for plain text).
"""

from __future__ import annotations

from evidencedesk.chunking.blocks import group_sections
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece, span_piece, to_chunks
from evidencedesk.documents import Chunk, Document


def section_pieces(layout: Layout) -> list[Piece]:
    """One piece per section of ``layout``, its heading path that of the section's first block."""
    pieces: list[Piece] = []
    for blocks in group_sections(layout.blocks):
        piece = span_piece(layout, *layout.span(blocks[0].first, blocks[-1].last))
        if piece is not None:
            pieces.append(piece)
    return pieces


def chunk_section(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """One chunk per section (see the module docstring)."""
    return to_chunks(doc, section_pieces(Layout.of(doc)))
