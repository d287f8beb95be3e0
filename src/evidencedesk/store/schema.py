"""The SQLite schema of the embedded store and opening a connection to it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from evidencedesk.errors import StoreError
from evidencedesk.store.tenant_ids import build_row, migration_build, renames

SCHEMA_VERSION = 3
DB_NAME = "evidencedesk.sqlite"

_META_COLUMNS = "status TEXT NOT NULL, valid_from TEXT, valid_to TEXT, audience TEXT NOT NULL, lang TEXT NOT NULL, "
_META_COLUMNS += "tenant TEXT NOT NULL"

DDL = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    format TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunking_hash TEXT NOT NULL,
    build_id INTEGER,
    metadata TEXT NOT NULL,
    {_META_COLUMNS},
    sections TEXT NOT NULL,
    text TEXT NOT NULL,
    first_line INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    first_line INTEGER NOT NULL,
    last_line INTEGER NOT NULL,
    parent_id TEXT,
    parent_text TEXT,
    metadata TEXT NOT NULL,
    {_META_COLUMNS},
    text_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, n);
CREATE INDEX IF NOT EXISTS chunks_text_hash ON chunks(text_hash);
CREATE TABLE IF NOT EXISTS builds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    chunking TEXT NOT NULL,
    chunking_hash TEXT NOT NULL,
    n_documents INTEGER NOT NULL,
    n_chunks INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL,
    owner TEXT
);
CREATE INDEX IF NOT EXISTS traces_owner ON traces(owner);
CREATE TABLE IF NOT EXISTS eval_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    build_id INTEGER,
    data TEXT NOT NULL,
    owner TEXT
);
"""


# version -> statements that bring a store of the version before up to it (the DDL above is already current)
UPGRADES: dict[int, tuple[str, ...]] = {
    2: (  # traces and evaluation runs remember the API key that made them (NULL: made outside the service)
        "ALTER TABLE traces ADD COLUMN owner TEXT",
        "ALTER TABLE eval_runs ADD COLUMN owner TEXT",
        "CREATE INDEX IF NOT EXISTS traces_owner ON traces(owner)",
    ),
    3: (),  # document ids scoped by tenant: rows renamed by ``_scope_ids`` (see ``store.tenant_ids``)
}


def _scope_ids(conn: sqlite3.Connection) -> None:
    """Rename every document of a tenant other than ``default`` (and its chunks) to its tenant-scoped id."""
    moved = renames((str(r[0]), str(r[1])) for r in conn.execute("SELECT id, tenant FROM documents"))
    if not moved:
        return
    conn.execute("PRAGMA defer_foreign_keys=ON")  # parents and children are renamed one after the other
    follow = "CASE WHEN substr({col}, 1, :n) = :old THEN :new || substr({col}, :n + 1) ELSE {col} END"
    rename_chunks = (
        f"UPDATE chunks SET id = {follow.format(col='id')}, doc_id = :new, "
        f"parent_id = {follow.format(col='parent_id')} WHERE doc_id = :old"
    )
    for old, new in moved.items():
        conn.execute("UPDATE documents SET id = :new WHERE id = :old", {"old": old, "new": new})
        conn.execute(rename_chunks, {"old": old, "new": new, "n": len(old)})
    latest = conn.execute("SELECT chunking, chunking_hash FROM builds ORDER BY id DESC LIMIT 1").fetchone()
    chunking, chunking_hash = (json.loads(latest[0]), str(latest[1])) if latest else ({}, "")
    size = conn.execute("SELECT (SELECT COUNT(*) FROM documents), (SELECT COUNT(*) FROM chunks)").fetchone()
    report = migration_build(moved, {**chunking, "hash": chunking_hash}, (int(size[0]), int(size[1])))
    cur = conn.execute(
        "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        build_row(report, chunking_hash),
    )
    conn.executemany("UPDATE documents SET build_id = ? WHERE id = ?", [(cur.lastrowid, new) for new in moved.values()])


def connect(folder: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database in ``folder``: WAL journal, foreign keys on, schema checked."""
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"store path is not a folder: {folder}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(folder / DB_NAME, isolation_level=None, check_same_thread=False, timeout=10.0)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open store {folder}: {exc}") from None
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn, folder)
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"cannot open store {folder}: {exc}") from None
    except StoreError:
        conn.close()
        raise
    return conn


def _version(conn: sqlite3.Connection) -> int | None:
    has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
    row = conn.execute("SELECT version FROM schema_version").fetchone() if has_table else None
    return int(row[0]) if row is not None else None


def _migrate(conn: sqlite3.Connection, folder: Path) -> None:
    """Create the tables of a new store; an up-to-date store is only read, so opening never waits on an ingest."""
    version = _version(conn)
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"store {folder} has schema version {version}; this version reads up to {SCHEMA_VERSION}")
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn)  # again, under the write lock: another process may have migrated meanwhile
        if version is None:
            for statement in DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version < SCHEMA_VERSION:
            for number in range(version + 1, SCHEMA_VERSION + 1):
                for statement in UPGRADES[number]:
                    conn.execute(statement)
                if number == 3:
                    _scope_ids(conn)
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
