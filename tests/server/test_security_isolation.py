"""Every route, every key (and no key): nothing from outside the caller's scope in any response.

The routes come from the app itself, so a route added later is probed too (or this test fails
until a probe for it is written). Each response's raw body and headers are searched for the
marker words of the documents the caller may not see, after every key has left traces and
evaluation runs behind for the others to find. The probe runs over the embedded store and over
PostgreSQL (which skips without a server, or fails under ``CI``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.desk import Desk
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from evidencedesk.store.contract import StoreProtocol
from tests.support.pg_database import fresh_database
from tests.support.security import (
    QUERY,
    SCOPES,
    all_markers,
    allowed_markers,
    auth,
    build_store,
    note,
    service_settings,
    write_corpus,
    write_labels,
)
from tests.support.server import make_client

CALLERS: list[str | None] = [name for name in SCOPES if name is not None] + [None]
SCOPE_ALL = {"statuses": None, "audiences": ["public", "staff"], "tenants": ["acme", "globex", "initech"]}
# a JSON body per POST route (requests carry no marker); a new POST route needs an entry here
BODIES: dict[str, list[dict[str, Any]]] = {
    "/search": [{"query": QUERY, "k": 20, "method": m} for m in ("bm25", "tfidf")]
    + [{"query": QUERY, "k": 20, "method": "bm25", "scope": SCOPE_ALL}],
    "/ask": [{"question": QUERY, "method": "bm25", "k": 10, "scope": SCOPE_ALL}],
    "/eval": [{"method": "bm25", "k": 10, "save": True, "scope": SCOPE_ALL}],
    "/lab/search": [
        {"query": QUERY, "k": 20, "method": "bm25", "scope": SCOPE_ALL},
        {"query": QUERY, "k": 20, "method": "bm25", "chunker": {"name": "fixed", "size": 12, "unit": "words"}},
        {"question_id": "q-d00", "method": "bm25"},
        {"question_id": "q-d11", "method": "bm25"},
    ],
    "/lab/ask": [{"query": QUERY, "method": "bm25", "k": 10, "scope": SCOPE_ALL}],
    "/v1/chat/completions": [
        {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}], "scope": SCOPE_ALL},
        {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}], "stream": True},
    ],
}


def _ids(store: StoreProtocol) -> dict[str, list[str]]:
    return {
        "doc_id": sorted(d.id for d in store.documents()) + ["no-such-doc"],
        "chunk_id": sorted(c.id for c in store.chunks()) + ["no-such-doc:c0"],
    }


@pytest.fixture(scope="module")
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database (its URL) for the module, dropped at its end."""
    pg_url: str = request.getfixturevalue("pg_url")
    with fresh_database(pg_url, "evd_iso") as url:
        yield url


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The three-tenant store served with every key, on the embedded store or on PostgreSQL."""
    root = tmp_path_factory.mktemp(f"three-tenants-{request.param}")
    labels = write_labels(root / "labels.jsonl")
    if request.param == "sqlite":
        store = build_store(root)
        with Store(store) as db:
            ids = _ids(db)
        with make_client(store, service_settings(labels)) as client:
            yield {"client": client, "ids": ids}
        return
    url: str = request.getfixturevalue("pg_database")
    desk = Desk(url, Settings(), work_dir=root / "work")  # the service's work folder, not the current one
    desk.ingest(write_corpus(root / "docs"))
    ids = _ids(desk.store)
    state = ServiceState(desk, Settings(), parse_service_settings(service_settings(labels)))
    with TestClient(create_app(state)) as client:
        yield {"client": client, "ids": ids}


def _seed(client: TestClient) -> dict[str, list[str]]:
    """Every caller asks, evaluates and uses the lab, leaving traces and runs for the others to find."""
    made: dict[str, list[str]] = {"trace_id": [], "run_id": []}
    for name in CALLERS:
        for path in ("/ask", "/lab/ask"):
            r = client.post(path, json=BODIES[path][0], headers=auth(name))
            assert r.status_code == 200, (name, path, r.text)
            made["trace_id"].append(r.json()["trace_id"])
        r = client.post("/eval", json=BODIES["/eval"][0], headers=auth(name))
        if name is None:
            assert r.status_code == 403  # a caller without a key may not evaluate
        else:
            assert r.status_code == 200, (name, r.text)
            made["run_id"].append(str(r.json()["run_id"]))
    return made


def routes(app: Any) -> list[tuple[str, str]]:
    """(method, path) of every route: the OpenAPI schema's operations, the app's own routes outside
    the schema (the schema and docs pages) and the static lab mount."""
    found = [(m.upper(), path) for path, ops in app.openapi()["paths"].items() for m in ops]
    for route in app.routes:
        if isinstance(route, Mount):
            found.append(("GET", route.path + "/"))
        elif isinstance(route, Route) and not isinstance(route, APIRoute):
            found.extend((m, route.path) for m in sorted(route.methods or {"GET"}) if m != "HEAD")
    return sorted(set(found))


def _requests(app: Any, values: dict[str, list[str]]) -> Iterator[tuple[str, str, dict[str, Any] | None]]:
    """(method, url, json body) for every route of the app and every value of its path parameters."""
    for method, path in routes(app):
        params = re.findall(r"{(\w+)(?::\w+)?}", path)
        missing = [p for p in params if p not in values]
        assert not missing, f"{method} {path}: no probe values for {missing}; add them to this test"
        urls = [path]
        for p in params:
            urls = [re.sub(rf"{{{p}(?::\w+)?}}", v, u) for u in urls for v in values[p]]
        if method == "GET":
            for url in urls:
                yield method, url, None
            continue
        if path == "/ingest":
            continue  # probed with uploads below, and attacked in test_security_ingest.py
        assert path in BODIES, f"{method} {path}: no probe body; add one to BODIES"
        for url in urls:
            for body in BODIES[path]:
                yield method, url, body


def _raw(r: Any) -> str:
    return r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items())


def _probe(world: dict[str, Any]) -> dict[str | None, dict[str, str]]:
    client: TestClient = world["client"]
    made = _seed(client)
    values = dict(world["ids"])
    values.update(trace_id=made["trace_id"] + ["ffffffffffff"], run_id=made["run_id"] + ["999999"])
    seen: dict[str | None, dict[str, str]] = {}
    for name in CALLERS:
        out = seen.setdefault(name, {})
        for method, url, body in _requests(client.app, values):
            r = client.request(method, url, json=body, headers=auth(name))
            assert r.status_code < 500, (name, method, url, r.text)
            out[f"{method} {url} {body}"] = _raw(r)
        # the ingest report of a key that may ingest, and the refusal of one that may not
        tenants, audiences = SCOPES[name]
        text = note(tenants[0], audiences[0], ident=f"new-{name}").replace("mark", "fresh")
        upload = [("files", (f"new-{name}.md", text, "text/markdown"))]
        r = client.post("/ingest", files=upload, headers=auth(name))
        assert r.status_code in (200, 403), r.text
        out["POST /ingest"] = _raw(r)
        # malformed credentials are refused, never served as anonymous
        for bad in ({"Authorization": "Basic abc"}, {"Authorization": "Bearer"}, {"X-API-Key": " "}):
            r = client.post("/search", json=BODIES["/search"][0], headers=bad)
            assert r.status_code == 401, (bad, r.text)
            out[f"bad {bad}"] = _raw(r)
    return seen


@pytest.fixture(scope="module")
def responses(world: dict[str, Any]) -> dict[str | None, dict[str, str]]:
    return _probe(world)


LIMITED = [n for n in CALLERS if n != "admin"]


@pytest.mark.parametrize("name", LIMITED, ids=[str(n) for n in LIMITED])
def test_no_marker_outside_the_scope_in_any_response(
    responses: dict[str | None, dict[str, str]], name: str | None
) -> None:
    forbidden = all_markers() - allowed_markers(name)
    assert forbidden, "every caller but admin has something it may not see"
    leaks = [(where, m) for where, raw in responses[name].items() for m in forbidden if m in raw]
    assert not leaks, f"{name or 'anonymous'} saw {len(leaks)} forbidden marker(s), first: {leaks[0]}"
    assert len(responses[name]) > 60  # every route, with every id of every tenant


@pytest.mark.parametrize("name", ["admin", "acme-staff", "globex-staff", "initech-public", None])
def test_control_the_check_finds_markers_that_are_allowed(
    responses: dict[str | None, dict[str, str]], name: str | None
) -> None:
    """The same probes do carry the markers a caller may see, so a clean response means something:
    the admin key finds every marker, the others exactly their own."""
    found = {m for raw in responses[name].values() for m in all_markers() if m in raw}
    assert found == allowed_markers(name)


def test_every_route_is_probed(world: dict[str, Any], responses: dict[str | None, dict[str, str]]) -> None:
    probed = {" ".join(key.split(" ")[:2]) for key in responses["admin"]}
    every = routes(world["client"].app)
    assert ("POST", "/ask") in every and ("GET", "/traces/{trace_id}") in every and len(every) >= 20
    for method, path in every:
        pattern = re.sub(r"{\w+(?::\w+)?}", "[^ ]+", path)
        assert any(re.fullmatch(f"{method} {pattern}", p) for p in probed), f"{method} {path} was never probed"


def test_traces_and_runs_belong_to_their_key(world: dict[str, Any]) -> None:
    client: TestClient = world["client"]
    mine = client.post("/ask", json=BODIES["/ask"][0], headers=auth("acme-staff")).json()["trace_id"]
    assert client.get(f"/traces/{mine}", headers=auth("acme-staff")).status_code == 200
    assert client.get(f"/traces/{mine}", headers=auth("acme-public")).status_code == 404  # same tenant, other key
    assert client.get(f"/traces/{mine}", headers=auth("admin")).status_code == 200
    assert mine not in {t["trace_id"] for t in client.get("/traces", headers=auth("acme-public")).json()}
    assert client.get("/traces").json() == []  # a caller without a key owns nothing


def test_a_trace_is_rechecked_against_current_metadata(tmp_path: Path) -> None:
    """A trace made while a document was public disappears once that document turns staff-only."""
    store = build_store(tmp_path)
    labels = write_labels(tmp_path / "labels.jsonl")
    with make_client(store, service_settings(labels)) as client:
        r = client.post("/ask", json=BODIES["/ask"][0], headers=auth("acme-public"))
        trace = r.json()
        assert {c.rpartition(":")[0] for c in trace["context"]} == {"acme:d00"}
        assert client.get(f"/traces/{trace['trace_id']}", headers=auth("acme-public")).status_code == 200
        docs = tmp_path / "docs"
        (docs / "d00.md").write_text(note("acme", "public").replace("audience: public", "audience: staff"), "utf-8")
        with Store(store) as db:
            ingest_folder(db, docs, ChunkingConfig())
        assert client.get(f"/traces/{trace['trace_id']}", headers=auth("acme-public")).status_code == 404
        listed = client.get("/traces", headers=auth("acme-public")).json()
        assert trace["trace_id"] not in {t["trace_id"] for t in listed}
