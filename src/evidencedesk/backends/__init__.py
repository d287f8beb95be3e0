"""Storage backends: the embedded SQLite store (default) and PostgreSQL with pgvector.

``open_store(target)`` picks one from its argument: a ``postgresql://`` (or ``postgres://``) URL
opens a PgStore, anything else is a folder for the embedded Store. Both offer the same methods for
documents, chunks, builds, ingest, sync, traces and evaluation runs. The PostgreSQL backend is
imported only when a URL asks for it, so the embedded store needs no PostgreSQL driver.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.store import Store
from evidencedesk.urls import POSTGRES_SCHEMES, is_postgres_url

if TYPE_CHECKING:
    from evidencedesk.backends.postgres import PgStore


def open_store(target: str | Path, **options: Any) -> Store | PgStore:
    """The embedded Store in folder ``target``, or a PgStore when ``target`` is a PostgreSQL URL.

    ``options`` go to the chosen class (e.g. ``chunker`` for both; ``schema``, ``tokenizer``, ``k1``,
    ``b``, ``embedder``, ``cache_path`` for PostgreSQL).
    """
    if is_postgres_url(target):
        from evidencedesk.backends.postgres import PgStore

        return PgStore(str(target), **options)
    if isinstance(target, str) and "://" in target:
        raise ValueError(f"store: unsupported URL {target!r}; use a folder or postgresql://USER@HOST:PORT/DB")
    return Store(target, **options)


def holds_store(location: str | Path) -> bool:
    """Whether ``location`` names a store: a PostgreSQL URL, or a folder holding an embedded store.

    Args:
        location: A folder or a ``postgresql://`` URL.

    Returns:
        True for any PostgreSQL URL (it is not opened) and for a folder with the embedded store's
        database in it; False otherwise.
    """
    from evidencedesk.store import DB_NAME

    return is_postgres_url(location) or (Path(location) / DB_NAME).is_file()


__all__ = ["POSTGRES_SCHEMES", "holds_store", "is_postgres_url", "open_store"]
