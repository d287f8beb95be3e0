"""Parent-child: small structure pieces are matched; their whole section is what a reader gets.

Only the children are returned (they are what an index holds). Each child is a structure chunk of
about ``size`` (see :mod:`.structure`) and carries ``parent_id`` ``<doc_id>:p<n>`` (``n`` counts the
document's sections from 0 in order) and ``parent_text``, the section's whole text from its heading
line to its last non-blank line. Children of one section share both, so a caller can swap every
matched child for its parent and drop the repeats.
"""

from __future__ import annotations

from dataclasses import replace

from evidencedesk.chunking.blocks import paged
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece, strip_blank_lines, to_chunks
from evidencedesk.chunking.structure import structure_sections
from evidencedesk.documents import Chunk, Document


def parent_id(doc_id: str, n: int) -> str:
    """The id of a document's ``n``-th parent section (0-based)."""
    return f"{doc_id}:p{n}"


def chunk_parent_child(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """Child chunks with their parent's id and text (see the module docstring)."""
    layout = Layout.of(doc)
    children: list[Piece] = []
    for n, (blocks, pieces) in enumerate(structure_sections(layout, config, paged(doc))):
        start, end = layout.span(blocks[0].first, blocks[-1].last)
        parent_text = strip_blank_lines(doc.text[start:end])
        children.extend(replace(p, parent_id=parent_id(doc.id, n), parent_text=parent_text) for p in pieces)
    return to_chunks(doc, children)
