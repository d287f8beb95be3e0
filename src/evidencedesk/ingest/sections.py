"""Sections of a Markdown body: each heading (levels 1-6), its heading path and the source lines it spans."""

from __future__ import annotations

from markdown_it import MarkdownIt

from evidencedesk.documents import Section

_blocks = MarkdownIt("commonmark").disable("inline")  # block structure only: headings, fences, ...
_inline = MarkdownIt("commonmark")

Heading = tuple[int, int, str]  # level, 0-based line index, plain text


def _plain(markdown: str) -> str:
    tokens = _inline.parseInline(markdown)
    children = (tokens[0].children or []) if tokens else []
    parts = [c.content for c in children if c.type in ("text", "code_inline", "html_inline")]
    return " ".join("".join(parts).split()) or markdown.strip()


def headings(text: str) -> list[Heading]:
    """``(level, line index, plain text)`` of every heading in ``text`` (0-based line index)."""
    tokens = _blocks.parse(text)
    found: list[Heading] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            found.append((int(tok.tag[1]), tok.map[0], _plain(tokens[i + 1].content)))
    return found


def sections(text: str, first_line: int = 1, found: list[Heading] | None = None) -> tuple[Section, ...]:
    """One Section per heading, running until the next heading of any level (trailing blank lines left out).

    Text before the first heading, if any, is a section with an empty heading path. Line numbers are
    source lines: line ``i`` (0-based) of ``text`` is source line ``first_line + i``. ``found`` may pass
    the result of :func:`headings` when the caller already has it.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if found is None:
        found = headings(text)
    bounds: list[tuple[tuple[str, ...], int, int]] = []
    top = found[0][1] if found else len(lines)
    body = [i for i in range(top) if lines[i].strip()]
    if body:
        bounds.append(((), body[0], body[-1]))
    stack: list[tuple[int, str]] = []
    for k, (level, start, title) in enumerate(found):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = (found[k + 1][1] if k + 1 < len(found) else len(lines)) - 1
        while end > start and not lines[end].strip():
            end -= 1
        bounds.append((tuple(t for _, t in stack), start, end))
    return tuple(Section(path, first_line + a, first_line + b) for path, a, b in bounds)


def first_title(found: list[Heading]) -> str | None:
    """The text of the first level-1 heading among ``found``, if there is one."""
    return next((title for level, _, title in found if level == 1 and title), None)
