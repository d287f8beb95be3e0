"""Chunks that hold content: captions travel with their table, headings with what follows them.

- ``caption_blocks``: of the text blocks just above a table, the trailing run of headings and short
  lines that do not end a sentence (a table's title, "($ in millions)", "Three Months Ended March 31,",
  "Assets:"), at most ``CAPTION_WORDS`` words in all: the table's caption, which opens each of its pieces.
- ``attach_headings``: a piece made of nothing but Markdown headings (and lines that say nothing
  alone: a page number such as a table of contents gives, "iv", or a run of footnote markers such as
  "1,2,5 2,5 3,5", "(1)", "* * *") is joined to the piece after it; several in a row go together to the
  first piece that holds content, unless together they grow past ``size`` (a table of contents),
  when they stay a piece of their own. Headings at the very end of a document are joined to the piece
  before them. The joined piece keeps the kind and heading path of the piece holding the content and
  spans the lines of both, so its pages stay right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from evidencedesk.chunking.blocks import Block
from evidencedesk.chunking.layout import Layout
from evidencedesk.chunking.pieces import Piece
from evidencedesk.chunking.spans import measure

CAPTION_WORDS = 40
_HEADING_LINE = re.compile(r"^#{1,6}(\s|$)")
_PAGE_NUMBER = re.compile(r"^(page\s+)?[-–—]?\s*(\d{1,4}|[ivxlcdm]{1,6})\s*[-–—]?$", re.IGNORECASE)
_MARKERS = re.compile(r"^(\(?\d{1,2}[*†‡§]?\)?[,\s]*|\(?[a-z]\)[,\s]*|[*†‡§]+[,\s]*)+$")
_SENTENCE_END = (".", "!", "?")


def _says_nothing(line: str) -> bool:
    return bool(_PAGE_NUMBER.match(line) or _MARKERS.match(line))


def heading_only(text: str) -> bool:
    """True when ``text`` has a Markdown heading and every other non-blank line is a lone page number
    or a run of footnote markers."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    headings = [line for line in lines if _HEADING_LINE.match(line)]
    return bool(headings) and all(_HEADING_LINE.match(line) or _says_nothing(line) for line in lines)


def _caption_like(layout: Layout, block: Block) -> bool:
    if block.kind == "heading":
        return True
    if block.kind != "text" or block.first != block.last:
        return False
    line = layout.lines[block.first].strip()
    return bool(line) and not line.endswith(_SENTENCE_END)


def caption_blocks(layout: Layout, blocks: Sequence[Block]) -> tuple[list[Block], list[Block]]:
    """``(rest, caption)``: ``blocks`` (the text blocks just above a table, in order) split before the
    trailing run that captions the table (see the module docstring)."""
    cut = len(blocks)
    words = 0
    while cut > 0 and _caption_like(layout, blocks[cut - 1]):
        block = blocks[cut - 1]
        words += sum(len(layout.lines[i].split()) for i in range(block.first, block.last + 1))
        if words > CAPTION_WORDS:
            break
        cut -= 1
    return list(blocks[:cut]), list(blocks[cut:])


def _join(first: Piece, second: Piece, keep: Piece) -> Piece:
    return replace(keep, text=first.text + "\n\n" + second.text, first=first.first, last=second.last)


def attach_headings(pieces: Sequence[Piece], size: int, unit: str) -> list[Piece]:
    """``pieces`` with every heading-only piece joined to its neighbour (see the module docstring)."""
    out: list[Piece] = []
    waiting: Piece | None = None  # heading-only pieces not yet attached, joined together
    for piece in pieces:
        if heading_only(piece.text):
            if waiting is not None and measure(waiting.text + "\n\n" + piece.text, unit) > size:
                out.append(waiting)
                waiting = None
            waiting = piece if waiting is None else _join(waiting, piece, piece)
            continue
        out.append(piece if waiting is None else _join(waiting, piece, piece))
        waiting = None
    if waiting is not None and out:
        before = out.pop()
        out.append(_join(before, waiting, before))
    elif waiting is not None:
        out.append(waiting)
    return out
