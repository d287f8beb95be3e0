"""Blocks of a document body: headings, text (paragraphs, lists, quotes), tables and code, with their lines.

Markdown, HTML, Word, PowerPoint and Excel bodies (all but Markdown arrive converted to Markdown; a
slide or a sheet is a section that carries its number as its page), and PDFs read into Markdown
with their pages, are parsed with markdown-it-py (CommonMark plus GFM tables); only top-level blocks
count, so a list is one block however many items it has. Any non-blank line no parser token covers (a
link reference definition, for instance) becomes a text block, so no text is ever dropped; a PDF's
sections are also cut where its page changes. Other formats (plain text, a PDF stored without pages)
are not Markdown: a ``#`` or an indented line there means nothing, so their blocks are runs of
non-blank lines and their sections are the document's own ``sections`` (a text file's single section).

Line numbers here are 0-based indexes into ``text.split("\\n")``; :mod:`.layout` turns them into source lines.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from evidencedesk.documents import Document, Section

MARKDOWN_FORMATS = ("markdown", "html", "docx", "pptx", "xlsx")
BLOCK_KINDS = ("heading", "text", "table", "code")

# Block structure only: inline parsing is skipped (it is most of the cost) except for heading titles.
_md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
_inline = MarkdownIt("commonmark")
_KIND_OF_TOKEN = {"heading_open": "heading", "table_open": "table", "fence": "code", "code_block": "code"}


@dataclass(frozen=True)
class Block:
    """A top-level block: ``first`` and ``last`` are 0-based body line indexes (inclusive, never blank).

    ``section`` numbers the sections in document order; a heading block opens a new one.
    """

    kind: str
    first: int
    last: int
    heading_path: tuple[str, ...] = ()
    section: int = 0

    def __post_init__(self) -> None:
        check_kind_and_lines("block", self.kind, BLOCK_KINDS, self.first, self.last)


def check_kind_and_lines(what: str, kind: str, kinds: Sequence[str], first: int, last: int) -> None:
    """ValueError unless ``kind`` is one of ``kinds`` and ``first..last`` are 0-based line indexes in
    order; ``what`` (``block``, ``piece``) names the object in the message."""
    if kind not in kinds:
        raise ValueError(f"{what} kind must be one of {', '.join(kinds)}, got {kind!r}")
    if not 0 <= first <= last:
        raise ValueError(f"{what} lines: need 0 <= first <= last, got {first}..{last}")


def _heading_title(inline: Token) -> str:
    """A heading's plain text: emphasis and link markup dropped, whitespace collapsed."""
    tokens = _inline.parseInline(inline.content)
    children = tokens[0].children or [] if tokens else []
    parts = [c.content for c in children if c.type in ("text", "code_inline", "html_inline")]
    return " ".join("".join(parts).split()) or inline.content.strip()


def _trim(lines: Sequence[str], first: int, last: int) -> tuple[int, int] | None:
    while first <= last and not lines[first].strip():
        first += 1
    while last >= first and not lines[last].strip():
        last -= 1
    return (first, last) if first <= last else None


def line_runs(lines: Sequence[str], first: int, last: int) -> list[tuple[int, int]]:
    """Maximal runs of non-blank lines within ``first..last``."""
    runs: list[tuple[int, int]] = []
    start = None
    for i in range(first, last + 1):
        if lines[i].strip():
            start = i if start is None else start
        elif start is not None:
            runs.append((start, i - 1))
            start = None
    if start is not None:
        runs.append((start, last))
    return runs


def markdown_blocks(text: str) -> list[Block]:
    """The top-level blocks of a Markdown body, in order, each with its heading path and section number."""
    lines = text.split("\n")
    tokens = _md.parse(text.replace("\r", ""))
    found: list[tuple[int, int, str, str, int]] = []  # first, last, kind, heading title, heading level
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.nesting == -1 or tok.map is None:
            continue
        span = _trim(lines, tok.map[0], min(tok.map[1], len(lines)) - 1)
        if span is None:
            continue
        kind = _KIND_OF_TOKEN.get(tok.type, "text")
        title = _heading_title(tokens[i + 1]) if kind == "heading" else ""
        found.append((span[0], span[1], kind, title, int(tok.tag[1]) if kind == "heading" else 0))
    covered: set[int] = set()
    for first, last, *_ in found:
        covered.update(range(first, last + 1))
    i = 0
    while i < len(lines):
        if i in covered or not lines[i].strip():
            i += 1
            continue
        end = i
        while end + 1 < len(lines) and end + 1 not in covered and lines[end + 1].strip():
            end += 1
        found.append((i, end, "text", "", 0))
        i = end + 1
    found.sort()
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    section = 0
    for first, last, kind, title, level in found:
        if kind == "heading":
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            section += 1 if blocks else 0
        blocks.append(Block(kind, first, last, tuple(t for _, t in stack), section))
    return blocks


def plain_blocks(text: str, sections: Sequence[Section] = (), first_line: int = 1) -> list[Block]:
    """Runs of non-blank lines, cut where a section of ``sections`` (source line numbers) begins.

    A line outside every section belongs to the section before it (or to an untitled first one).
    """
    lines = text.split("\n")
    starts = sorted({s.first_line - first_line: s for s in sections}.items())
    starts = [(i, s) for i, s in starts if 0 <= i < len(lines)]
    bounds = [i for i, _ in starts] + [len(lines)]
    parts: list[tuple[int, int, tuple[str, ...]]] = [(0, bounds[0] - 1, ())] if bounds[0] > 0 else []
    parts += [(i, bounds[k + 1] - 1, tuple(s.heading_path)) for k, (i, s) in enumerate(starts)]
    blocks: list[Block] = []
    section = -1
    for first, last, path in parts:
        runs = line_runs(lines, first, last)
        if runs:
            section += 1
        blocks.extend(Block("text", a, b, path, section) for a, b in runs)
    return blocks


def paged(doc: Document) -> bool:
    """True for a document read page by page into Markdown (a PDF whose sections carry page numbers)."""
    return any(s.page for s in doc.sections)


def split_pages(blocks: Sequence[Block], sections: Sequence[Section], first_line: int = 1) -> list[Block]:
    """``blocks`` renumbered so that a new section also starts where the page changes."""
    starts = sorted((s.first_line - first_line, s.page) for s in sections if s.page)
    firsts = [i for i, _ in starts]
    out: list[Block] = []
    section = -1
    last_key: tuple[int, int] | None = None
    for block in blocks:
        k = bisect_right(firsts, block.first) - 1
        page = starts[k][1] if k >= 0 else 0
        key = (block.section, page)
        if key != last_key:
            section += 1
            last_key = key
        out.append(Block(block.kind, block.first, block.last, block.heading_path, section))
    return out


def document_blocks(doc: Document) -> list[Block]:
    """The blocks of ``doc``: Markdown-aware for Markdown, HTML, Word and paged PDFs (a section per heading
    and page), plain for every other format."""
    if doc.format in MARKDOWN_FORMATS:
        return markdown_blocks(doc.text)
    if doc.format == "pdf" and paged(doc):
        return split_pages(markdown_blocks(doc.text), doc.sections, doc.first_line)
    return plain_blocks(doc.text, doc.sections, doc.first_line)


def group_sections(blocks: Sequence[Block]) -> list[list[Block]]:
    """Blocks grouped by section, in order."""
    groups: list[list[Block]] = []
    for block in blocks:
        if not groups or groups[-1][-1].section != block.section:
            groups.append([])
        groups[-1].append(block)
    return groups
