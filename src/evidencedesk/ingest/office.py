"""What the PowerPoint and Excel readers share: cell and paragraph text, pipe tables, document properties,
and Markdown text built page by page (a slide, a sheet) whose sections carry their page number."""

from __future__ import annotations

import importlib
import io
import re
import zipfile
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import date, datetime
from types import ModuleType
from typing import Any, TypeVar

from evidencedesk.documents import Document, Section
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import Declared
from evidencedesk.ingest.raw import content_hash
from evidencedesk.ingest.sections import headings, sections

T = TypeVar("T")

_MARKDOWN_START = re.compile(r"^(#|```|~~~|>|[-+*]\s|\d{1,9}[.)]\s|[=]{3,}\s*$|[-*_]{3,}\s*$|\|)")


def squash(text: str) -> str:
    return " ".join(str(text).split())


def escape(text: str) -> str:
    """A paragraph that would read as Markdown syntax (a heading, a list item, a table row) kept as text."""
    return "\\" + text if _MARKDOWN_START.match(text) else text


def markdown_table(rows: Sequence[Sequence[Any]]) -> list[str]:
    """A GFM pipe table of ``rows`` (the first is the header); empty rows and empty trailing columns dropped."""
    cells = [[squash(c).replace("|", "\\|") for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return []
    width = max(max((i + 1 for i, c in enumerate(row) if c), default=0) for row in cells)
    lines = []
    for n, row in enumerate(cells):
        row = (list(row) + [""] * width)[:width]
        lines.append("| " + " | ".join(row) + " |")
        if n == 0:
            lines.append("|" + " --- |" * width)
    return lines


def core_properties(props: Any) -> dict[str, object]:
    """Title, created and modified from an Office file's core properties, where present."""
    found: dict[str, object] = {}
    title = squash(getattr(props, "title", None) or "")
    if title:
        found["title"] = title
    for name in ("created", "modified"):
        value = getattr(props, name, None)
        if isinstance(value, datetime | date):
            found[name] = value.isoformat()[:10]
    return found


def paged_text(pages: Sequence[Sequence[str]]) -> tuple[str, tuple[Section, ...]]:
    """Markdown text of ``pages`` (each a list of blocks starting with its heading) and its sections,
    each carrying the 1-based page it lies on."""
    lines: list[str] = []
    starts: list[int] = []
    for blocks in pages:
        if not blocks:
            continue
        if lines:
            lines.append("")
        starts.append(len(lines))
        lines.extend("\n\n".join(blocks).split("\n"))
    text = "\n".join(lines) + ("\n" if lines else "")
    numbers = [n for n, blocks in enumerate(pages, start=1) if blocks]
    out = []
    for sec in sections(text, 1, headings(text)):
        k = bisect_right(starts, sec.first_line - 1) - 1
        out.append(Section(sec.heading_path, sec.first_line, sec.last_line, numbers[max(k, 0)]))
    return text, tuple(out)


def open_office_file(raw: bytes, rel: str, module: str, what: str, opener: Callable[[ModuleType, io.BytesIO], T]) -> T:
    """``opener(library, file)`` on ``raw``, with ``module`` (python-pptx, openpyxl) imported first.

    A missing library or a file it cannot read is an IngestError naming ``rel`` and the reason.
    """
    try:
        library = importlib.import_module(module)
    except ImportError:
        raise IngestError(rel, f"reading this file needs {module}: install evidencedesk[office]") from None
    try:
        return opener(library, io.BytesIO(raw))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise IngestError(rel, f"not a readable {what}: {exc}") from None
    except Exception as exc:  # the libraries raise their own types (PackageNotFoundError, ...) on broken files
        raise IngestError(rel, f"not a readable {what}: {type(exc).__name__}: {exc}") from None


def office_document(
    raw: bytes, rel: str, info: Declared, fmt: str, text: str, found: tuple[Section, ...], title: str = ""
) -> Document:
    """The Document of a presentation or workbook: declared id and title first, then ``title``, then the
    file's stem."""
    return info.document(rel, fmt, text, content_hash(raw), found, title)
