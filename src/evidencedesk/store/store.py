"""Store: the embedded system of record, a folder holding one SQLite database (WAL mode).

It keeps documents, chunks, one build row per ingest run, traces and evaluation runs. An ingest
run is a single transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``): a run that is killed part way
leaves the previous content exactly as it was. What every store does is in ``StoreBase``; this
class adds the SQLite connection and the snapshot folder.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import StoreError
from evidencedesk.store.base import StoreBase
from evidencedesk.store.contract import Chunker
from evidencedesk.store.ingest_plan import DocumentWriter
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import IngestReport
from evidencedesk.store.rows import chunk_from_row, document_from_row
from evidencedesk.store.schema import DB_NAME, connect
from evidencedesk.store.sqlite_writer import SqliteWriter

DEFAULT_STORE = Path(".evidencedesk")
SNAPSHOT_DIR = "snapshot"
# How long a store trusts its last look at the database when nothing in this process has written to
# it since: a search checks for new builds before it runs, and asking SQLite (``PRAGMA
# data_version``) takes file locks whose system calls cost more than the rest of a BM25 search on a
# small corpus (measured in bench/bm25_speed.py). Writes made in this process, by any Store object,
# are seen at once; a write committed by another process is seen by searches that start at most this
# long after it.
RECHECK_S = 0.005
_COMMITS: dict[Path, int] = {}  # per database file: ingest runs committed by this process
_COMMITS_LOCK = threading.Lock()


class Store(StoreBase):
    """The embedded store in folder ``path`` (created if missing). Use as a context manager or call close()."""

    MARK = "?"
    EMPTY_SECTIONS = "'[]'"
    CHUNK_SELECT = (
        "SELECT c.*, d.title AS doc_title, d.path AS doc_path FROM chunks c JOIN documents d ON d.id = c.doc_id"
    )
    TRACE_ORDER = "created_at DESC, rowid DESC"

    def __init__(self, path: str | Path = DEFAULT_STORE, *, chunker: Chunker | None = None) -> None:
        if not str(path).strip():
            raise ValueError("store path: must not be empty")
        if chunker is None:
            from evidencedesk.chunking import chunk_document

            chunker = chunk_document
        self.path = Path(path)
        self.db_path = self.path / DB_NAME
        self._chunker = chunker
        self._lock = threading.RLock()
        self._conn = connect(self.path)
        self._conn.row_factory = sqlite3.Row
        self._build_mark: tuple[int, int] | None = None  # see latest_build_id
        self._build_seen: int | None = None
        self._db_key = self.db_path.resolve()
        self._local_mark: tuple[int, int] | None = None  # (this process's commits, this connection's changes)
        self._checked_at = float("-inf")

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    @property
    def snapshot_dir(self) -> Path:
        """The folder of this store's memory-mapped snapshot (``<store>/snapshot``; it may not exist yet)."""
        return self.path / SNAPSHOT_DIR

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def latest_build_id(self) -> int | None:
        """The latest build's id. Read again only when the database changed since the last call: this
        connection wrote (``total_changes``) or another one committed (``PRAGMA data_version``). When
        nothing in this process wrote since a look less than ``RECHECK_S`` ago, that look stands."""
        with self._lock:
            local = (_COMMITS.get(self._db_key, 0), self._conn.total_changes)
            now = time.monotonic()
            if local == self._local_mark and now - self._checked_at < RECHECK_S:
                return self._build_seen
            mark = (self._conn.execute("PRAGMA data_version").fetchone()[0], self._conn.total_changes)
            if mark != self._build_mark:
                self._build_seen = super().latest_build_id()
                self._build_mark = mark
            self._local_mark = local
            self._checked_at = now
            return self._build_seen

    # -- the primitives StoreBase needs ------------------------------------------------------------
    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(query, tuple(params)).fetchall()

    def _document_from(self, row: Any) -> Document:
        return document_from_row(row)

    def _chunk_from(self, row: Any) -> Chunk:
        return chunk_from_row(row)

    def _json_from(self, value: Any) -> Any:
        return json.loads(value)

    def _ingest(self, work: Callable[[DocumentWriter], IngestReport]) -> IngestReport:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"store {self.path} is busy (another ingest is running?): {exc}") from None
            try:
                report = work(SqliteWriter(self._conn))
                self._conn.execute("COMMIT")
                with _COMMITS_LOCK:
                    _COMMITS[self._db_key] = _COMMITS.get(self._db_key, 0) + 1
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            return report

    def _put_trace(self, trace_id: str, created_at: str, data: JsonObject, owner: str | None) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO traces (id, created_at, data, owner) VALUES (?, ?, ?, ?)",
                (trace_id, created_at, json.dumps(data, ensure_ascii=False), owner),
            )

    def _put_eval_run(self, created_at: str, build_id: int | None, data: JsonObject, owner: str | None) -> int:
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO eval_runs (created_at, build_id, data, owner) VALUES (?, ?, ?, ?)",
                (created_at, build_id, json.dumps(data, ensure_ascii=False), owner),
            )
            return int(cur.lastrowid or 0)
