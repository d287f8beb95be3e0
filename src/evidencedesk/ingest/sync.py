"""A folder into a store: the files are parsed here, one at a time, and the store's ``sync`` keeps them.

The store never reads files (see ``store.contract``): ``ingest_folder`` scans the folder, hands the
store a stream of parsed documents (or the ``IngestError`` each failing file gave, at its place) with
the files no parser handles, and the store writes what changed as one build. The parsing happens as
the store reads the stream, inside its write, so a large folder is never held in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Document
from evidencedesk.errors import IngestError
from evidencedesk.ingest.folder import parse_file, scan
from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES
from evidencedesk.progress import Meter
from evidencedesk.store.contract import DocumentStore, Progress
from evidencedesk.store.records import IngestReport


def parsed_files(files: list[tuple[Path, str]], max_bytes: int) -> Iterator[Document | IngestError]:
    """Each file parsed in turn (as the consumer asks for it); a file that fails gives its IngestError."""
    for path, rel in files:
        try:
            yield parse_file(path, rel, max_bytes)
        except IngestError as exc:
            yield exc


def ingest_folder(
    store: DocumentStore,
    folder: str | Path,
    config: ChunkingConfig,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
    remove_missing: bool = True,
) -> IngestReport:
    """Parse every supported file under ``folder``, store what changed in ``store`` chunked under ``config``,
    and record a build; returns the build's report.

    Unchanged files are kept by hash; with ``remove_missing`` the documents whose file is gone are removed.
    ``progress(done, total, path)`` is called after each file, and the report's ``progress["files"]``
    says how long the files took. A file that fails (over ``max_bytes``, unreadable, a duplicate id) is
    reported, never raised. Raises NotADirectoryError when ``folder`` is not a folder and ValueError for
    ``max_bytes < 1``.
    """
    if max_bytes < 1:
        raise ValueError(f"max_bytes: must be at least 1, got {max_bytes}")
    listing = scan(Path(folder))
    meter = Meter(len(listing.files), callback=progress)
    items = parsed_files(listing.files, max_bytes)
    return store.sync(items, config, remove_missing=remove_missing, skipped=listing.skipped, meter=meter)


__all__ = ["ingest_folder", "parsed_files"]
