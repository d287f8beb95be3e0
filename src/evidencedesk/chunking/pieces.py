"""Piece: what a chunker cuts; ``to_chunks`` numbers pieces and turns them into Chunks of a Document."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evidencedesk.chunking.blocks import check_kind_and_lines
from evidencedesk.chunking.layout import Layout
from evidencedesk.documents import CHUNK_KINDS, Chunk, Document, Location, chunk_id


@dataclass(frozen=True)
class Piece:
    """A chunk before it has an id: its text and kind, and its 0-based body lines ``first..last``."""

    text: str
    kind: str
    first: int
    last: int
    heading_path: tuple[str, ...] = ()
    parent_id: str | None = None
    parent_text: str | None = None

    def __post_init__(self) -> None:
        check_kind_and_lines("piece", self.kind, CHUNK_KINDS, self.first, self.last)


def strip_blank_lines(text: str) -> str:
    """``text`` without leading blank lines and without trailing whitespace (a first line's indent is kept)."""
    lines = text.rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def span_piece(layout: Layout, start: int, end: int, kind: str | None = None) -> Piece | None:
    """The piece holding body characters ``[start, end)`` (trimmed); None when they are all blank."""
    start, end = layout.trim(start, end)
    if start >= end:
        return None
    first, last = layout.line_of(start), layout.line_of(end - 1)
    return Piece(layout.text[start:end], kind or layout.kind_of(first, last), first, last, layout.path_at(first))


def page_finder(doc: Document) -> Callable[[int, int], tuple[int, ...]]:
    """For a paged document, ``(first, last)`` 0-based body lines -> the first and last page they lie on;
    for any other document, always ``()``."""
    starts = sorted((s.first_line - doc.first_line, s.page) for s in doc.sections if s.page)
    if not starts:
        return lambda first, last: ()
    firsts = [i for i, _ in starts]

    def page(line: int) -> int:
        k = bisect_right(firsts, line) - 1
        return starts[max(k, 0)][1]

    def pages(first: int, last: int) -> tuple[int, ...]:
        a, b = page(first), page(last)
        return (a,) if a == b else (a, b)

    return pages


def to_chunks(doc: Document, pieces: Iterable[Piece | None]) -> list[Chunk]:
    """Chunks numbered from 0 in the given order; pieces that are None or blank are left out."""
    chunks: list[Chunk] = []
    pages = page_finder(doc)
    for piece in pieces:
        if piece is None:
            continue
        text = strip_blank_lines(piece.text)
        if not text.strip():
            continue
        chunks.append(
            Chunk(
                id=chunk_id(doc.id, len(chunks)),
                doc_id=doc.id,
                text=text,
                kind=piece.kind,
                location=Location(
                    piece.heading_path,
                    doc.first_line + piece.first,
                    doc.first_line + piece.last,
                    pages(piece.first, piece.last),
                ),
                metadata=doc.metadata,
                title=doc.title,
                source=doc.path,
                parent_id=piece.parent_id,
                parent_text=piece.parent_text,
            )
        )
    return chunks
