"""Document ids are scoped by tenant, in the embedded store and in PostgreSQL.

A document of tenant ``default`` keeps its plain id (a single-tenant store reads as before); any
other tenant's document is stored as ``<tenant>:<id>`` (an id may not hold ``:``, so no two
tenants' ids can meet). Two tenants may use the same id, neither can overwrite the other's, and a
document whose tenant changes is reported as added under the new tenant and removed (or kept) under
the old one: never silently moved.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.cli import app
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import DB_NAME, Store

CONFIG = ChunkingConfig()


def page(ident: str, tenant: str, text: str) -> str:
    return f"---\nid: {ident}\ntenant: {tenant}\n---\n\n# {ident}\n\n{text}\n"


def folder(root: Path, name: str, files: dict[str, str]) -> Path:
    out = root / name
    out.mkdir(parents=True)
    for rel, text in files.items():
        (out / rel).write_text(text, encoding="utf-8")
    return out


def tenants_by_id(store: Any) -> dict[str, str]:
    return {d.id: d.metadata.tenant for d in store.documents()}


def _same_id_in_two_tenants(store: Any, tmp_path: Path) -> None:
    a = folder(tmp_path, "a", {"shared.md": page("shared", "acme", "Acme text about anvils.")})
    b = folder(tmp_path, "b", {"shared.md": page("shared", "globex", "Globex text about gadgets.")})
    first = ingest_folder(store, a, CONFIG, remove_missing=False)
    second = ingest_folder(store, b, CONFIG, remove_missing=False)
    assert first.added == ["acme:shared"]
    assert second.added == ["globex:shared"] and second.updated == []
    assert tenants_by_id(store) == {"acme:shared": "acme", "globex:shared": "globex"}
    assert "anvils" in store.document("acme:shared").text and "gadgets" in store.document("globex:shared").text
    assert [c.id for c in store.chunks("globex:shared")][0] == "globex:shared:c0"


def test_two_tenants_may_use_one_id_sqlite(tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        _same_id_in_two_tenants(store, tmp_path)


@pytest.mark.integration
def test_two_tenants_may_use_one_id_postgres(make_store: Callable[..., Any], tmp_path: Path) -> None:
    _same_id_in_two_tenants(make_store(), tmp_path)


def test_default_tenant_ids_are_unchanged(tmp_path: Path) -> None:
    docs = folder(tmp_path, "d", {"plain.md": "# Plain\n\nNo front matter.\n", "x.md": page("x-1", "default", "x")})
    with Store(tmp_path / "store") as store:
        report = ingest_folder(store, docs, CONFIG)
        assert sorted(report.added) == ["plain", "x-1"]
        assert store.chunk("plain:c0") is not None


def _tenant_change_is_reported(store: Any, tmp_path: Path) -> None:
    docs = folder(tmp_path, "docs", {"p.md": page("policy", "acme", "Version one.")})
    ingest_folder(store, docs, CONFIG)
    (docs / "p.md").write_text(page("policy", "globex", "Version one."), encoding="utf-8")
    report = ingest_folder(store, docs, CONFIG)
    assert report.added == ["globex:policy"] and report.removed == ["acme:policy"] and report.updated == []
    assert tenants_by_id(store) == {"globex:policy": "globex"}


def test_a_tenant_change_is_an_add_and_a_remove_sqlite(tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        _tenant_change_is_reported(store, tmp_path)


@pytest.mark.integration
def test_a_tenant_change_is_an_add_and_a_remove_postgres(make_store: Callable[..., Any], tmp_path: Path) -> None:
    _tenant_change_is_reported(make_store(), tmp_path)


def test_cli_keep_missing_never_moves_a_document_to_another_tenant(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    a = folder(tmp_path, "a", {"shared.md": page("shared", "acme", "Acme only.")})
    b = folder(tmp_path, "b", {"shared.md": page("shared", "globex", "Globex only.")})
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(a), "--store", store, "--json"]).exit_code == 0
    result = runner.invoke(app, ["ingest", str(b), "--store", store, "--keep-missing", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["added"] == ["globex:shared"] and report["updated"] == []
    with Store(Path(store)) as db:
        assert tenants_by_id(db) == {"acme:shared": "acme", "globex:shared": "globex"}
        assert "Acme only." in db.document("acme:shared").text


def test_an_older_store_is_migrated_to_tenant_scoped_ids(tmp_path: Path) -> None:
    docs = folder(
        tmp_path,
        "docs",
        {"a.md": page("alpha", "acme", "Alpha text."), "b.md": "# Beta\n\nDefault tenant text.\n"},
    )
    path = tmp_path / "store"
    with Store(path) as store:
        ingest_folder(store, docs, CONFIG)
    # write the store back as version 2 wrote it: plain ids for every tenant
    with sqlite3.connect(path / DB_NAME) as conn:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("UPDATE documents SET id = 'alpha' WHERE id = 'acme:alpha'")
        conn.execute("UPDATE chunks SET id = substr(id, 6), doc_id = 'alpha' WHERE doc_id = 'acme:alpha'")
        conn.execute("UPDATE schema_version SET version = 2")
    with Store(path) as store:
        assert tenants_by_id(store) == {"acme:alpha": "acme", "b": "default"}
        assert [c.id for c in store.chunks("acme:alpha")] == ["acme:alpha:c0"]
        again = ingest_folder(store, docs, CONFIG)
        assert sorted(again.unchanged) == ["acme:alpha", "b"] and again.added == [] and again.removed == []


@pytest.mark.integration
def test_an_older_postgres_store_is_migrated_to_tenant_scoped_ids(
    make_store: Callable[..., Any], pg_url: str, tmp_path: Path
) -> None:
    import psycopg
    from psycopg import sql

    from evidencedesk.backends.postgres import PgStore

    docs = folder(
        tmp_path,
        "docs",
        {"a.md": page("alpha", "acme", "Alpha text."), "b.md": "# Beta\n\nDefault tenant text.\n"},
    )
    store = make_store()
    ingest_folder(store, docs, CONFIG)
    schema = store.schema
    # write the store back as version 3 wrote it: plain ids, and foreign keys without ON UPDATE
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
        conn.execute("SET CONSTRAINTS ALL DEFERRED")
        for table, column, parent in (
            ("chunks", "doc_id", "documents(id)"),
            ("chunk_terms", "chunk_id", "chunks(id)"),
            ("chunk_vectors", "chunk_id", "chunks(id)"),
        ):
            conn.execute(
                f"ALTER TABLE {table} DROP CONSTRAINT {table}_{column}_fkey, ADD CONSTRAINT {table}_{column}_fkey "
                f"FOREIGN KEY ({column}) REFERENCES {parent} ON DELETE CASCADE DEFERRABLE"
            )
        conn.execute("SET CONSTRAINTS ALL DEFERRED")
        conn.execute("UPDATE documents SET id = 'alpha' WHERE id = 'acme:alpha'")
        conn.execute("UPDATE chunks SET id = substr(id, 6), doc_id = 'alpha' WHERE doc_id = 'acme:alpha'")
        conn.execute(
            "UPDATE chunk_terms SET chunk_id = substr(chunk_id, 6), doc_id = 'alpha' WHERE doc_id = 'acme:alpha'"
        )
        conn.execute("DELETE FROM schema_migrations WHERE version = 4")
    again = PgStore(pg_url, schema=schema)
    try:
        assert tenants_by_id(again) == {"acme:alpha": "acme", "b": "default"}
        assert [c.id for c in again.chunks("acme:alpha")] == ["acme:alpha:c0"]
        report = ingest_folder(again, docs, CONFIG)
        assert sorted(report.unchanged) == ["acme:alpha", "b"] and report.added == [] and report.removed == []
    finally:
        again.close()
