"""Read replicas: searches go to read-only streaming replicas, every write to the primary.

A store names its replicas in its URL (``?replicas=HOST:PORT,HOST:PORT``: same user, password and
database as the primary) or as full URLs (``PgStore(url, replicas=[...])``). ``ReadRouter`` hands
out connections from one pool per replica in turn; with no replica it hands out the primary's.
A replica answers from the last WAL it replayed, so a search may trail the newest ingest by the
replication lag; ``wait_for_replicas`` blocks until every replica has replayed the primary's
current WAL position (read-your-writes after an ingest).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg_pool import ConnectionPool

from evidencedesk.backends import is_postgres_url
from evidencedesk.backends.postgres.connection import configured_pool
from evidencedesk.backends.postgres.schema import applied_version, search_path
from evidencedesk.errors import PgStoreError
from evidencedesk.urls import redact_url

REPLICAS_OPTION = "replicas"


def split_replicas(url: str) -> tuple[str, list[str]]:
    """The primary's URL without the ``replicas`` option, and one URL per replica it names.

    ``postgresql://u:p@db1:5432/app?replicas=db2:5432,db3`` gives the primary
    ``postgresql://u:p@db1:5432/app`` and the replicas ``postgresql://u:p@db2:5432/app`` and
    ``postgresql://u:p@db3/app``. Other query options are kept on every URL.
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    named = [v for k, v in query if k == REPLICAS_OPTION]
    if not named:
        return url, []
    rest = urlencode([(k, v) for k, v in query if k != REPLICAS_OPTION])
    primary = parts._replace(query=rest).geturl()
    userinfo = parts.netloc.rpartition("@")[0]
    replicas = []
    for value in named:
        for host in (h.strip() for h in value.split(",")):
            if not host or "/" in host or "@" in host:
                raise ValueError(
                    f"url: the replicas option takes HOST[:PORT] entries separated by commas, got {value!r}"
                )
            netloc = f"{userinfo}@{host}" if userinfo else host
            replicas.append(parts._replace(netloc=netloc, query=rest).geturl())
    return primary, replicas


def open_read_pool(url: str, schema: str, min_size: int, max_size: int, timeout: float) -> ConnectionPool:
    """A pool of read connections to a replica that already holds the store's schema (never migrates)."""
    if not is_postgres_url(url):
        raise ValueError(f"replicas: expected postgresql://USER@HOST:PORT/DB URLs, got {url!r}")
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))) as conn:
            if applied_version(conn, schema) == 0:
                raise PgStoreError(
                    f"replica {redact_url(url)} has no store schema {schema!r} yet; it must replicate the primary"
                )
            set_path = search_path(conn, schema)
    except psycopg.OperationalError as exc:
        raise PgStoreError(f"cannot connect to replica {redact_url(url)}: {str(exc).strip()}") from None

    return configured_pool(
        url, set_path, min_size, max_size, timeout, f"evidencedesk-{schema}-replica", f"replica {redact_url(url)}"
    )


class ReadRouter:
    """Connections for searches: from each replica's pool in turn, or from the primary when there is none."""

    def __init__(self, primary: ConnectionPool, replicas: Sequence[ConnectionPool] = ()) -> None:
        self.primary = primary
        self.replicas = list(replicas)
        self._turn = itertools.cycle(range(len(self.replicas))) if self.replicas else None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        pool = self.replicas[next(self._turn)] if self._turn is not None else self.primary
        with pool.connection() as conn:
            yield conn

    def wait(self, timeout: float = 30.0, poll: float = 0.05) -> None:
        """Block until every replica has replayed the primary's current WAL position (TimeoutError if not)."""
        if not self.replicas:
            return
        with self.primary.connection() as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        target = row[0] if row else "0/0"
        deadline = time.monotonic() + timeout
        for pool in self.replicas:
            while not self._replayed(pool, target):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"a replica has not replayed WAL position {target} after {timeout} s")
                time.sleep(poll)

    @staticmethod
    def _replayed(pool: ConnectionPool, target: str) -> bool:
        """Whether the replica behind ``pool`` has replayed WAL up to ``target``. A replica ends a session
        whose reads conflict with what it replays (a dropped table, a vacuumed row); then the answer is
        "not yet", that connection leaves the pool, and the next poll asks on a fresh one."""
        try:
            with pool.connection() as conn:
                query = "SELECT coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, true)"
                row = conn.execute(query, (target,)).fetchone()
        except (psycopg.errors.SerializationFailure, psycopg.OperationalError):
            return False
        return bool(row and row[0])

    def close(self) -> None:
        for pool in self.replicas:
            pool.close()
