"""Word files (.docx), read with python-docx into Markdown so chunkers treat them like Markdown.

Paragraphs styled ``Title`` or ``Heading 1``-``Heading 6`` become ``#`` headings of that level; list
paragraphs (a ``List`` style or Word numbering) become ``- `` items; tables become GFM pipe tables whose
first row is the header; every other non-empty paragraph is a paragraph. Body order is kept.
Title: metadata ``title``, else the document's Title property, else the first level-1 heading, else the
file stem; the Created and Modified properties are kept as extra metadata (``created``, ``modified``).
Line numbers refer to the converted text.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping
from typing import Any

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.raw import content_hash
from evidencedesk.ingest.sections import first_title, headings, sections

_HEADING = re.compile(r"^heading\s*([1-6])$", re.IGNORECASE)
_MARKDOWN_START = re.compile(r"^(#|```|~~~|>|[-+*]\s|\d{1,9}[.)]\s|[=]{3,}\s*$|[-*_]{3,}\s*$)")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _escape(text: str) -> str:
    return "\\" + text if _MARKDOWN_START.match(text) else text


def _cell(text: str) -> str:
    return _squash(text).replace("|", "\\|")


def _table(table: Any) -> list[str]:
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell repeats: keep it once
                continue
            previous = cell._tc
            cells.append(_cell(cell.text))
        if any(cells):
            rows.append(cells)
    if not rows:
        return []
    width = max(len(r) for r in rows)
    lines = []
    for n, cells in enumerate(rows):
        cells = cells + [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            lines.append("|" + " --- |" * width)
    return lines


def _paragraph(paragraph: Any) -> tuple[str, str]:
    """``(kind, markdown)`` of one paragraph: kind is heading, item or text."""
    text = _squash(paragraph.text)
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style.lower() == "title":
        return "heading", "# " + text
    m = _HEADING.match(style)
    if m:
        return "heading", "#" * int(m.group(1)) + " " + text
    numbered = paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None
    if style.lower().startswith("list") or numbered:
        return "item", "- " + text
    return "text", _escape(text)


def docx_markdown(document: Any) -> str:
    """The body of a python-docx Document as Markdown blocks separated by blank lines (items kept together)."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    blocks: list[str] = []
    last_kind = ""
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            if not item.text.strip():
                last_kind = ""
                continue
            kind, line = _paragraph(item)
            if kind == "item" and last_kind == "item":
                blocks[-1] += "\n" + line
            else:
                blocks.append(line)
            last_kind = kind
        elif isinstance(item, Table):
            lines = _table(item)
            if lines:
                blocks.append("\n".join(lines))
            last_kind = "table"
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def _properties(document: Any) -> dict[str, object]:
    props = document.core_properties
    found: dict[str, object] = {}
    if props.title and props.title.strip():
        found["title"] = props.title.strip()
    for name in ("created", "modified"):
        value = getattr(props, name, None)
        if value is not None:
            found[name] = value.date().isoformat()
    return found


def parse_docx(raw: bytes, rel: str, fields: Mapping[str, object] | None = None) -> Document:
    """Parse a Word file's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file (it wins over the document properties)."""
    import docx

    try:
        document = docx.Document(io.BytesIO(raw))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise IngestError(rel, f"not a readable Word file: {exc}") from None
    except Exception as exc:  # python-docx raises its own types (PackageNotFoundError...) on broken files
        raise IngestError(rel, f"not a readable Word file: {type(exc).__name__}: {exc}") from None
    text = docx_markdown(document)
    if not text.strip():
        raise IngestError(rel, "empty file: the document has no text")
    info = declared(rel, {**_properties(document), **(fields or {})})
    found = headings(text)
    return info.document(rel, "docx", text, content_hash(raw), sections(text, 1, found), first_title(found))
