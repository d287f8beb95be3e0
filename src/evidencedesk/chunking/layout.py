"""Layout: a body's lines, their character offsets and blocks, and the lookups every chunker shares.

Chunkers work on character spans ``[start, end)`` of ``Document.text`` so that a chunk's text is the
source text itself and its line numbers are exact.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from evidencedesk.chunking.blocks import Block, document_blocks
from evidencedesk.documents import Document


class Layout:
    """Lines, line offsets and blocks of one document body (0-based line indexes)."""

    def __init__(self, text: str, blocks: Sequence[Block]) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1
        self.blocks = list(blocks)
        self._block_at: list[int | None] = [None] * len(self.lines)
        self._path_at: list[tuple[str, ...]] = [()] * len(self.lines)
        for n, block in enumerate(self.blocks):
            if block.last >= len(self.lines):
                raise ValueError(f"block lines {block.first}..{block.last} run past the body's {len(self.lines)} lines")
            for i in range(block.first, block.last + 1):
                self._block_at[i] = n
        path: tuple[str, ...] = ()
        for i in range(len(self.lines)):
            at = self._block_at[i]
            if at is not None:
                path = self.blocks[at].heading_path
            self._path_at[i] = path

    @classmethod
    def of(cls, doc: Document) -> Layout:
        return cls(doc.text, document_blocks(doc))

    def line_of(self, offset: int) -> int:
        """The line index holding character ``offset``."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The character span of lines ``first..last`` (inclusive), without the final line break."""
        return self.starts[first], self.starts[last] + len(self.lines[last])

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """``[start, end)`` without surrounding whitespace, except that a line's own indentation is kept
        when the span begins at (or in the indentation of) that line. Empty spans come back as ``(end, end)``."""
        text = self.text
        while end > start and text[end - 1].isspace():
            end -= 1
        while start < end and text[start].isspace():
            start += 1
        if start >= end:
            return end, end
        line_start = self.starts[self.line_of(start)]
        if line_start < start and not text[line_start:start].strip():
            start = line_start
        return start, end

    def path_at(self, line: int) -> tuple[str, ...]:
        """The heading path in force at ``line``."""
        return self._path_at[line]

    def kind_of(self, first: int, last: int) -> str:
        """``table`` or ``code`` when the non-blank lines ``first..last`` all lie in one such block, else ``text``."""
        found = {self._block_at[i] for i in range(first, last + 1) if self.lines[i].strip()}
        if len(found) == 1:
            n = found.pop()
            if n is not None and self.blocks[n].kind in ("table", "code"):
                return self.blocks[n].kind
        return "text"

    def block_span(self, block: Block) -> tuple[int, int]:
        return self.span(block.first, block.last)
