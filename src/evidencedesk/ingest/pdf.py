"""PDF files: the text layer of each page, read with pypdf; one section per page (``page N``).

Pages are joined with a blank line. A PDF without any extractable text (a scan, a drawing) is an
error rather than an empty document. Title: the PDF's /Title, else the file stem. Metadata: defaults.
"""

from __future__ import annotations

import io
import warnings
from pathlib import PurePosixPath

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from evidencedesk.documents import Document, Metadata, Section
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.raw import content_hash, doc_id_from_path


def _pages(raw: bytes, rel: str) -> tuple[list[str], str]:
    if not raw.lstrip()[:5] == b"%PDF-":
        raise IngestError(rel, "not a PDF: the file does not start with %PDF-")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(raw))
            if reader.is_encrypted and not reader.decrypt(""):
                raise IngestError(rel, "PDF is encrypted with a password")
            pages = [page.extract_text() or "" for page in reader.pages]
            title = str((reader.metadata or {}).get("/Title") or "").strip()
    except IngestError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise IngestError(rel, f"not a readable PDF: {exc}") from None
    except Exception as exc:  # pypdf raises many other types on corrupt files (NotImplementedError, IndexError...)
        raise IngestError(rel, f"not a readable PDF: {type(exc).__name__}: {exc}") from None
    return [p.replace("\r\n", "\n").replace("\r", "\n").strip("\n") for p in pages], title


def parse_pdf(raw: bytes, rel: str) -> Document:
    """Parse a PDF file's bytes; ``rel`` is its path relative to the ingested folder."""
    pages, title = _pages(raw, rel)
    if not any(p.strip() for p in pages):
        raise IngestError(rel, f"PDF has no text layer ({len(pages)} page(s) without extractable text)")
    parts: list[str] = []
    found: list[Section] = []
    line = 1
    for number, page in enumerate(pages, start=1):
        if not page.strip():
            continue
        n_lines = len(page.split("\n"))
        found.append(Section((f"page {number}",), line, line + n_lines - 1))
        parts.append(page)
        line += n_lines + 1  # the blank line between pages
    return Document(
        id=doc_id_from_path(rel),
        title=title or PurePosixPath(rel).stem,
        path=rel,
        format="pdf",
        text="\n\n".join(parts) + "\n",
        content_hash=content_hash(raw),
        metadata=Metadata(),
        sections=tuple(found),
        first_line=1,
    )
