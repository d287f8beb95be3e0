"""PowerPoint files (.pptx), read with python-pptx into Markdown, one section per slide.

Each slide becomes a level-1 heading (its title placeholder, else ``Slide N``) followed by its shapes
in reading order (top to bottom, then left to right): text frames as paragraphs (indented paragraphs
as ``- `` items), tables as GFM pipe tables whose first row is the header, grouped shapes opened up.
Speaker notes follow as a paragraph. Every section carries its slide number as its ``page``, so a
chunk cites its slide. Title: metadata ``title``, else the Title property, else the first slide's
title, else the file stem; Created and Modified are kept as ``created`` and ``modified``.

python-pptx is the optional ``office`` extra; without it a .pptx file fails alone with a clear error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.office import (
    core_properties,
    escape,
    markdown_table,
    office_document,
    open_office_file,
    paged_text,
    squash,
)


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order, groups opened up."""
    ordered = sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0)))
    for shape in ordered:
        if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
            yield from _shapes(shape.shapes)
        else:
            yield shape


def slide_blocks(slide: Any, number: int) -> list[str]:
    """The Markdown blocks of one slide: its heading, then text, tables and notes."""
    title_shape = slide.shapes.title
    title = squash(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
    blocks = [f"# {title or f'Slide {number}'}"]
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            table = markdown_table(rows)
            if table:
                blocks.append("\n".join(table))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            items: list[str] = []
            for paragraph in shape.text_frame.paragraphs:
                text = squash(paragraph.text)
                if not text:
                    continue
                if paragraph.level > 0:
                    items.append("- " + text)
                else:
                    if items:
                        blocks.append("\n".join(items))
                        items = []
                    blocks.append(escape(text))
            if items:
                blocks.append("\n".join(items))
    if slide.has_notes_slide:
        notes = squash(slide.notes_slide.notes_text_frame.text) if slide.notes_slide.notes_text_frame else ""
        if notes:
            blocks.append(escape(notes))
    return blocks


def parse_pptx(raw: bytes, rel: str, fields: Mapping[str, Any] | None = None) -> Document:
    """Parse a PowerPoint file's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file (it wins over the document properties)."""
    deck = open_office_file(raw, rel, "pptx", "PowerPoint file", lambda lib, f: lib.Presentation(f))
    pages = [slide_blocks(slide, n) for n, slide in enumerate(deck.slides, start=1)]
    text, found = paged_text(pages)
    if not any(len(blocks) > 1 for blocks in pages):
        raise IngestError(rel, "empty file: the presentation has no text")
    info = declared(rel, {**core_properties(deck.core_properties), **(fields or {})})
    first = pages[0][0][2:] if pages else ""
    return office_document(raw, rel, info, "pptx", text, found, first)
