"""Connecting to PostgreSQL: URL checks, the schema migration and a psycopg_pool connection pool.

Every pooled connection is in autocommit mode (writes open explicit transactions), has the store's
schema first on its ``search_path`` and knows pgvector's ``vector`` and ``sparsevec`` types.
"""

from __future__ import annotations

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from evidencedesk.backends import is_postgres_url
from evidencedesk.backends.postgres.schema import migrate, search_path
from evidencedesk.errors import PgStoreError
from evidencedesk.urls import redact_url


def check_schema_name(schema: str) -> str:
    if not isinstance(schema, str) or not schema or len(schema) > 63 or "\x00" in schema:
        raise ValueError(f"schema: must be a PostgreSQL identifier of 1 to 63 characters, got {schema!r}")
    return schema


def open_pool(url: str, schema: str, min_size: int = 1, max_size: int = 4, timeout: float = 10.0) -> ConnectionPool:
    """Migrate the schema, then open a pool of configured connections (raises PgStoreError when unreachable)."""
    if not is_postgres_url(url):
        raise ValueError(f"url: expected postgresql://USER@HOST:PORT/DB, got {url!r}")
    if min_size < 1 or max_size < min_size:
        raise ValueError(f"pool size: need 1 <= min_size <= max_size, got {min_size}, {max_size}")
    check_schema_name(schema)
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))) as conn:
            migrate(conn, schema)
            set_path = search_path(conn, schema)
    except psycopg.OperationalError as exc:
        raise PgStoreError(f"cannot connect to {redact_url(url)}: {str(exc).strip()}") from None

    return configured_pool(url, set_path, min_size, max_size, timeout, f"evidencedesk-{schema}", redact_url(url))


def configured_pool(
    url: str, set_path: str | sql.Composed, min_size: int, max_size: int, timeout: float, name: str, shown: str
) -> ConnectionPool:
    """An open pool whose connections use ``set_path`` (the store's search path) and know pgvector's
    types; ``shown`` names the server in errors (its URL without the password)."""

    def configure(conn: psycopg.Connection) -> None:
        conn.execute(set_path)
        register_vector(conn)

    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout))},
        configure=configure,
        name=name,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as exc:
        pool.close()
        raise PgStoreError(f"cannot open a connection pool to {shown}: {exc}") from None
    return pool
