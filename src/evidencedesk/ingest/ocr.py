"""Optional OCR for PDFs without a text layer (scans): Tesseract through ``pytesseract``.

Installed with the ``ocr`` extra (``pip install evidencedesk[ocr]``) plus the system's ``tesseract``
program (Debian: ``apt-get install tesseract-ocr``). Without either, a scanned PDF keeps its clear
per-file error. Each page is rendered at 300 dpi and read as one column; lines the engine separates by
a blank line become separate paragraphs.
"""

from __future__ import annotations

import shutil
from typing import Any

from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.pdf_lines import Line

DPI = 300
_LINE_GAP = 12.0  # points between OCR lines of one paragraph
_WIDTH = 1000.0  # OCR lines are treated as running to the right margin


def ocr_available() -> bool:
    """True when both ``pytesseract`` and the ``tesseract`` program are installed."""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return False
    return shutil.which("tesseract") is not None


def ocr_pages(pdf: Any, rel: str) -> list[list[Line]]:
    """The lines of every page of ``pdf`` (a pypdfium2 PdfDocument) read by OCR.

    Raises the "no text layer" IngestError when OCR is not installed or finds no text either.
    """
    n = len(pdf)
    no_text = IngestError(rel, f"PDF has no text layer ({n} page(s) without extractable text)")
    if not ocr_available():
        raise no_text
    import pytesseract

    pages: list[list[Line]] = []
    for index in range(n):
        page = pdf[index]
        try:
            image = page.render(scale=DPI / 72).to_pil()
        finally:
            page.close()
        try:
            text = pytesseract.image_to_string(image)
        except (pytesseract.TesseractError, OSError) as exc:
            raise IngestError(rel, f"OCR failed on page {index + 1}: {exc}") from None
        lines: list[Line] = []
        top = 0.0
        for raw in text.splitlines():
            top += _LINE_GAP
            if not raw.strip():
                top += 2 * _LINE_GAP  # a blank line ends the paragraph
                continue
            lines.append(Line(" ".join(raw.split()), index + 1, 0.0, _WIDTH, top, 10.0, False))
        pages.append(lines)
    if not any(pages):
        raise no_text
    return pages
