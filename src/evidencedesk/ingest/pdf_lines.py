"""The text lines of a PDF page with their position and font, read through PDFium's text page.

PDFium returns a page's text in content order with a line break after each visual line; a character's
index in that text is its index in the text page, so each line's first and last characters give its
left and right edge, its baseline, its font size and whether its font is bold, at a handful of calls
per line rather than per character.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_LINE = re.compile(r"[^\r\n]+")
_SOFT_HYPHEN = re.compile("\ufffe(?=[a-z])")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    """One visual line: ``top`` grows downwards from the top of the page (points)."""

    text: str
    page: int  # 1-based
    x0: float
    x1: float
    top: float
    size: float
    bold: bool


def dehyphenate(text: str) -> str:
    """Whitespace collapsed; PDFium's mark for a hyphen at a line end (U+FFFE) dropped before a lowercase
    letter (a word broken across lines) and a plain hyphen elsewhere ("Non-GAAP")."""
    return " ".join(_SOFT_HYPHEN.sub("", text).replace("\ufffe", "-").split())


class _FontNames:
    """Whether a character's font is bold, by weight or by a name such as ``Arial-BoldMT``."""

    def __init__(self) -> None:
        self.buffer = ctypes.create_string_buffer(128)
        self.flags = ctypes.c_int()

    def bold(self, textpage: pdfium.PdfTextPage, index: int) -> bool:
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        if weight >= 600:
            return True
        n = pdfium_c.FPDFText_GetFontInfo(textpage, index, self.buffer, len(self.buffer), ctypes.byref(self.flags))
        name = self.buffer.raw[: max(0, min(n, len(self.buffer)) - 1)].decode("latin-1", "replace")
        return bool(_BOLD_NAME.search(name)) or bool(self.flags.value & (1 << 18))  # ForceBold flag


def page_lines(page: pdfium.PdfPage, number: int, fonts: _FontNames | None = None) -> list[Line]:
    """The non-blank lines of ``page`` (1-based ``number``), in PDFium's reading order."""
    fonts = fonts or _FontNames()
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count <= 0:
            return []
        text = textpage.get_text_range(0, count)
        height = page.get_height()
        lines: list[Line] = []
        x, y = ctypes.c_double(), ctypes.c_double()
        for match in _LINE.finditer(text):
            raw = match.group()
            stripped = raw.strip()
            if not stripped:
                continue
            first = match.start() + (len(raw) - len(raw.lstrip()))
            last = match.start() + len(raw.rstrip()) - 1
            if last >= count:
                last = count - 1
            left, _, _, _ = textpage.get_charbox(first)
            _, _, right, _ = textpage.get_charbox(last)
            pdfium_c.FPDFText_GetCharOrigin(textpage, first, ctypes.byref(x), ctypes.byref(y))
            size = pdfium_c.FPDFText_GetFontSize(textpage, first)
            lines.append(
                Line(
                    text=dehyphenate(stripped),
                    page=number,
                    x0=left,
                    x1=right,
                    top=height - y.value,
                    size=round(size, 1),
                    bold=fonts.bold(textpage, first),
                )
            )
        return lines
    finally:
        textpage.close()


def document_lines(pdf: pdfium.PdfDocument) -> list[list[Line]]:
    """Every page's lines, page by page."""
    fonts = _FontNames()
    pages: list[list[Line]] = []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            pages.append(page_lines(page, index + 1, fonts))
        finally:
            page.close()
    return pages
