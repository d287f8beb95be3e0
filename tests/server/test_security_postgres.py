"""PostgreSQL: row-level security keyed by tenant under the WHERE clause, and per-tenant BM25 statistics.

Superusers (and BYPASSRLS roles) pass row-level security whatever the policy, and these tests
connect as the server's superuser, so the wall is checked as an ordinary role created here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import stored_id
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.scope import Scope
from tests.support.security import AUDIENCES, QUERY, TENANTS, doc_id, note, write_corpus

psycopg = pytest.importorskip("psycopg")
from evidencedesk.backends.postgres import PgStore  # noqa: E402
from evidencedesk.backends.postgres import searchers as pg_searchers  # noqa: E402
from evidencedesk.backends.postgres.searchers import PgBM25Searcher  # noqa: E402

PG_URL = os.environ.get("EVIDENCEDESK_PG_URL", "postgresql://postgres@127.0.0.1:55432/evidencedesk_test")
ACME = Scope(statuses=None, audiences=frozenset(AUDIENCES), tenants=frozenset({"acme"}))
TABLES = ("documents", "chunks", "chunk_terms")


@pytest.fixture(scope="module")
def pg_url() -> str:
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no PostgreSQL server at {PG_URL}: {exc}")
        pytest.skip(f"no PostgreSQL server at {PG_URL}")
    return PG_URL


def _drop(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _store(url: str, root: Path, tenants: tuple[str, ...]) -> PgStore:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for t in tenants:
        for a in AUDIENCES:
            common = "Receipt receipt policy policy policy warranty frames. "
            extra = "" if t == "acme" else common * (3 + TENANTS.index(t))
            (docs / f"{doc_id(t, a)}.md").write_text(note(t, a, extra), encoding="utf-8")
    store = PgStore(url, schema=f"sec_{uuid.uuid4().hex[:10]}")
    ingest_folder(store, docs, ChunkingConfig())
    return store


@pytest.fixture(scope="module")
def stores(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, PgStore]]:
    made = {
        "alone": _store(pg_url, tmp_path_factory.mktemp("pg-alone"), ("acme",)),
        "shared": _store(pg_url, tmp_path_factory.mktemp("pg-shared"), TENANTS),
    }
    yield made
    for store in made.values():
        store.close()
        _drop(pg_url, store.schema)


@pytest.fixture(scope="module")
def reader(pg_url: str, stores: dict[str, PgStore]) -> Iterator[str]:
    """An ordinary role (no superuser, no BYPASSRLS) that may read the shared store's schema."""
    role = f"evd_reader_{uuid.uuid4().hex[:8]}"
    schema = stores["shared"].schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO {role}')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO {role}')
        row = conn.execute("SELECT current_database()").fetchone()
        conn.execute(f'GRANT CONNECT ON DATABASE "{row[0]}" TO {role}')
    yield role
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'REVOKE ALL ON ALL TABLES IN SCHEMA "{schema}" FROM {role}')
        conn.execute(f'REVOKE ALL ON SCHEMA "{schema}" FROM {role}')
        row = conn.execute("SELECT current_database()").fetchone()
        conn.execute(f'REVOKE ALL ON DATABASE "{row[0]}" FROM {role}')
        conn.execute(f"DROP ROLE {role}")


def _tenants_seen(url: str, schema: str, role: str | None, tenants: str | None) -> dict[str, set[str]]:
    """The tenants each table shows to ``role`` after setting ``evidencedesk.tenants``, with a WHERE
    clause that forgets the tenant (it asks for every row)."""
    with psycopg.connect(url) as conn, conn.transaction():
        if role:
            conn.execute(f"SET LOCAL ROLE {role}")
        if tenants is not None:
            conn.execute("SELECT set_config('evidencedesk.tenants', %s, true)", (tenants,))
        return {
            t: {r[0] for r in conn.execute(f'SELECT tenant FROM "{schema}".{t} WHERE true').fetchall()} for t in TABLES
        }


def test_a_session_set_to_one_tenant_reads_no_other_tenants_row(
    pg_url: str, stores: dict[str, PgStore], reader: str
) -> None:
    schema = stores["shared"].schema
    everyone = {t: set(TENANTS) for t in TABLES}
    assert _tenants_seen(pg_url, schema, reader, '["acme"]') == {t: {"acme"} for t in TABLES}
    assert _tenants_seen(pg_url, schema, reader, '["acme", "initech"]') == {t: {"acme", "initech"} for t in TABLES}
    assert _tenants_seen(pg_url, schema, reader, "[]") == {t: set() for t in TABLES}
    # control: the same role without the setting sees every tenant, so the wall is what hid them ...
    assert _tenants_seen(pg_url, schema, reader, None) == everyone
    # ... and a superuser passes row-level security whatever is set (why the wall needs an ordinary role)
    assert _tenants_seen(pg_url, schema, None, '["acme"]') == everyone


