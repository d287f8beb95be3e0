"""Parsers that turn files into Documents: Markdown with YAML front matter, plain text, HTML, PDF, Word,
PowerPoint, Excel and e-mail.

Metadata may also be declared outside a file (sidecar, folder defaults, manifest: see :mod:`.sidecar`).
Defaults for a file whose metadata nobody declares:
id from the relative path (lowercased, extension dropped, ``/`` and any character outside
``[a-z0-9_-]`` turned into ``-``), status ``current``, audience ``public``, lang ``en``, tenant
``default`` (the constants in :mod:`evidencedesk.documents`). Every failure is an IngestError.
"""

from evidencedesk.ingest.docx import parse_docx
from evidencedesk.ingest.eml import parse_eml
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import PARSERS, FolderResult, Scan, parse_file, parse_folder, scan
from evidencedesk.ingest.html import parse_html
from evidencedesk.ingest.markdown import parse_markdown
from evidencedesk.ingest.pdf import parse_pdf
from evidencedesk.ingest.pptx import parse_pptx
from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES, content_hash, doc_id_from_path
from evidencedesk.ingest.text import parse_text
from evidencedesk.ingest.xlsx import parse_xlsx

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PARSERS",
    "FolderResult",
    "IngestError",
    "Scan",
    "content_hash",
    "parse_docx",
    "parse_eml",
    "doc_id_from_path",
    "parse_file",
    "parse_folder",
    "parse_html",
    "parse_markdown",
    "parse_pdf",
    "parse_pptx",
    "parse_text",
    "parse_xlsx",
    "scan",
]
