"""Sections of a Markdown body: each heading (levels 1-6), its heading path and the source lines it spans."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from evidencedesk.documents import Section

_md = MarkdownIt("commonmark")


def _plain(inline: Token) -> str:
    parts = [c.content for c in inline.children or () if c.type in ("text", "code_inline", "html_inline")]
    return " ".join("".join(parts).split()) or inline.content.strip()


def headings(text: str) -> list[tuple[int, int, str]]:
    """``(level, line index, plain text)`` of every heading in ``text`` (0-based line index)."""
    tokens = _md.parse(text)
    found: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            found.append((int(tok.tag[1]), tok.map[0], _plain(tokens[i + 1])))
    return found


def sections(text: str, first_line: int = 1) -> tuple[Section, ...]:
    """One Section per heading, running until the next heading of any level (trailing blank lines left out).

    Text before the first heading, if any, is a section with an empty heading path. Line numbers are
    source lines: line ``i`` (0-based) of ``text`` is source line ``first_line + i``.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
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


def first_title(text: str) -> str | None:
    """The text of the first level-1 heading, if there is one."""
    return next((title for level, _, title in headings(text) if level == 1 and title), None)
