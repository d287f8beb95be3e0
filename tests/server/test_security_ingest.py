"""Scoped writes: a key may not upload another tenant's document, and a refused upload leaves that
tenant's stored documents and chunks byte for byte as they were. (Reusing another tenant's id is no
attack: ids are scoped by tenant, see test_security_hostile.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidencedesk.store import DB_NAME
from evidencedesk.store.schema import SCHEMA_VERSION
from tests.support.security import auth, build_store, doc_id, note, service_settings, write_labels
from tests.support.server import make_client


def dump(store: Path, tenant: str) -> list[tuple[Any, ...]]:
    """Every column of the tenant's document and chunk rows, in a fixed order."""
    with sqlite3.connect(store / DB_NAME) as conn:
        docs = conn.execute("SELECT * FROM documents WHERE tenant = ? ORDER BY id", (tenant,)).fetchall()
        chunks = conn.execute("SELECT * FROM chunks WHERE tenant = ? ORDER BY id", (tenant,)).fetchall()
    return [*docs, *chunks]


@pytest.fixture
def world(tmp_path: Path) -> tuple[TestClient, Path]:
    store = build_store(tmp_path)
    client = make_client(store, service_settings(write_labels(tmp_path / "labels.jsonl")))
    client.__enter__()
    yield client, store
    client.__exit__(None, None, None)


ATTACKS = {
    # a tenant-A document that claims tenant B
    "claims another tenant": note("acme", "public", claim=("globex", "public"), ident="acme-new"),
    # an audience the key may not write
    "claims a wider audience": note("acme", "public", claim=("acme", "board"), ident="acme-board"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_upload_outside_the_scope_is_refused_and_changes_nothing(
    world: tuple[TestClient, Path], attack: str
) -> None:
    client, store = world
    before = {t: dump(store, t) for t in ("acme", "globex", "initech")}
    assert before["globex"], "the victim tenant has rows to protect"
    files = [
        ("files", ("fine.md", note("acme", "public", ident="acme-fine"), "text/markdown")),
        ("files", ("attack.md", ATTACKS[attack], "text/markdown")),
    ]
    r = client.post("/ingest", files=files, headers=auth("acme-staff"))
    assert r.status_code == 403, r.text
    assert "attack.md" in r.json()["detail"] and "zqglobex" not in r.text
    after = {t: dump(store, t) for t in ("acme", "globex", "initech")}
    assert after == before  # refused as a whole: not even the fine file was written
    assert client.get("/documents/acme-fine", headers=auth("acme-staff")).status_code == 404


def test_the_check_can_fail_an_allowed_upload_changes_the_store(world: tuple[TestClient, Path]) -> None:
    client, store = world
    before = dump(store, "acme")
    text = note("acme", "staff", extra="Updated terms.")  # the key's own tenant and audience, its own id
    r = client.post("/ingest", files=[("files", ("d01.md", text, "text/markdown"))], headers=auth("acme-staff"))
    assert r.status_code == 200, r.text
    assert r.json()["updated"] == [f"acme:{doc_id('acme', 'staff')}"]
    assert dump(store, "acme") != before
    # the report counts only what the key sees (acme, public and staff): never another tenant's documents
    assert r.json()["n_documents"] == 2


def test_a_key_without_ingest_and_anonymous_callers_may_not_write(world: tuple[TestClient, Path]) -> None:
    client, _ = world
    files = [("files", ("x.md", note("acme", "public", ident="x"), "text/markdown"))]
    assert client.post("/ingest", files=files, headers=auth("acme-public")).status_code == 403
    assert client.post("/ingest", files=files).status_code == 403


def test_an_embedded_store_of_version_1_gains_owner_columns(tmp_path: Path) -> None:
    """A store made before traces had owners opens with its traces kept, now ownerless."""
    from evidencedesk.store import Store

    with Store(tmp_path / "s") as db:
        db.save_trace("old", {"query": "q"})
    with sqlite3.connect(tmp_path / "s" / DB_NAME) as conn:  # make it look like a version 1 store
        # the tables as version 1 made them: no owner column
        conn.execute("CREATE TABLE t2 (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, data TEXT NOT NULL)")
        conn.execute("INSERT INTO t2 SELECT id, created_at, data FROM traces")
        conn.execute("DROP TABLE traces")
        conn.execute("ALTER TABLE t2 RENAME TO traces")
        conn.execute(
            "CREATE TABLE e2 (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, build_id INTEGER,"
            " data TEXT NOT NULL)"
        )
        conn.execute("DROP TABLE eval_runs")
        conn.execute("ALTER TABLE e2 RENAME TO eval_runs")
        conn.execute("UPDATE schema_version SET version = 1")
    with Store(tmp_path / "s") as db:
        assert db.load_trace("old") == {"query": "q"} and db.load_trace("old", owner="k") is None
        db.save_trace("new", {"query": "r"}, owner="k")
        assert [t["query"] for t in db.traces(owner="k")] == ["r"]
        assert db.save_eval_run({"m": 1}, owner="k") and len(db.eval_runs(owner="k")) == 1
    with sqlite3.connect(tmp_path / "s" / DB_NAME) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
