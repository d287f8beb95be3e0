"""A throwaway database on the test PostgreSQL server, for tests that need a store of their own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit


@contextmanager
def fresh_database(pg_url: str, prefix: str) -> Iterator[str]:
    """A new database ``<prefix>_<random hex>`` on ``pg_url``'s server (its URL), dropped on exit."""
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlsplit(pg_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