def test_the_searcher_sets_the_wall_even_when_its_where_clause_forgets_the_tenant(
    pg_url: str, stores: dict[str, PgStore], reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = urlsplit(pg_url)
    as_reader = parts._replace(netloc=f"{reader}@{parts.hostname}:{parts.port}").geturl()
    store = PgStore(as_reader, schema=stores["shared"].schema)
    try:
        searcher = PgBM25Searcher(store)
        full = searcher.search(QUERY, 20, ACME)
        assert full and {c.chunk.metadata.tenant for c in full} == {"acme"}
        forgetful = pg_searchers.scope_condition

        def no_tenant(scope: Scope | None, alias: str = "") -> Any:
            from dataclasses import replace

            return forgetful(replace(scope, tenants=None) if scope is not None else None, alias)

        monkeypatch.setattr(pg_searchers, "scope_condition", no_tenant)
        walled = searcher.search(QUERY, 20, ACME)
        assert {c.chunk.metadata.tenant for c in walled} == {"acme"}
        assert [c.chunk.id for c in walled] == [c.chunk.id for c in full]
        # control: without the setting (a scope of any tenant) the forgetful clause does reach the others
        anyone = Scope(statuses=None, audiences=frozenset(AUDIENCES))
        assert {c.chunk.metadata.tenant for c in searcher.search(QUERY, 20, anyone)} == set(TENANTS)
    finally:
        store.close()


def test_per_tenant_statistics_in_postgres(stores: dict[str, PgStore]) -> None:
    for query in (QUERY, "receipt form within 30 days"):
        alone = [
            (c.chunk.id, c.score)
            for c in PgBM25Searcher(stores["alone"], tenant_statistics=True).search(query, 10, ACME)
        ]
        shared = [
            (c.chunk.id, c.score)
            for c in PgBM25Searcher(stores["shared"], tenant_statistics=True).search(query, 10, ACME)
        ]
        assert alone and shared == alone
        # control: with the store-wide statistics the other tenants' text moves acme's scores
        global_ = [(c.chunk.id, c.score) for c in PgBM25Searcher(stores["shared"]).search(query, 10, ACME)]
        assert [s for _, s in global_] != [s for _, s in alone]


def test_write_corpus_is_what_the_stores_hold(stores: dict[str, PgStore], tmp_path: Path) -> None:
    assert sorted(d.id for d in stores["shared"].documents()) == sorted(
        stored_id(p.stem, TENANTS[int(p.stem[1])]) for p in write_corpus(tmp_path / "c").iterdir()
    )


def test_a_version_1_store_is_migrated_with_owners_and_policies(pg_url: str, tmp_path: Path) -> None:
    """A store made before traces had owners opens, gains the owner columns and the tenant policies,
    and keeps its traces (they have no owner: made outside the service)."""
    from evidencedesk.backends.postgres.schema import MIGRATIONS, search_path

    schema = f"sec_old_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".schema_migrations (version integer PRIMARY KEY, applied_at text)')
        with conn.transaction():
            conn.execute(search_path(conn, schema, local=True))
            conn.execute(MIGRATIONS[1].encode())
            conn.execute("INSERT INTO schema_migrations VALUES (1, 'then')")
            conn.execute("INSERT INTO traces (id, created_at, data) VALUES ('old', 'then', '{\"query\": \"q\"}')")
    try:
        with PgStore(pg_url, schema=schema) as store:
            assert store.load_trace("old") == {"query": "q"}
            assert store.load_trace("old", owner="someone") is None
            store.save_trace("new", {"query": "r"}, owner="someone")
            assert [t["query"] for t in store.traces(owner="someone")] == ["r"]
            with store.pool.connection() as conn:
                policies = conn.execute(
                    "SELECT tablename FROM pg_policies WHERE schemaname = %s ORDER BY tablename", (schema,)
                ).fetchall()
        expected = ["documents", "chunks", "chunk_terms", "chunk_vectors", "bm25_blocks"]
        assert [p[0] for p in policies] == sorted(expected)
    finally:
        _drop(pg_url, schema)
