"""What an ingest of a folder would read, without reading it into a store: the file types parsed, the
files picked, and the documents they parse into. Parsers load only when a function needs them, so
importing this module stays cheap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evidencedesk.documents import Document


def file_types() -> list[str]:
    """The file suffixes an ingest reads.

    Returns:
        The suffixes with their dot (``.md``, ``.pdf``, ...), sorted.
    """
    from evidencedesk.ingest.folder import PARSERS

    return sorted(PARSERS)


def files_in(folder: str | Path) -> list[tuple[Path, str]]:
    """The files an ingest of ``folder`` reads (hidden files, metadata files and unknown types left out).

    Args:
        folder: The folder an ingest would read.

    Returns:
        Each file's path with its name relative to ``folder`` (``/`` separators), sorted by that name.

    Raises:
        NotADirectoryError: ``folder`` is not a folder.
    """
    from evidencedesk.ingest.folder import scan

    return scan(Path(folder)).files


def documents_in(folder: str | Path) -> Iterator[tuple[str, Document]]:
    """The documents an ingest of ``folder`` would write, parsed one file at a time.

    Args:
        folder: The folder an ingest would read.

    Returns:
        An iterator of each file's relative name with its document; a file that fails to parse is left
        out (the ingest reports it).
    """
    from evidencedesk.ingest.errors import IngestError
    from evidencedesk.ingest.folder import parse_file

    for path, rel in files_in(folder):
        try:
            yield rel, parse_file(path, rel)
        except IngestError:
            continue


__all__ = ["documents_in", "file_types", "files_in"]
