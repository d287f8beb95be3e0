"""Structure-aware chunks: text packed up to ``size``, tables cut only between rows, code never cut.

Each section (a heading and the blocks up to the next heading) is chunked on its own, so no chunk
crosses a heading. Within a section, consecutive text blocks (the heading line, paragraphs, lists,
quotes) are packed up to ``size``; a text block longer than ``size`` is first cut on
``config.separators``. A table that fits is one chunk; a longer one is cut between rows and every
piece starts with the table's header row and separator row (a continued piece's ``first_line`` is its
first row's line). A code block is one chunk whatever its length, line breaks kept. Every chunk is
one kind: ``text``, ``table`` or ``code``. Text keeps the source's line breaks in either unit.
Overlap is ignored. A heading directly followed by a table or code block is a short text chunk.

A paged document (a PDF, a slide deck, a workbook) is chunked so that every chunk holds content (see
:mod:`.attach`): the headings and short caption lines ("($ in millions)", "Three Months Ended March
31,") directly above a table open every piece of that table (a table piece may exceed ``size`` by its
caption), and a chunk that would hold nothing but headings is joined to the chunk after it (the last
one of a document to the chunk before it).
"""

from __future__ import annotations

from collections.abc import Sequence

from evidencedesk.chunking.attach import attach_headings, caption_blocks
from evidencedesk.chunking.blocks import Block, group_sections, paged
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece, span_piece, to_chunks
from evidencedesk.chunking.spans import measure, pack, split
from evidencedesk.documents import Chunk, Document


def _text_pieces(layout: Layout, blocks: Sequence[Block], config: ChunkingConfig) -> list[Piece]:
    units: list[tuple[int, int]] = []
    for block in blocks:
        units.extend(split(layout, *layout.block_span(block), config.separators, config.size, config.unit))
    spans = pack(layout, units, config.size, config.unit)
    return [p for p in (span_piece(layout, a, b, "text") for a, b in spans) if p is not None]


def _table_pieces(layout: Layout, block: Block, config: ChunkingConfig, caption: Sequence[Block] = ()) -> list[Piece]:
    """The pieces of a table, each opening with ``caption`` (blocks just above the table) when given."""
    lines = layout.lines
    path = block.heading_path
    top = caption[0].first if caption else block.first
    above = [line for b in caption for line in (layout.text[slice(*layout.span(b.first, b.last))], "")]
    whole = "\n".join(lines[block.first : block.last + 1])
    if block.last - block.first < 2 or measure(whole, config.unit) <= config.size:
        return [Piece("\n".join([*above, whole]), "table", top, block.last, path)]
    head = [lines[block.first], lines[block.first + 1]]
    groups: list[list[int]] = [[]]
    for row in range(block.first + 2, block.last + 1):
        candidate = "\n".join(head + [lines[i] for i in groups[-1]] + [lines[row]])
        if groups[-1] and measure(candidate, config.unit) > config.size:
            groups.append([])
        groups[-1].append(row)
    pieces = []
    for n, rows in enumerate(groups):
        text = "\n".join(above + head + [lines[i] for i in rows])
        pieces.append(Piece(text, "table", top if n == 0 else rows[0], rows[-1], path))
    return pieces


def section_structure(
    layout: Layout, blocks: Sequence[Block], config: ChunkingConfig, captions: bool = False
) -> list[Piece]:
    """The structure pieces of one section's blocks, in order; with ``captions``, the headings and short
    lines just above a table open each of its pieces instead of making a text piece of their own."""
    pieces: list[Piece] = []
    pending: list[Block] = []
    for block in [*blocks, None]:
        if block is not None and block.kind in ("heading", "text"):
            pending.append(block)
            continue
        caption: list[Block] = []
        if captions and block is not None and block.kind == "table":
            pending, caption = caption_blocks(layout, pending)
        if pending:
            pieces.extend(_text_pieces(layout, pending, config))
            pending = []
        if block is None:
            break
        if block.kind == "table":
            pieces.extend(_table_pieces(layout, block, config, caption))
        else:
            piece = span_piece(layout, *layout.block_span(block), "code")
            if piece is not None:
                pieces.append(piece)
    return pieces


def structure_sections(
    layout: Layout, config: ChunkingConfig, captions: bool = False
) -> list[tuple[list[Block], list[Piece]]]:
    """Each section's blocks with its structure pieces, in document order (``captions``: see ``section_structure``)."""
    return [(blocks, section_structure(layout, blocks, config, captions)) for blocks in group_sections(layout.blocks)]


def chunk_structure(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """Structure-aware chunks (see the module docstring)."""
    layout = Layout.of(doc)
    if not paged(doc):
        return to_chunks(doc, [p for _, pieces in structure_sections(layout, config) for p in pieces])
    pieces = [p for _, found in structure_sections(layout, config, captions=True) for p in found]
    return to_chunks(doc, attach_headings(pieces, config.size, config.unit))
