"""Scanned PDFs: a clear per-file error without OCR, text through Tesseract with the OCR extra."""

from __future__ import annotations

import io

import pytest
from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

from evidencedesk.ingest import IngestError, parse_pdf
from evidencedesk.ingest.ocr import ocr_available


def scanned_pdf() -> bytes:
    """One page holding only an image of printed text (no text layer), as a scanner makes it."""
    image = Image.new("RGB", (1700, 500), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=64)
    draw.text((80, 120), "Refunds are paid within", fill="black", font=font)
    draw.text((80, 240), "fourteen days of the request.", fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF(unit="pt", format=(850, 250))
    pdf.add_page()
    pdf.image(io.BytesIO(buffer.getvalue()), x=0, y=0, w=850, h=250)
    return bytes(pdf.output())


def test_scan_without_ocr_fails_with_a_clear_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evidencedesk.ingest.ocr.ocr_available", lambda: False)  # as where it is not installed
    with pytest.raises(IngestError) as info:
        parse_pdf(scanned_pdf(), "scan.pdf")
    assert info.value.reason == "PDF has no text layer (1 page(s) without extractable text)"


@pytest.mark.skipif(not ocr_available(), reason="needs pytesseract and the tesseract program (the ocr extra)")
def test_scan_is_read_with_ocr() -> None:
    doc = parse_pdf(scanned_pdf(), "scan.pdf")
    text = " ".join(doc.text.split()).lower()
    assert "refunds are paid within fourteen days" in text
    assert doc.sections and doc.sections[0].page == 1
