"""Fixtures for ingestion tests: PDFs built on the spot with fpdf2."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fpdf import FPDF


def _text_pdf(pages: list[str], title: str = "") -> bytes:
    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text=text)
    return bytes(pdf.output())


def _drawing_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 80, 40)
    return bytes(pdf.output())


@pytest.fixture
def text_pdf() -> Callable[..., bytes]:
    """``text_pdf(["page 1 text", "", "page 3 text"], title=...)``: one page per string (blank = empty page)."""
    return _text_pdf


@pytest.fixture
def drawing_pdf() -> bytes:
    """A one-page PDF holding only a rectangle: no text layer."""
    return _drawing_pdf()
