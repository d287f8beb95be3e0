"""Excel workbooks (.xlsx), read with openpyxl into Markdown: one section per sheet, each sheet a table.

Each visible sheet becomes a level-1 heading (the sheet's name) followed by one GFM pipe table of its
cells: the first non-empty row is the header, empty rows are dropped and so are columns empty in every
row, so the structure chunker repeats the header row in every piece of a long sheet. Cells show their
values as last calculated (a formula's cached result); dates as ``YYYY-MM-DD``, whole numbers without
``.0``. Every section carries its sheet's position as its ``page``. Title: metadata ``title``, else the
Title property, else the file stem; Created and Modified are kept as ``created`` and ``modified``.

openpyxl is the optional ``office`` extra; without it an .xlsx file fails alone with a clear error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime, time
from typing import Any

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.office import (
    core_properties,
    markdown_table,
    office_document,
    open_office_file,
    paged_text,
    squash,
)


def cell_text(value: Any) -> str:
    """One cell's value as text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return squash(str(value))


def sheet_rows(rows: Iterable[Iterable[Any]]) -> list[list[str]]:
    """The sheet's non-empty rows as text, without the columns that are empty in every row."""
    found = [[cell_text(v) for v in row] for row in rows]
    found = [row for row in found if any(row)]
    if not found:
        return []
    width = max(len(row) for row in found)
    found = [row + [""] * (width - len(row)) for row in found]
    keep = [i for i in range(width) if any(row[i] for row in found)]
    return [[row[i] for i in keep] for row in found]


def parse_xlsx(raw: bytes, rel: str, fields: Mapping[str, Any] | None = None) -> Document:
    """Parse an Excel workbook's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file (it wins over the document properties)."""
    book = open_office_file(
        raw, rel, "openpyxl", "Excel workbook", lambda lib, f: lib.load_workbook(f, read_only=True, data_only=True)
    )
    try:
        pages: list[list[str]] = []
        for sheet in book.worksheets:
            rows = sheet_rows(sheet.iter_rows(values_only=True)) if sheet.sheet_state == "visible" else []
            table = markdown_table(rows)
            pages.append([f"# {squash(sheet.title)}", "\n".join(table)] if table else [])
        props = core_properties(book.properties)
    finally:
        book.close()
    text, found = paged_text(pages)
    if not text.strip():
        raise IngestError(rel, "empty file: the workbook has no cell values")
    info = declared(rel, {**props, **(fields or {})})
    return office_document(raw, rel, info, "xlsx", text, found)
