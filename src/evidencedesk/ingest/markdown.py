"""Markdown files with optional YAML front matter.

Front matter is a block fenced by ``---`` lines at the very top of the file (closed by ``---`` or
``...``), read with ``yaml.safe_load``. The body after it becomes ``Document.text``; ``first_line`` is
the source line of the body's first line. Title: front matter ``title``, else the first ``#`` heading,
else the file stem. Without front matter the id comes from the relative path (see :mod:`.raw`).
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.raw import content_hash, decode_text
from evidencedesk.ingest.sections import first_title, headings, sections

_FENCE = "---"
_CLOSERS = ("---", "...")


def split_front_matter(text: str, rel: str) -> tuple[dict[str, object], str, int]:
    """``(fields, body, first body line)``; fields is empty when the file has no front matter."""
    lines = text.split("\n")
    if lines[0].rstrip() != _FENCE:
        return {}, text, 1
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in _CLOSERS), None)
    if close is None:
        raise IngestError(rel, "broken front matter at line 1: the '---' block is never closed")
    try:
        fields = yaml.safe_load("\n".join(lines[1:close]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 2 if mark is not None else 1  # YAML starts on file line 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise IngestError(rel, f"broken front matter at line {line}: {problem}") from None
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        raise IngestError(rel, f"broken front matter at line 2: expected key: value pairs, got {type(fields).__name__}")
    return fields, "\n".join(lines[close + 1 :]), close + 2


def parse_markdown(raw: bytes, rel: str, fields: Mapping[str, object] | None = None) -> Document:
    """Parse a Markdown file's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file (front matter wins over it)."""
    text = decode_text(raw, rel)
    front, body, first_line = split_front_matter(text, rel)
    info = declared(rel, {**(fields or {}), **front})
    if not body.strip():
        raise IngestError(rel, "empty file: no text after the front matter")
    found = headings(body)
    found_sections = sections(body, first_line, found)
    return info.document(
        rel, "markdown", body, content_hash(raw), found_sections, first_title(found), first_line=first_line
    )
