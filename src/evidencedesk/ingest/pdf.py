"""PDF files, read with PDFium (pypdfium2) into Markdown: paragraphs, headings and tables, page by page.

How lines become paragraphs, headings and tables is described in :mod:`.pdf_layout`. The body is
Markdown (``Document.format`` stays ``pdf``); its sections follow the headings and are also cut at
every page, each carrying its 1-based ``page``, so every chunk knows the page(s) it comes from.
Title: the PDF's Title property, else the first level-1 heading, else the file stem; the creation and
modification dates (``created``, ``modified``) are kept as extra metadata. Metadata declared outside the
file (see :mod:`.sidecar`) comes in ``fields`` and wins over the document properties.

A PDF without any extractable text (a scan, a drawing) is an error naming the pages, unless the
optional OCR extra is installed (see :mod:`.ocr`), which reads such pages with Tesseract.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pypdfium2 as pdfium

from evidencedesk.documents import Document, Section
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.pdf_layout import layout
from evidencedesk.ingest.pdf_lines import Line, document_lines
from evidencedesk.ingest.raw import content_hash
from evidencedesk.ingest.sections import first_title, headings, sections

READER_VERSION = "pdfium-layout-4"  # part of the content hash: a new reading re-indexes stored PDFs
_PDF_DATE = re.compile(r"^D?:?(\d{4})(\d{2})?(\d{2})?")
_WORD = re.compile(r"[^\W\d_]{3}")  # a title without a word of three letters (a filing number) says nothing
_JUNK_TITLE = re.compile(r"^(untitled|microsoft word|document\d*$|\S+\.(docx?|pdf|indd|htm)$)", re.IGNORECASE)


def pdf_date(value: str) -> str | None:
    """``D:20190207120000Z`` -> ``2019-02-07``; None when it is not a PDF date."""
    m = _PDF_DATE.match(value.strip())
    if not m:
        return None
    year, month, day = m.group(1), m.group(2) or "01", m.group(3) or "01"
    if not ("01" <= month <= "12" and "01" <= day <= "31"):
        return None
    return f"{year}-{month}-{day}"


def open_pdf(raw: bytes, rel: str) -> pdfium.PdfDocument:
    if not raw.lstrip()[:5] == b"%PDF-":
        raise IngestError(rel, "not a PDF: the file does not start with %PDF-")
    try:
        return pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise IngestError(rel, "PDF is encrypted with a password") from None
        raise IngestError(rel, f"not a readable PDF: {exc}") from None
    except Exception as exc:
        raise IngestError(rel, f"not a readable PDF: {type(exc).__name__}: {exc}") from None


def properties(pdf: pdfium.PdfDocument) -> dict[str, object]:
    """Title, created and modified from the PDF's document information, where present and meaningful."""
    try:
        info = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # damaged document information: the properties are optional
        return {}
    found: dict[str, object] = {}
    title = " ".join(str(info.get("Title", "")).split())
    if title and not _JUNK_TITLE.match(title) and _WORD.search(title):
        found["title"] = title
    for key, name in (("CreationDate", "created"), ("ModDate", "modified")):
        day = pdf_date(str(info.get(key, "")))
        if day:
            found[name] = day
    return found


def paged_sections(text: str, page_of: Sequence[int]) -> tuple[Section, ...]:
    """The heading sections of ``text`` cut at every page change, each with its page (blank lines trimmed)."""
    lines = text.split("\n")
    out: list[Section] = []
    for sec in sections(text, 1, headings(text)):
        run: list[int] = []
        for i in range(sec.first_line - 1, sec.last_line):
            if run and page_of[i] != page_of[run[0]]:
                out.extend(_run_section(sec.heading_path, run, lines, page_of))
                run = []
            run.append(i)
        out.extend(_run_section(sec.heading_path, run, lines, page_of))
    return tuple(out)


def _run_section(path: tuple[str, ...], run: list[int], lines: list[str], page_of: Sequence[int]) -> list[Section]:
    filled = [i for i in run if lines[i].strip()]
    return [Section(path, filled[0] + 1, filled[-1] + 1, page_of[filled[0]])] if filled else []


def read_pages(pdf: pdfium.PdfDocument, rel: str) -> list[list[Line]]:
    try:
        return document_lines(pdf)
    except pdfium.PdfiumError as exc:
        raise IngestError(rel, f"not a readable PDF: {exc}") from None
    except Exception as exc:  # a damaged file must fail alone, whatever PDFium's binding raises
        raise IngestError(rel, f"not a readable PDF: {type(exc).__name__}: {exc}") from None


def parse_pdf(raw: bytes, rel: str, fields: Mapping[str, object] | None = None) -> Document:
    """Parse a PDF file's bytes; ``rel`` is its path relative to the ingested folder, ``fields`` metadata
    declared outside the file."""
    pdf = open_pdf(raw, rel)
    try:
        pages = read_pages(pdf, rel)
        props = properties(pdf)
        empty = [n for n, lines in enumerate(pages, start=1) if not lines]
        if len(empty) == len(pages):
            from evidencedesk.ingest.ocr import ocr_pages

            pages = ocr_pages(pdf, rel)
    finally:
        pdf.close()
    text, page_of, heading_title = layout(pages)
    if not text.strip():
        raise IngestError(rel, f"PDF has no text layer ({len(pages)} page(s) without extractable text)")
    info = declared(rel, {**props, **(fields or {})})
    found = headings(text)
    digest = content_hash(raw + READER_VERSION.encode())
    return info.document(rel, "pdf", text, digest, paged_sections(text, page_of), heading_title, first_title(found))
