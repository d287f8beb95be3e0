"""PDFs read into paragraphs, headings and tables: a generated filing with running headers, wraps and a table."""

from __future__ import annotations

from fpdf import FPDF

from evidencedesk.chunking import chunk_document
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk
from evidencedesk.ingest import parse_pdf
from evidencedesk.ingest.pdf import pdf_date

BODY = [
    "Net sales increased 17.3% to $762.7",
    "million compared to the prior year, driven by strong demand for our",
    "industrial products in every region and by the acqui-",
    "sition of a smaller competitor early in the year.",
]
TABLE = [
    ("(Millions)", "2023", "2022"),
    ("Net sales", "$ 762.7", "$ 650.1"),
    ("Operating income", "120.4", "98.2"),
    ("Research and development", "(45.0)", "(41.3)"),
    ("Net income", "88.9", "71.0"),
]


def _filing() -> bytes:
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.set_title("Acme Annual Report 2023")
    pdf.set_creation_date(__import__("datetime").datetime(2024, 2, 7, tzinfo=__import__("datetime").UTC))
    for number in (1, 2, 3):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        pdf.text(72, 40, "ACME CORPORATION | Annual Report 2023")
        pdf.text(300, 760, str(number))
        pdf.set_font("Helvetica", size=10)
        if number == 1:
            pdf.set_font("Helvetica", style="B", size=16)
            pdf.text(72, 100, "Results of Operations")
            pdf.set_font("Helvetica", size=10)
            y = 130
            for line in BODY:
                pdf.text(72, y, line)
                y += 13
            y += 20
            pdf.text(72, y, "Our outlook for the next year is described on the next pages and in our")
            pdf.text(72, y + 13, "guidance, which remains unchanged for the")
        elif number == 2:
            pdf.text(72, 80, "second half of the year and beyond.")
            pdf.set_font("Helvetica", style="B", size=13)
            pdf.text(72, 120, "Selected Financial Data")
            pdf.set_font("Helvetica", size=10)
            y = 150
            for label, a, b in TABLE:
                pdf.text(72, y, label)
                pdf.text(360, y, a)
                pdf.text(450, y, b)
                y += 14
        else:
            pdf.text(72, 80, "Risk factors are discussed in a separate section of this report.")
    return bytes(pdf.output())


def _chunks(size: int = 40) -> list[Chunk]:
    return chunk_document(parse_pdf(_filing(), "acme-2023.pdf"), ChunkingConfig("structure", size=size))


def test_running_headers_and_page_numbers_are_dropped() -> None:
    doc = parse_pdf(_filing(), "acme-2023.pdf")
    assert "ACME CORPORATION" not in doc.text
    assert not any(line.strip() in ("1", "2", "3") for line in doc.text.split("\n"))


def test_wrapped_lines_join_into_paragraphs_and_hyphens_are_undone() -> None:
    doc = parse_pdf(_filing(), "acme-2023.pdf")
    assert "increased 17.3% to $762.7 million compared to the prior year" in doc.text
    assert "by the acquisition of a smaller competitor early in the year." in doc.text
    # a sentence that runs over the page break is one paragraph, cited on the page where it starts
    assert "guidance, which remains unchanged for the second half of the year and beyond." in doc.text


def test_headings_become_heading_paths_and_chunks_keep_pages() -> None:
    chunks = _chunks()
    by_text = {c.text.split("\n")[0]: c for c in chunks}
    sales = next(c for c in chunks if "Net sales increased" in c.text)
    assert sales.location.heading_path == ("Results of Operations",)
    assert sales.location.pages == (1,)
    table = [c for c in chunks if c.kind == "table"]
    assert table and all(c.location.pages == (2,) for c in table)
    assert table[0].location.heading_path == ("Results of Operations", "Selected Financial Data")
    assert "page 2" in table[0].location.label
    risk = next(c for c in chunks if "Risk factors" in c.text)
    assert risk.location.pages == (3,)
    assert by_text  # every chunk has text


def test_tables_become_tables_whose_header_every_piece_repeats() -> None:
    doc = parse_pdf(_filing(), "acme-2023.pdf")
    assert "| (Millions) | 2023 | 2022 |" in doc.text
    assert "| Research and development | (45.0) | (41.3) |" in doc.text
    assert "| Net sales | $ 762.7 | $ 650.1 |" in doc.text
    pieces = [c for c in _chunks(size=14) if c.kind == "table"]
    assert len(pieces) >= 2
    for piece in pieces:  # the heading above the table, then its header row
        assert piece.text.split("\n")[:3] == ["## Selected Financial Data", "", "| (Millions) | 2023 | 2022 |"]
    assert any("| Net income | 88.9 | 71.0 |" in p.text for p in pieces[1:])


def test_document_properties_give_title_and_dates() -> None:
    doc = parse_pdf(_filing(), "acme-2023.pdf")
    assert doc.title == "Acme Annual Report 2023"
    assert doc.metadata.extra["created"] == "2024-02-07"
    assert pdf_date("D:20190207120000Z") == "2019-02-07" and pdf_date("yesterday") is None


def test_outside_metadata_wins_over_document_properties() -> None:
    doc = parse_pdf(_filing(), "acme-2023.pdf", {"title": "Annual report", "status": "superseded"})
    assert doc.title == "Annual report" and doc.metadata.status == "superseded"


