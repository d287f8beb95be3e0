"""A public key never receives staff, superseded, draft or expired text from any endpoint,
and a scope in the request never widens the key's scope."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store import Store
from tests.support.server import ADMIN_KEY, AUDITOR_KEY, PUBLIC_KEY, STAFF_KEY, headers

PUBLIC = headers(PUBLIC_KEY)
# Questions aimed at the hidden documents: staff goodwill rules, the superseded returns policy, the draft.
PROBES = [
    "How much can a store manager refund as a goodwill gesture?",
    "staff discount code KSTAFF-20 for parts",
    "waive the restocking fee once per customer per year",
    "loan bike while the recalled fork is replaced",
    "Can I return a bike within 60 days?",
    "refund as store credit within 10 business days",
    "Kestrel Riders Club loyalty points",
]
# Request scopes that try to widen the key's scope.
# the example documents a public key may not see (ids are scoped by tenant: kestrel)
HIDDEN_DOCS = {"kestrel:kc-staff-goodwill", "kestrel:kc-returns-v2", "kestrel:kc-loyalty-draft"}

WIDENING = [
    None,
    {"audiences": ["staff"]},
    {"audiences": ["public", "staff"], "statuses": ["current", "superseded", "draft"]},
    {"statuses": ["superseded"], "check_validity": False},
    {"doc_ids": ["kestrel:kc-staff-goodwill", "kestrel:kc-returns-v2", "kestrel:kc-loyalty-draft"]},
]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) >= 30]


@pytest.fixture(scope="module")
def hidden(kestrel_store: Path) -> tuple[set[str], list[str]]:
    """The ids of the chunks a public key may not see, and sentences found only in them."""
    with Store(kestrel_store) as db:
        chunks = db.chunks()
        docs = db.documents()
    public = Scope()
    shown = [c for c in chunks if public.allows_chunk(c)]
    not_shown: list[Chunk] = [c for c in chunks if not public.allows_chunk(c)]
    shown_text = "\n".join(c.text for c in shown)
    secrets = {s for c in not_shown for s in _sentences(c.text) if s not in shown_text}
    titles = {d.title for d in docs if not public.allows(d.metadata, d.id)} - {
        d.title for d in docs if public.allows(d.metadata, d.id)
    }
    assert {c.doc_id for c in not_shown} >= HIDDEN_DOCS
    assert len(secrets) > 20  # the check below has something to find
    return {c.id for c in not_shown}, sorted(secrets | titles)


def assert_clean(body: str, secrets: list[str], where: str) -> None:
    leaked = [s for s in secrets if s in body]
    assert not leaked, f"{where} leaked {len(leaked)} hidden passage(s), e.g. {leaked[0]!r}"


def test_the_check_can_fail(client: TestClient, hidden: tuple[set[str], list[str]]) -> None:
    """The staff key does see staff text through the same calls, so a clean public body means something."""
    _, secrets = hidden
    body = client.post("/search", json={"query": PROBES[0], "k": 10}, headers=headers(STAFF_KEY)).text
    assert any(s in body for s in secrets)
    body = client.post("/search", json={"query": PROBES[4], "k": 10}, headers=headers(AUDITOR_KEY)).text
    assert any(s in body for s in secrets)


@pytest.mark.parametrize("scope", WIDENING)
def test_search_and_ask_stay_public(client: TestClient, hidden: tuple[set[str], list[str]], scope: dict | None) -> None:
    hidden_ids, secrets = hidden
    for method in ("bm25", "tfidf"):
        for query in PROBES:
            r = client.post("/search", json={"query": query, "k": 20, "method": method, "scope": scope}, headers=PUBLIC)
            assert r.status_code == 200, r.text
            assert not {row["chunk_id"] for row in r.json()} & hidden_ids
            assert all(row["metadata"]["status"] == "current" for row in r.json())
            assert_clean(r.text, secrets, f"/search {method} {scope}")
    for query in PROBES[:4]:
        r = client.post("/ask", json={"question": query, "method": "bm25", "scope": scope}, headers=PUBLIC)
        assert r.status_code == 200, r.text
        out = r.json()
        assert not set(out["context"]) & hidden_ids and not set(out["citations"]) & hidden_ids
        assert_clean(r.text, secrets, f"/ask {scope}")


def test_lookups_of_hidden_records_are_404_like_missing_ones(
    client: TestClient, hidden: tuple[set[str], list[str]]
) -> None:
    hidden_ids, secrets = hidden
    listing = client.get("/documents", headers=PUBLIC)
    assert listing.status_code == 200 and listing.json()
    assert {d["id"] for d in listing.json()}.isdisjoint(HIDDEN_DOCS)
    assert_clean(listing.text, secrets, "/documents")
    for doc_id in sorted(HIDDEN_DOCS):
        for path in (f"/documents/{doc_id}", f"/documents/{doc_id}/chunks"):
            r = client.get(path, headers=PUBLIC)
            missing = client.get(path.replace(doc_id, "kc-no-such-doc"), headers=PUBLIC)
            assert r.status_code == missing.status_code == 404
            assert r.json()["detail"].replace(doc_id, "X") == missing.json()["detail"].replace("kc-no-such-doc", "X")
        assert client.get(f"/documents/{doc_id}", headers=headers(AUDITOR_KEY)).status_code == 200
    for chunk_id in sorted(hidden_ids):
        r = client.get(f"/chunks/{chunk_id}", headers=PUBLIC)
        assert r.status_code == 404 and r.json()["detail"] == f"no chunk {chunk_id!r}"
    assert client.get(f"/chunks/{min(hidden_ids)}", headers=headers(AUDITOR_KEY)).status_code == 200


def test_traces_made_by_a_wider_key_stay_hidden(client: TestClient, hidden: tuple[set[str], list[str]]) -> None:
    _, secrets = hidden
    staff = client.post("/ask", json={"question": PROBES[0], "method": "bm25"}, headers=headers(STAFF_KEY)).json()
    assert "kestrel:kc-staff-goodwill" in {c.rpartition(":")[0] for c in staff["context"]}  # it does hold staff text
    mine = client.post("/ask", json={"question": "How long is the warranty?", "method": "bm25"}, headers=PUBLIC).json()
    listed = client.get("/traces?limit=200", headers=PUBLIC)
    ids = {t["trace_id"] for t in listed.json()}
    assert mine["trace_id"] in ids and staff["trace_id"] not in ids
    assert_clean(listed.text, secrets, "/traces")
    assert client.get(f"/traces/{staff['trace_id']}", headers=PUBLIC).status_code == 404
    assert client.get(f"/traces/{mine['trace_id']}", headers=PUBLIC).status_code == 200
    assert client.get(f"/traces/{staff['trace_id']}", headers=headers(STAFF_KEY)).status_code == 200
    # A trace belongs to the key that made it: the staff key's scope covers the public one, yet it
    # does not see the public key's trace; an admin key sees both.
    assert client.get(f"/traces/{mine['trace_id']}", headers=headers(STAFF_KEY)).status_code == 404
    for trace in (mine, staff):
        assert client.get(f"/traces/{trace['trace_id']}", headers=headers(ADMIN_KEY)).status_code == 200


def test_eval_runs_metrics_and_lab_stay_public(client: TestClient, hidden: tuple[set[str], list[str]]) -> None:
    hidden_ids, secrets = hidden
    staff_run = client.post("/eval", json={"k": 5}, headers=headers(AUDITOR_KEY)).json()
    assert set(staff_run["questions"][0]["ranking"]) & hidden_ids or any(
        set(q["ranking"]) & hidden_ids for q in staff_run["questions"]
    )
    r = client.post("/eval", json={"k": 5, "scope": WIDENING[2]}, headers=PUBLIC)
    assert r.status_code == 200, r.text
    run = r.json()
    assert all(not set(q["ranking"]) & hidden_ids for q in run["questions"])
    assert_clean(r.text, secrets, "/eval")
    runs = client.get("/eval/runs", headers=PUBLIC).json()
    assert run["run_id"] in {x["id"] for x in runs} and staff_run["run_id"] not in {x["id"] for x in runs}
    assert client.get(f"/eval/runs/{staff_run['run_id']}", headers=PUBLIC).status_code == 404
    assert client.get(f"/eval/runs/{staff_run['run_id']}/report", headers=PUBLIC).status_code == 404
    report = client.get(f"/eval/runs/{run['run_id']}/report", headers=PUBLIC)
    assert report.status_code == 200 and "<svg" in report.text
    assert_clean(report.text, secrets, "/eval report")
    for path in ("/metrics", "/metrics?format=prometheus", "/lab/options", "/lab/questions"):
        r = client.get(path, headers=PUBLIC)
        assert r.status_code == (403 if path.startswith("/metrics") else 200)
        assert_clean(r.text, secrets, path)
    for query in PROBES:
        for chunker in (None, {"name": "fixed", "size": 40, "unit": "words"}):
            body = {"query": query, "k": 10, "chunker": chunker, "scope": WIDENING[2]}
            r = client.post("/lab/search", json=body, headers=PUBLIC)
            assert r.status_code == 200, r.text
            assert_clean(r.text, secrets, f"/lab/search {chunker}")
    r = client.post("/lab/ask", json={"query": PROBES[1], "chunker": {"name": "section", "size": 200}}, headers=PUBLIC)
    assert r.status_code == 200 and r.json()["chunking"]["name"] == "section"
    assert_clean(r.text, secrets, "/lab/ask")


def test_a_request_scope_only_narrows(client: TestClient) -> None:
    everything = client.post("/search", json={"query": "return policy refund days", "k": 50}, headers=PUBLIC).json()
    narrowed = client.post(
        "/search",
        json={
            "query": "return policy refund days",
            "k": 50,
            "scope": {
                "doc_ids": ["kestrel:kc-returns-v3", "kestrel:kc-staff-goodwill"],
                "audiences": ["public", "staff"],
            },
        },
        headers=PUBLIC,
    ).json()
    assert narrowed and {r["doc_id"] for r in narrowed} == {"kestrel:kc-returns-v3"}
    assert {r["chunk_id"] for r in narrowed} < {r["chunk_id"] for r in everything}
    # A field the key pins to other values leaves nothing at all, never the other values.
    r = client.post(
        "/search", json={"query": "goodwill refund", "k": 10, "scope": {"audiences": ["staff"]}}, headers=PUBLIC
    )
    assert r.status_code == 200 and r.json() == []
    # A key cannot move the validity date unless it may choose it.
    past = {"query": "return within 60 days", "k": 10, "scope": {"valid_at": "2025-06-01"}}
    refused = client.post("/search", json=past, headers=PUBLIC)
    assert refused.status_code == 403 and "valid_at" in refused.json()["detail"]
    history = client.post("/search", json={**past, "scope": {"valid_at": "2025-06-01", "statuses": ["superseded"]}},
                          headers=headers(AUDITOR_KEY))  # fmt: skip
    assert history.status_code == 200 and {r["doc_id"] for r in history.json()} == {"kestrel:kc-returns-v2"}
