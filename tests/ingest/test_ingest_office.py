"""PowerPoint and Excel files built here with python-pptx and openpyxl: headings, tables with their header
rows, slide and sheet numbers as pages, properties, clear errors, and a folder that ingests them."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import pytest

from evidencedesk.chunking import chunk_document
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest import IngestError, parse_folder, parse_pptx, parse_xlsx

openpyxl = pytest.importorskip("openpyxl")
pptx = pytest.importorskip("pptx")


def deck_bytes() -> bytes:
    from pptx.util import Inches

    deck = pptx.Presentation()
    deck.core_properties.title = "Quarterly review"
    first = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    first.shapes.title.text = "Revenue grew"
    body = first.placeholders[1].text_frame
    body.text = "Revenue rose 12% on new contracts."
    item = body.add_paragraph()
    item.text = "Largest contract: Harbor Logistics"
    item.level = 1
    first.notes_slide.notes_text_frame.text = "Mention the renewal date."
    second = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    second.shapes.title.text = "Regional figures"
    rows = [["Region", "Revenue", "Growth"], ["North", "4.1", "9%"], ["South", "2.7", "15%"]]
    shape = second.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def book_bytes(rows: int = 3) -> bytes:
    book = openpyxl.Workbook()
    book.properties.title = "Price list"
    sheet = book.active
    sheet.title = "Prices"
    sheet.append(["Item", None, "Price", "Valid from"])  # an empty column is dropped
    for n in range(rows):
        sheet.append([f"part-{n}", None, 10.0 + n, datetime(2024, 1, 1 + n % 28)])
    sheet.append([])
    formulas = book.create_sheet("Notes")
    formulas.append(["Note"])
    formulas.append(["Prices exclude VAT"])
    hidden = book.create_sheet("Scratch")
    hidden.append(["secret", 1])
    hidden.sheet_state = "hidden"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_pptx_slides_become_sections_with_their_slide_as_page() -> None:
    doc = parse_pptx(deck_bytes(), "decks/review.pptx")
    assert doc.format == "pptx" and doc.title == "Quarterly review"
    assert doc.metadata.extra["created"][:4].isdigit()
    lines = doc.text.split("\n")
    assert lines[0] == "# Revenue grew"
    assert "Revenue rose 12% on new contracts." in lines
    assert "- Largest contract: Harbor Logistics" in lines
    assert "Mention the renewal date." in lines
    assert "| Region | Revenue | Growth |" in lines and "| South | 2.7 | 15% |" in lines
    assert [(s.heading_path, s.page) for s in doc.sections] == [(("Revenue grew",), 1), (("Regional figures",), 2)]
    chunks = chunk_document(doc, ChunkingConfig())
    table = next(c for c in chunks if c.kind == "table")
    # the slide's title travels with its table instead of making a chunk of its own
    assert table.location.pages == (2,) and table.text.startswith("# Regional figures\n\n| Region | Revenue | Growth |")
    assert not any(c.text == "# Regional figures" for c in chunks)


def test_xlsx_sheets_become_tables_that_repeat_their_header_row() -> None:
    doc = parse_xlsx(book_bytes(rows=60), "prices.xlsx")
    assert doc.format == "xlsx" and doc.title == "Price list"
    lines = doc.text.split("\n")
    assert lines[:4] == ["# Prices", "", "| Item | Price | Valid from |", "| --- | --- | --- |"]
    assert "| part-0 | 10 | 2024-01-01 |" in lines
    assert "# Notes" in lines and "| Prices exclude VAT |" in lines
    assert "secret" not in doc.text  # a hidden sheet is not read
    assert [(s.heading_path, s.page) for s in doc.sections] == [(("Prices",), 1), (("Notes",), 2)]
    chunks = [c for c in chunk_document(doc, ChunkingConfig(size=40)) if c.kind == "table"]
    prices = [c for c in chunks if c.location.heading_path == ("Prices",)]
    assert len(prices) > 1
    # every piece opens with the sheet's name, then the header row
    assert all(c.text.startswith("# Prices\n\n| Item | Price | Valid from |\n| --- |") for c in prices)
    assert any("| part-59 | 69 | 2024-01-04 |" in c.text for c in prices)


def test_broken_and_empty_office_files_fail_with_their_reason() -> None:
    with pytest.raises(IngestError, match="not a readable PowerPoint file"):
        parse_pptx(b"PK\x03\x04 not really a zip", "bad.pptx")
    with pytest.raises(IngestError, match="not a readable Excel workbook"):
        parse_xlsx(b"plain text", "bad.xlsx")
    empty = io.BytesIO()
    openpyxl.Workbook().save(empty)
    with pytest.raises(IngestError, match="no cell values") as info:
        parse_xlsx(empty.getvalue(), "empty.xlsx")
    assert info.value.path == "empty.xlsx"


def test_a_folder_reads_office_files_beside_the_others_and_a_broken_one_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "review.pptx").write_bytes(deck_bytes())
    (tmp_path / "prices.xlsx").write_bytes(book_bytes())
    (tmp_path / "broken.xlsx").write_bytes(b"not a workbook")
    (tmp_path / "prices.xlsx.meta.yaml").write_text("status: superseded\n", encoding="utf-8")
    result = parse_folder(tmp_path)
    by_path = {d.path: d for d in result.documents}
    assert set(by_path) == {"review.pptx", "prices.xlsx"}
    assert by_path["prices.xlsx"].metadata.status == "superseded"
    assert [f.path for f in result.failures] == ["broken.xlsx"]
