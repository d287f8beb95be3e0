"""Reading a file's bytes: size limit, content hash, text decoding, and the id derived from a path."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

from evidencedesk.ingest.errors import IngestError

DEFAULT_MAX_BYTES = 10_000_000
_NOT_ID = re.compile(r"[^a-z0-9_-]")


def read_limited(path: Path, rel: str, max_bytes: int) -> bytes:
    """The file's bytes; an IngestError when it is larger than ``max_bytes`` or empty."""
    size = path.stat().st_size
    if size > max_bytes:
        raise IngestError(rel, f"file too large: {size} bytes, over the limit of {max_bytes} bytes")
    raw = path.read_bytes()
    if not raw.strip():
        raise IngestError(rel, "empty file")
    return raw


def content_hash(raw: bytes) -> str:
    """sha256 of the raw bytes, hex."""
    return hashlib.sha256(raw).hexdigest()


def decode_text(raw: bytes, rel: str) -> str:
    """UTF-8 text with a leading BOM dropped and line ends normalised to ``\\n``.

    Raises IngestError for binary content (a NUL byte), bytes that are not UTF-8, and blank text.
    """
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise IngestError(rel, f"binary file: NUL byte at offset {nul}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise IngestError(rel, f"not UTF-8: invalid byte 0x{bad:02x} at offset {exc.start}") from None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise IngestError(rel, "empty file")
    return text


def doc_id_from_path(rel: str) -> str:
    """The id of a document that does not name one: its relative path, lowercased, extension dropped,
    ``/`` turned into ``-`` and every other character outside ``[a-z0-9_-]`` turned into ``-``."""
    p = PurePosixPath(rel.replace("\\", "/"))
    stem = str(p.with_suffix("")) if p.suffix else str(p)
    return _NOT_ID.sub("-", stem.lower().replace("/", "-"))
