"""The service under hostile callers: tenant-scoped ids, no 5xx on odd input, nothing left on disk,
error bodies that name only what the caller may see, reserved key names and conflicting credentials.

Each test stands for one finding of a review made as an attacker holding keys of three tenants."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidencedesk.config import ConfigError
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.store import DB_NAME
from tests.support.security import KEYS, auth, build_store, doc_id, note, service_settings, write_labels
from tests.support.server import make_client


def dump(store: Path, tenant: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store / DB_NAME) as conn:
        docs = conn.execute("SELECT * FROM documents WHERE tenant = ? ORDER BY id", (tenant,)).fetchall()
        chunks = conn.execute("SELECT * FROM chunks WHERE tenant = ? ORDER BY id", (tenant,)).fetchall()
    return [*docs, *chunks]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[TestClient, Path, Path]]:
    """The three-tenant store, a service over it, and a server-side folder it may ingest from."""
    store = build_store(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    client = make_client(store, service_settings(write_labels(tmp_path / "labels.jsonl"), root))
    with client:
        yield client, store, root


def upload(client: TestClient, key: str, *files: tuple[str, str]) -> Any:
    parts = [("files", (name, text, "text/markdown")) for name, text in files]
    return client.post("/ingest", files=parts, headers=auth(key))


# 1. ids are scoped by tenant --------------------------------------------------------------------


def test_a_hidden_id_and_an_unknown_id_answer_alike(world: tuple[TestClient, Path, Path]) -> None:
    client, store, _ = world
    before = dump(store, "acme")
    hidden = upload(client, "globex-staff", ("a.md", note("globex", "staff", ident=doc_id("acme", "staff"))))
    unknown = upload(client, "globex-staff", ("b.md", note("globex", "staff", ident="never-used-before")))
    assert (hidden.status_code, unknown.status_code) == (200, 200), (hidden.text, unknown.text)
    assert hidden.json()["added"] == [f"globex:{doc_id('acme', 'staff')}"]
    assert unknown.json()["added"] == ["globex:never-used-before"]
    assert dump(store, "acme") == before  # the other tenant's document is untouched


def test_an_id_taken_first_by_one_tenant_stays_free_for_another(world: tuple[TestClient, Path, Path]) -> None:
    client, _, _ = world
    first = upload(client, "globex-staff", ("s.md", note("globex", "public", ident="squatted")))
    assert first.status_code == 200, first.text
    second = upload(client, "acme-staff", ("s.md", note("acme", "public", ident="squatted")))
    assert second.status_code == 200, second.text
    assert second.json()["added"] == ["acme:squatted"]
    mine = client.get("/documents/acme:squatted", headers=auth("acme-staff"))
    theirs = client.get("/documents/globex:squatted", headers=auth("globex-staff"))
    assert mine.status_code == theirs.status_code == 200
    assert mine.json()["metadata"]["tenant"] == "acme" and theirs.json()["metadata"]["tenant"] == "globex"
    # and neither key sees the other's copy
    assert client.get("/documents/globex:squatted", headers=auth("acme-staff")).status_code == 404


# 2. uploads: names checked before anything is written; nothing left behind ---------------------


def leftovers(store: Path) -> list[Path]:
    return [p for p in (store / "uploads").rglob("*") if p.is_file()] if (store / "uploads").exists() else []


def test_a_300_character_file_name_is_a_400_and_leaves_nothing(world: tuple[TestClient, Path, Path]) -> None:
    client, store, _ = world
    long_name = "n" * 297 + ".md"
    r = upload(
        client,
        "acme-staff",
        ("first.md", note("acme", "public", ident="first-upload")),
        (long_name, note("acme", "public", ident="long-upload")),
    )
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "file name" in r.json()["detail"]
    assert leftovers(store) == []


def test_a_failed_ingest_leaves_no_staged_upload(world: tuple[TestClient, Path, Path]) -> None:
    client, store, _ = world
    r = upload(client, "acme-staff", ("x.md", note("acme", "public", claim=("globex", "public"), ident="x")))
    assert r.status_code == 403
    ok = upload(client, "acme-staff", ("y.md", note("acme", "public", ident="y")))
    assert ok.status_code == 200
    assert leftovers(store) == []


# 3. non-finite numbers, and 4. huge integers: never a 5xx ----------------------------------------

NON_FINITE = [
    ("/search", '{"query": "warranty", "k": NaN}'),
    ("/search", '{"query": "warranty", "k": Infinity}'),
    ("/ask", '{"question": "warranty?", "budget": -Infinity}'),
    ("/search", '{"query": "warranty", "scope": {"check_validity": NaN}}'),
    ("/eval", '{"k": NaN}'),
]


@pytest.mark.parametrize(("route", "body"), NON_FINITE)
def test_non_finite_numbers_are_a_422(world: tuple[TestClient, Path, Path], route: str, body: str) -> None:
    client, _, _ = world
    headers = {**auth("admin"), "content-type": "application/json"}
    r = client.post(route, content=body, headers=headers)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("suffix", ["", "/report"])
def test_a_huge_run_id_is_a_404(world: tuple[TestClient, Path, Path], suffix: str) -> None:
    client, _, _ = world
    for run_id in ("99999999999999999999", "-99999999999999999999", "9223372036854775808"):
        r = client.get(f"/eval/runs/{run_id}{suffix}", headers=auth("admin"))
        assert r.status_code == 404, (run_id, r.status_code, r.text)


# 5. error bodies name only what the caller may see ------------------------------------------------


def test_a_refused_path_ingest_names_no_other_file_tenant_or_audience(world: tuple[TestClient, Path, Path]) -> None:
    client, _, root = world
    mixed = root / "mixed"
    mixed.mkdir()
    (mixed / "mine.md").write_text(note("acme", "public", ident="mine"), encoding="utf-8")
    (mixed / "secret-globex-plan.md").write_text(note("globex", "staff", ident="plan"), encoding="utf-8")
    r = client.post("/ingest", json={"path": "mixed"}, headers=auth("acme-staff"))
    assert r.status_code == 403, r.text
    detail = r.json()["detail"]
    for word in ("secret-globex-plan", "globex", "staff", "plan"):
        assert word not in detail, detail


def test_a_refused_labels_file_names_no_server_path(world: tuple[TestClient, Path, Path], tmp_path: Path) -> None:
    client, _, root = world
    (root / "bad.jsonl").write_text('{"id": "q1"}\nnot json\n', encoding="utf-8")
    r = client.post("/eval", json={"labels": "bad.jsonl"}, headers=auth("acme-staff"))
    assert r.status_code == 400, r.text
    assert str(tmp_path) not in r.text and str(root) not in r.text
    assert "bad.jsonl" in r.json()["detail"]
    missing = client.post("/eval", json={"labels": "../../etc/passwd"}, headers=auth("acme-staff"))
    assert missing.status_code in (403, 404) and str(tmp_path) not in missing.text


# 6. reserved key names and conflicting credentials ------------------------------------------------


@pytest.mark.parametrize("name", ["anonymous", "Anonymous", " anonymous "])
def test_a_key_named_anonymous_is_refused_at_start(name: str) -> None:
    data = {"keys": [{"name": name, "key": "a-long-enough-secret-key-0123"}]}
    with pytest.raises(ConfigError, match="reserved"):
        parse_service_settings(data)


def test_two_different_api_key_headers_are_a_401(world: tuple[TestClient, Path, Path]) -> None:
    client, _, _ = world
    twice = [("X-API-Key", KEYS["acme-public"]), ("X-API-Key", KEYS["admin"])]
    assert client.get("/documents", headers=twice).status_code == 401
    same = [("X-API-Key", KEYS["acme-public"]), ("X-API-Key", KEYS["acme-public"])]
    assert client.get("/documents", headers=same).status_code == 200
    bearers = [("Authorization", f"Bearer {KEYS['acme-public']}"), ("Authorization", f"Bearer {KEYS['admin']}")]
    assert client.get("/documents", headers=bearers).status_code == 401
    mixed = {"X-API-Key": KEYS["acme-public"], "Authorization": f"Bearer {KEYS['admin']}"}
    assert client.get("/documents", headers=mixed).status_code == 401
