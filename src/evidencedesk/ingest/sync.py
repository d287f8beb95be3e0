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
    """Parse every supported file under ``folder`` and store what changed as one build (through ``store.sync``).

    Unchanged files are kept by hash. A file that fails (over ``max_bytes``, unreadable, a duplicate id) is
    reported, never raised, and a stored version of it stays.

    Args:
        store: Any store that implements ``DocumentStore``.
        folder: The folder to read (sub-folders are walked; hidden files are not).
        config: The chunking every changed document is cut with.
        max_bytes: The largest file read; a larger one fails.
        progress: Called as ``progress(done, total, path)`` after each file.
        remove_missing: Remove the stored documents whose file is gone.

    Returns:
        The build's report: added, updated, unchanged, removed, failed and skipped files, the store's
        size, and in ``progress["files"]`` how long the files took.

    Raises:
        NotADirectoryError: ``folder`` is not a folder.
        ValueError: ``max_bytes`` is below 1.
    """
    if max_bytes < 1:
        raise ValueError(f"max_bytes: must be at least 1, got {max_bytes}")
    listing = scan(Path(folder))
    meter = Meter(len(listing.files), callback=progress)
    items = parsed_files(listing.files, max_bytes)
    return store.sync(items, config, remove_missing=remove_missing, skipped=listing.skipped, meter=meter)


__all__ = ["ingest_folder", "parsed_files"]
