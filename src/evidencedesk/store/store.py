"""Store: the embedded system of record, a folder holding one SQLite database (WAL mode).

It keeps documents, chunks, one build row per ingest run, traces and evaluation runs. An ingest
run is a single transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``): a run that is killed part way
leaves the previous content exactly as it was.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from pathlib import Path
from types import TracebackType
from typing import Any

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import parse_file, scan
from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES
from evidencedesk.store.apply import Chunker, Progress, Run, now
from evidencedesk.store.records import Build, IngestReport
from evidencedesk.store.rows import chunk_from_row, document_from_row
from evidencedesk.store.schema import DB_NAME, StoreError, connect

DEFAULT_STORE = Path(".evidencedesk")

_CHUNK_SELECT = "SELECT c.*, d.title AS doc_title, d.path AS doc_path FROM chunks c JOIN documents d ON d.id = c.doc_id"


class Store:
    """The embedded store in folder ``path`` (created if missing). Use as a context manager or call close()."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, chunker: Chunker | None = None) -> None:
        if not str(path).strip():
            raise ValueError("store path: must not be empty")
        if chunker is None:
            from evidencedesk.chunking import chunk_document as chunker
        self.path = Path(path)
        self.db_path = self.path / DB_NAME
        self._chunker: Chunker = chunker
        self._lock = threading.RLock()
        self._conn = connect(self.path)
        self._conn.row_factory = sqlite3.Row

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _transaction(self, run: Callable[[sqlite3.Connection], IngestReport]) -> IngestReport:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"store {self.path} is busy (another ingest is running?): {exc}") from None
            try:
                report = run(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            return report

    # -- ingest ----------------------------------------------------------------------------------
    def ingest(
        self,
        folder: Path,
        config: ChunkingConfig,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        progress: Progress | None = None,
        remove_missing: bool = True,
    ) -> IngestReport:
        """Parse every supported file under ``folder``, chunk what changed, and record a build.

        Raises NotADirectoryError when ``folder`` is not a folder; a file that fails is reported, never raised.
        """
        if max_bytes < 1:
            raise ValueError(f"max_bytes: must be at least 1, got {max_bytes}")
        listing = scan(Path(folder))

        def parsed() -> Iterator[Document | IngestError]:
            for path, rel in listing.files:
                try:
                    yield parse_file(path, rel, max_bytes)
                except IngestError as exc:
                    yield exc

        def run(conn: sqlite3.Connection) -> IngestReport:
            r = Run(conn, config, self._chunker)
            r.feed(parsed(), len(listing.files), progress)
            return r.finish(remove_missing=remove_missing, skipped=listing.skipped)

        return self._transaction(run)

    def sync(
        self,
        documents: Iterable[Document],
        config: ChunkingConfig,
        *,
        failures: Iterable[IngestError] = (),
        remove_missing: bool = True,
    ) -> IngestReport:
        """Store already parsed documents (e.g. a BEIR corpus) the way ingest stores a folder's files."""
        total = len(documents) if isinstance(documents, Sized) else 0

        def run(conn: sqlite3.Connection) -> IngestReport:
            r = Run(conn, config, self._chunker)
            r.feed(documents, total)
            r.feed(failures)
            return r.finish(remove_missing=remove_missing)

        return self._transaction(run)

    # -- reading ---------------------------------------------------------------------------------
    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def documents(self) -> list[Document]:
        return [document_from_row(r) for r in self._rows("SELECT * FROM documents ORDER BY id")]

    def document(self, doc_id: str) -> Document | None:
        rows = self._rows("SELECT * FROM documents WHERE id = ?", (doc_id,))
        return document_from_row(rows[0]) if rows else None

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """All chunks (or one document's), ordered by document id then position."""
        if doc_id is None:
            rows = self._rows(f"{_CHUNK_SELECT} ORDER BY c.doc_id, c.n")
        else:
            rows = self._rows(f"{_CHUNK_SELECT} WHERE c.doc_id = ? ORDER BY c.n", (doc_id,))
        return [chunk_from_row(r) for r in rows]

    def iter_chunks(self, batch: int = 5000) -> Iterator[list[Chunk]]:
        """Every chunk in ``chunks()`` order, ``batch`` at a time (for indexes too large to list at once)."""
        if batch < 1:
            raise ValueError(f"batch: must be at least 1, got {batch}")
        last: tuple[str, int] | None = None
        while True:  # keyset pages: no lock or cursor is held between batches
            if last is None:
                rows = self._rows(f"{_CHUNK_SELECT} ORDER BY c.doc_id, c.n LIMIT ?", (batch,))
            else:
                where = "WHERE (c.doc_id, c.n) > (?, ?)"
                rows = self._rows(f"{_CHUNK_SELECT} {where} ORDER BY c.doc_id, c.n LIMIT ?", (*last, batch))
            if not rows:
                return
            last = (rows[-1]["doc_id"], rows[-1]["n"])
            yield [chunk_from_row(r) for r in rows]

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (ids not stored are left out)."""
        found: dict[str, Chunk] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), 500):  # SQLite's bound-parameter limit
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for r in self._rows(f"{_CHUNK_SELECT} WHERE c.id IN ({marks})", tuple(part)):
                chunk = chunk_from_row(r)
                found[chunk.id] = chunk
        return [found[i] for i in chunk_ids if i in found]

    def chunk(self, chunk_id: str) -> Chunk | None:
        rows = self._rows(f"{_CHUNK_SELECT} WHERE c.id = ?", (chunk_id,))
        return chunk_from_row(rows[0]) if rows else None

    def chunk_ids(self) -> list[str]:
        """Every chunk id, in ``chunks()`` order."""
        return [r[0] for r in self._rows("SELECT id FROM chunks ORDER BY doc_id, n")]

    def chunk_count(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM chunks")[0][0])

    def chunk_counts(self) -> dict[str, int]:
        """Number of chunks per document id (documents without chunks are absent)."""
        return {r[0]: r[1] for r in self._rows("SELECT doc_id, COUNT(*) FROM chunks GROUP BY doc_id")}

    # -- builds ----------------------------------------------------------------------------------
    @staticmethod
    def _build(row: sqlite3.Row) -> Build:
        return Build(
            id=row["id"],
            created_at=row["created_at"],
            chunking=json.loads(row["chunking"]),
            chunking_hash=row["chunking_hash"],
            n_documents=row["n_documents"],
            n_chunks=row["n_chunks"],
            report=json.loads(row["report"]),
        )

    def builds(self) -> list[Build]:
        """Every recorded build, oldest first."""
        return [self._build(r) for r in self._rows("SELECT * FROM builds ORDER BY id")]

    def latest_build(self) -> Build | None:
        rows = self._rows("SELECT * FROM builds ORDER BY id DESC LIMIT 1")
        return self._build(rows[0]) if rows else None

    def latest_build_id(self) -> int | None:
        """The latest build's id without reading its report (a search checks it on every call)."""
        row = self._rows("SELECT MAX(id) FROM builds")[0]
        return None if row[0] is None else int(row[0])

    # -- traces and evaluation runs --------------------------------------------------------------
    def save_trace(self, trace_id: str, data: dict[str, Any]) -> None:
        """Save (or replace) a trace under ``trace_id``."""
        if not trace_id:
            raise ValueError("trace_id: must not be empty")
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO traces (id, created_at, data) VALUES (?, ?, ?)",
                (trace_id, now(), json.dumps(data, ensure_ascii=False, default=str)),
            )

    def load_trace(self, trace_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT data FROM traces WHERE id = ?", (trace_id,))
        return json.loads(rows[0][0]) if rows else None

    def traces(self, limit: int = 50) -> list[dict[str, Any]]:
        """The ``limit`` most recently saved traces, newest first."""
        if limit < 1:
            raise ValueError(f"limit: must be at least 1, got {limit}")
        rows = self._rows("SELECT data FROM traces ORDER BY created_at DESC, rowid DESC LIMIT ?", (limit,))
        return [json.loads(r[0]) for r in rows]

    def save_eval_run(self, data: dict[str, Any]) -> int:
        """Save an evaluation run and return its id; ``build_id`` is taken from ``data`` or the latest build."""
        build_id = data.get("build_id")
        if build_id is None:
            latest = self.latest_build()
            build_id = latest.id if latest else None
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO eval_runs (created_at, build_id, data) VALUES (?, ?, ?)",
                (now(), build_id, json.dumps(data, ensure_ascii=False, default=str)),
            )
            return int(cur.lastrowid or 0)

    @staticmethod
    def _eval_run(row: sqlite3.Row) -> dict[str, Any]:
        return {
            **json.loads(row["data"]),
            "id": row["id"],
            "created_at": row["created_at"],
            "build_id": row["build_id"],
        }

    def load_eval_run(self, run_id: int) -> dict[str, Any] | None:
        """The saved data with ``id``, ``created_at`` and ``build_id`` added."""
        rows = self._rows("SELECT * FROM eval_runs WHERE id = ?", (run_id,))
        return self._eval_run(rows[0]) if rows else None

    def eval_runs(self) -> list[dict[str, Any]]:
        """Every evaluation run, oldest first, each as load_eval_run returns it."""
        return [self._eval_run(r) for r in self._rows("SELECT * FROM eval_runs ORDER BY id")]
