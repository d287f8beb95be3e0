"""Plain text for the terminal or a pipe: lines wrapped to the console's width with a hanging indent,
and short snippets of chunk text.

Search results and citations are printed as plain lines rather than tables, so they stay readable at
80 columns and when piped (no box drawing, no cell wrapped into a narrow column, no trailing spaces).
"""

from __future__ import annotations

import re
import textwrap

ELLIPSIS = " ..."


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` columns: the first line after ``first`` (default ``indent``), the
    others after ``indent``. Words longer than a line (a chunk id, a path) are never broken."""
    return textwrap.wrap(
        text,
        width=max(width, len(indent) + 20),
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [(indent if first is None else first).rstrip()]


def snippet(text: str, width: int, lines: int = 2, indent: str = "") -> list[str]:
    """The start of a chunk's text in at most ``lines`` lines: Markdown headings left out (the
    location names them), whitespace collapsed, and ``...`` where the text goes on."""
    body = " ".join(line for line in text.splitlines() if not re.match(r"\s*#{1,6}\s", line))
    body = " ".join(body.split())
    if not body:
        return []
    out = wrap(body, width, indent)
    if len(out) <= lines:
        return out
    kept = out[:lines]
    room = max(width, len(indent) + 20) - len(ELLIPSIS)
    last = kept[-1]
    if len(last) > room:
        last = last[:room].rsplit(" ", 1)[0] if " " in last[len(indent) : room] else last[:room]
    kept[-1] = last.rstrip() + ELLIPSIS
    return kept


__all__ = ["ELLIPSIS", "snippet", "wrap"]
