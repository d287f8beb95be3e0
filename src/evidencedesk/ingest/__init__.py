"""Parsers that turn files into Documents: Markdown with YAML front matter, plain text, HTML, PDF, Word,
PowerPoint, Excel and e-mail.

Metadata may also be declared outside a file (sidecar, folder defaults, manifest: see :mod:`.sidecar`).
Defaults for a file whose metadata nobody declares:
id from the relative path (lowercased, extension dropped, ``/`` and any character outside
``[a-z0-9_-]`` turned into ``-``), status ``current``, audience ``public``, lang ``en``, tenant
``default`` (the constants in :mod:`evidencedesk.documents`). Every failure is an IngestError.
``ingest_folder`` parses a folder into a store (through the store's ``sync``).

The names below load their module on first use, so that a command that only reads a store does not
import every parser (and the e-mail and PDF libraries behind them).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidencedesk.ingest.docx import parse_docx
    from evidencedesk.ingest.eml import parse_eml
    from evidencedesk.ingest.errors import IngestError
    from evidencedesk.ingest.files import documents_in, file_types, files_in
    from evidencedesk.ingest.folder import PARSERS, FolderResult, Scan, parse_file, parse_folder, scan
    from evidencedesk.ingest.html import parse_html
    from evidencedesk.ingest.markdown import parse_markdown
    from evidencedesk.ingest.pdf import parse_pdf
    from evidencedesk.ingest.pptx import parse_pptx
    from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES, content_hash, doc_id_from_path
    from evidencedesk.ingest.sync import ingest_folder
    from evidencedesk.ingest.text import parse_text
    from evidencedesk.ingest.xlsx import parse_xlsx

_MODULES = {
    "parse_docx": "docx",
    "parse_eml": "eml",
    "IngestError": "errors",
    "documents_in": "files",
    "file_types": "files",
    "files_in": "files",
    "PARSERS": "folder",
    "FolderResult": "folder",
    "Scan": "folder",
    "parse_file": "folder",
    "parse_folder": "folder",
    "scan": "folder",
    "parse_html": "html",
    "parse_markdown": "markdown",
    "parse_pdf": "pdf",
    "parse_pptx": "pptx",
    "DEFAULT_MAX_BYTES": "raw",
    "content_hash": "raw",
    "doc_id_from_path": "raw",
    "ingest_folder": "sync",
    "parse_text": "text",
    "parse_xlsx": "xlsx",
}


def __getattr__(name: str) -> object:
    """Import an exported name's module on first use (type checkers see the imports above instead)."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
    "documents_in",
    "file_types",
    "files_in",
    "ingest_folder",
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
