"""Walking a folder: which files are parsed, by which parser, and collecting the failures.

Files and folders whose name starts with ``.`` (such as a store kept inside the folder) are not
visited. Metadata files (sidecars, ``_meta.yaml``, the manifest: see :mod:`.sidecar`) are neither
parsed nor listed as skipped; their fields reach the parser of each file they apply to, and they
are part of that document's content hash. Files with an extension no parser handles are listed as
skipped. Paths are reported relative to the folder, with ``/`` separators, in sorted order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from evidencedesk.documents import Document, tenant_scoped
from evidencedesk.ingest.docx import parse_docx
from evidencedesk.ingest.eml import parse_eml
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.html import parse_html
from evidencedesk.ingest.markdown import parse_markdown
from evidencedesk.ingest.metadata import json_safe
from evidencedesk.ingest.pdf import parse_pdf
from evidencedesk.ingest.pptx import parse_pptx
from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES, read_limited
from evidencedesk.ingest.sidecar import is_meta_file, outside_fields
from evidencedesk.ingest.text import parse_text
from evidencedesk.ingest.xlsx import parse_xlsx

Parser = Callable[[bytes, str, Mapping[str, object] | None], Document]

PARSERS: dict[str, Parser] = {
    ".md": parse_markdown,
    ".markdown": parse_markdown,
    ".txt": parse_text,
    ".html": parse_html,
    ".htm": parse_html,
    ".pdf": parse_pdf,
    ".docx": parse_docx,
    ".eml": parse_eml,
    ".pptx": parse_pptx,
    ".xlsx": parse_xlsx,
}


@dataclass(frozen=True)
class Scan:
    """The files of a folder a parser handles (absolute paths with their relative names) and the rest."""

    files: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FolderResult:
    documents: list[Document] = field(default_factory=list)
    failures: list[IngestError] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def scan(folder: Path) -> Scan:
    """List the files under ``folder``, split into parseable and skipped."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"not a folder: {folder}")
    result = Scan()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith("."):
                continue
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if is_meta_file(rel):
                continue
            if path.suffix.lower() in PARSERS:
                result.files.append((path, rel))
            else:
                result.skipped.append(rel)
    result.files.sort(key=lambda f: f[1])
    result.skipped.sort()
    return result


def ingest_root(path: Path, rel: str) -> Path:
    """The ingested folder, from a file's path and its path relative to that folder."""
    return path.parents[len(PurePosixPath(rel).parts) - 1]


def with_outside_hash(doc: Document, fields: Mapping[str, object]) -> Document:
    """``doc`` whose content hash also covers the metadata declared outside its file."""
    if not fields:
        return doc
    declared = json.dumps(json_safe(dict(fields)), sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{doc.content_hash}\n{declared}".encode()).hexdigest()
    return replace(doc, content_hash=digest)


def parse_file(path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES, root: Path | None = None) -> Document:
    """Parse one file with the parser for its extension, with the metadata declared for it outside the
    file (sidecar, manifest, folder defaults under ``root``, by default the folder ``rel`` is relative
    to); every failure is an IngestError."""
    parser = PARSERS.get(path.suffix.lower())
    if parser is None:
        raise IngestError(rel, f"unsupported file type {path.suffix or '(none)'}")
    fields = outside_fields(root if root is not None else ingest_root(path, rel), rel)
    try:
        raw = read_limited(path, rel, max_bytes)
    except OSError as exc:
        raise IngestError(rel, f"cannot read file: {exc.strerror or exc}") from None
    return tenant_scoped(with_outside_hash(parser(raw, rel, fields), fields))  # ids are scoped by tenant


def parse_folder(folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> FolderResult:
    """Parse every supported file under ``folder``; a failing file is collected, never raised.

    Two files that claim the same id: the first (in path order) wins, the second fails.
    """
    listing = scan(folder)
    result = FolderResult(skipped=list(listing.skipped))
    owners: dict[str, str] = {}
    for path, rel in listing.files:
        try:
            doc = parse_file(path, rel, max_bytes, folder)
            if doc.id in owners:
                raise duplicate_id(doc, owners[doc.id])
        except IngestError as exc:
            result.failures.append(exc)
            continue
        owners[doc.id] = rel
        result.documents.append(doc)
    return result


def duplicate_id(doc: Document, first_path: str) -> IngestError:
    """The error for a document whose id an earlier file already claimed."""
    return IngestError.duplicate_id(doc.path, doc.id, first_path)