def test_a_bold_bullet_or_a_cut_phrase_never_heads_later_sections() -> None:
    """A list item set in a large bold font ("• attractive relative growth, and") is text: before, it became
    a heading that every later section of the filing sat under."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.core_fonts_encoding = "windows-1252"  # holds the bullet
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=18)
    pdf.text(72, 80, "ACME PLC")
    pdf.set_font("Helvetica", style="B", size=13)
    pdf.text(72, 120, "• attractive relative growth, and")
    pdf.text(72, 140, "strong cash flow of the")
    pdf.set_font("Helvetica", style="B", size=12)
    pdf.text(72, 180, "Item 7. Results of Operations")
    pdf.set_font("Helvetica", size=10)
    for n, y in enumerate(range(200, 320, 13)):
        pdf.text(72, y, f"Net sales grew in every region in the year and line {n} says so plainly.")
    doc = parse_pdf(bytes(pdf.output()), "acme.pdf")
    chunks = chunk_document(doc, ChunkingConfig("structure", size=60))
    sales = next(c for c in chunks if "Net sales grew" in c.text)
    assert sales.location.heading_path == ("ACME PLC", "Item 7. Results of Operations")
    assert not any(h.startswith("•") or h.endswith(" the") for c in chunks for h in c.location.heading_path)


def test_a_check_box_line_of_a_cover_is_never_a_heading() -> None:
    """A filing's cover lists its form types behind check boxes ("o TRANSITION REPORT ..." when the box
    font has no glyph): in a bold font they were headings that later sections sat under."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=18)
    pdf.text(72, 80, "UNITED STATES SECURITIES AND EXCHANGE COMMISSION")
    pdf.set_font("Helvetica", style="B", size=12)
    pdf.text(72, 120, "x ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d)")
    pdf.text(72, 140, "o TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d)")
    pdf.set_font("Helvetica", size=10)
    for n, y in enumerate(range(170, 260, 13)):
        pdf.text(72, y, f"Commission file number 001-12345, line {n}, for the fiscal year ended December 31, 2023.")
    doc = parse_pdf(bytes(pdf.output()), "filing.pdf")
    assert doc.title == "UNITED STATES SECURITIES AND EXCHANGE COMMISSION"
    chunks = chunk_document(doc, ChunkingConfig("structure", size=60))
    cover = next(c for c in chunks if "Commission file number" in c.text)
    assert cover.location.heading_path == ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION",)
    assert not any(h[:2] in ("o ", "x ") for c in chunks for h in c.location.heading_path)


def _statement() -> bytes:
    """A balance sheet whose table runs onto a second page without repeating its header row, with a group
    label ("Current assets:") between its rows and a line of footnote markers under a paragraph."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.text(72, 80, "Condensed Balance Sheets")
    pdf.set_font("Helvetica", size=10)
    for n, y in enumerate(range(110, 180, 13)):
        pdf.text(72, y, f"Cash and inventories are stated at cost and line {n} of this note says so plainly.")
    pdf.text(72, 190, "1,2,5 2,5 3,5")
    rows = [("", "2023", "2022"), ("Cash", "837", "775"), ("Current assets:", "", ""),
            ("Inventories", "1,205", "1,114"), ("Goodwill", "5,281", "5,285")]  # fmt: skip
    pdf.text(72, 320, "(Continued on following page)")
    more = [("Deferred tax assets", "129", "130"), ("Total assets", "9,000", "8,800")]
    for page_rows, top in ((rows, 230), (more, 80)):
        if top == 80:
            pdf.add_page()
            pdf.set_font("Helvetica", size=10)
        y = top
        for label, a, b in page_rows:
            pdf.text(72, y, label)
            pdf.text(360, y, a)
            pdf.text(450, y, b)
            y += 14
    pdf.text(72, 140, "Deferred tax assets are reviewed every year for their recoverability in full.")
    return bytes(pdf.output())


def test_a_group_label_stays_inside_its_table_and_marker_runs_are_dropped() -> None:
    doc = parse_pdf(_statement(), "statement.pdf")
    lines = doc.text.split("\n")
    cash = lines.index("| Cash | 837 | 775 |")
    assert lines[cash + 1 : cash + 4] == ["| Current assets: |  |  |", "| Inventories | 1,205 | 1,114 |",
                                          "| Goodwill | 5,281 | 5,285 |"]  # fmt: skip
    assert "1,2,5" not in doc.text and "Continued" not in doc.text


def test_a_table_continued_on_the_next_page_gets_its_header_row() -> None:
    doc = parse_pdf(_statement(), "statement.pdf")
    lines = doc.text.split("\n")
    deferred = lines.index("| Deferred tax assets | 129 | 130 |")
    assert lines[deferred - 2 : deferred] == ["|  | 2023 | 2022 |", "| --- | --- | --- |"]
    chunks = chunk_document(doc, ChunkingConfig("structure", size=120))
    second = next(c for c in chunks if "Deferred tax assets | 129" in c.text)
    assert second.kind == "table" and second.location.pages == (2,)
    assert second.text.startswith("|  | 2023 | 2022 |\n| --- | --- | --- |\n| Deferred tax assets")


def test_a_headerless_table_takes_the_header_of_the_table_just_above_it_on_its_page() -> None:
    from evidencedesk.ingest.pdf_layout import Block, continue_tables

    header = ["December 31 (Millions)", "2022", "2021"]
    assets = Block("table", 1, rows=[header, ["Cash", "5,510", "1,292"]])
    label = Block("text", 1, text="Card Member receivables, less reserves for credit losses of $229 and $64")
    loans = Block("table", 1, rows=[["Other loans", "5,357", "2,859"], ["Total assets", "228,354", "188,548"]])
    heading = Block("heading", 1, text="Notes")
    other = Block("table", 1, rows=[["Fees", "10", "12"], ["Taxes", "3", "4"]])
    continue_tables([assets, label, loans, heading, other])
    assert loans.rows[0] == header and loans.rows[1] == ["Other loans", "5,357", "2,859"]
    assert other.rows[0] == ["Fees", "10", "12"]  # a heading between: a table of its own
