"""The service's endpoints: health, OpenAPI, keys and 401s, metrics, documents, lab and evaluation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from evidencedesk.constants import METHODS
from evidencedesk.evaluation.labels import load_labels
from evidencedesk.server.models import Method
from evidencedesk.server.settings import bundled_labels
from evidencedesk.store import Store
from tests.support.server import ADMIN_KEY, AUDITOR_KEY, BENGALI_KEY, KEYS, PUBLIC_KEY, STAFF_KEY, headers

DATA_ROUTES = [
    ("GET", "/documents", None),
    ("GET", "/documents/kestrel:kc-returns-v3", None),
    ("GET", "/chunks/kestrel:kc-returns-v3:c1", None),
    ("GET", "/traces", None),
    ("GET", "/metrics", None),
    ("GET", "/lab/questions", None),
    ("POST", "/search", {"query": "returns"}),
    ("POST", "/ask", {"question": "How long is the return window?", "method": "bm25"}),
    ("POST", "/eval", {"k": 3}),
    ("POST", "/lab/search", {"query": "returns"}),
    ("POST", "/ingest", {"path": "docs"}),
]


def test_health_and_openapi(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "build_id": 1}
    schema = client.get("/openapi.json").json()
    for path in ("/search", "/ask", "/ingest", "/documents", "/chunks/{chunk_id}", "/traces/{trace_id}", "/eval",
                 "/metrics", "/healthz", "/lab/search"):  # fmt: skip
        assert path in schema["paths"], path
    components = schema["components"]["schemas"]
    assert {"SearchRequest", "AskRequest", "SearchHit", "AskResult", "ScopeRequest"} <= set(components)
    assert {"APIKeyHeader", "HTTPBearer"} <= set(schema["components"]["securitySchemes"])
    ingest_body = schema["paths"]["/ingest"]["post"]["requestBody"]["content"]
    assert {"application/json", "multipart/form-data"} <= set(ingest_body)
    assert set(Method.__args__) == set(METHODS)  # type: ignore[attr-defined]


def test_anonymous_refused_when_configured(kestrel_store: Path, client_for: Callable[..., TestClient]) -> None:
    c = client_for(kestrel_store, {**KEYS, "allow_anonymous": False})
    assert c.get("/healthz").status_code == 200  # liveness needs no key and tells nothing
    for method, path, body in DATA_ROUTES:
        r = c.request(method, path, json=body)
        assert r.status_code == 401, (path, r.status_code)
        assert r.headers["www-authenticate"] == "Bearer"
        wrong = c.request(method, path, json=body, headers=headers("not-a-key-at-all-0000"))
        assert wrong.status_code == 401
        assert wrong.json()["detail"] == "unknown API key: use a key from the service's keys file"
    assert c.get("/documents", headers={"Authorization": f"Bearer {PUBLIC_KEY}"}).status_code == 200
    assert c.get("/documents", headers=headers(PUBLIC_KEY)).status_code == 200
    # The lab page itself is static and public; its data calls need the key.
    assert c.get("/").status_code == 200 and "evidencedesk" in c.get("/").text


def test_a_wrong_key_is_refused_even_with_anonymous_allowed(client: TestClient) -> None:
    assert client.get("/documents", headers=headers("wrong-key-000000000000")).status_code == 401
    assert client.get("/documents", headers={"Authorization": "Bearer wrong-key-000000000000"}).status_code == 401


def test_documents_and_chunks(client: TestClient, kestrel_store: Path) -> None:
    docs = client.get("/documents").json()
    with Store(kestrel_store) as db:
        counts = db.chunk_counts()
    assert {d["id"]: d["n_chunks"] for d in docs} == {d["id"]: counts[d["id"]] for d in docs}
    doc = client.get("/documents/kestrel:kc-returns-v3").json()
    assert doc["metadata"]["status"] == "current" and "30 days" in doc["text"]
    chunks = client.get("/documents/kestrel:kc-returns-v3/chunks").json()
    assert [c["id"] for c in chunks] == [f"kestrel:kc-returns-v3:c{i}" for i in range(len(chunks))]
    one = client.get("/chunks/kestrel:kc-returns-v3:c1").json()
    assert one == chunks[1]
    # The Bengali key sees only Bengali documents.
    bengali = client.get("/documents", headers=headers(BENGALI_KEY)).json()
    assert bengali and {d["metadata"]["lang"] for d in bengali} == {"bn"}
    assert client.get("/chunks/kestrel:kc-returns-v3:c1", headers=headers(BENGALI_KEY)).status_code == 404


def test_bad_requests_name_the_problem(client: TestClient) -> None:
    r = client.post("/search", json={"query": "x", "method": "nope"})
    assert r.status_code == 422 and "method" in r.text
    r = client.post("/search", json={"query": "x", "k": 5000})
    assert r.status_code == 400 and "k: at most" in r.json()["detail"]
    r = client.post("/search", json={"query": "x", "scope": {"audiences": []}})
    assert r.status_code == 400 and "empty" in r.json()["detail"]
    r = client.post("/search", json={"query": "x", "scope": {"colour": ["red"]}})
    assert r.status_code == 422
    r = client.post("/search", json={"query": "x", "method": "bm25", "legs": ["bm25"]})
    assert r.status_code == 400 and "legs" in r.json()["detail"]
    r = client.post("/ask", json={"question": "x", "generator": "openai"})
    assert r.status_code == 400 and "not enabled" in r.json()["detail"]
    r = client.post("/ask", json={"question": "   "})
    assert r.status_code == 400
    r = client.post("/search", json={"query": "x" * 3000})
    assert r.status_code == 413
    r = client.post(
        "/search", content=b'{"query": "' + b"x" * 1_100_000 + b'"}', headers={"content-type": "application/json"}
    )
    assert r.status_code == 413 and "larger than" in r.json()["detail"]


def test_metrics_count_queries_abstentions_and_stale_contexts(
    kestrel_store: Path, client_for: Callable[..., TestClient]
) -> None:
    c = client_for(kestrel_store)
    ops = headers(ADMIN_KEY)  # the counts span every tenant: admin keys only
    assert c.get("/metrics", headers=headers(PUBLIC_KEY)).status_code == 403
    empty = c.get("/metrics", headers=ops).json()
    assert empty["queries"]["total"] == 0 and empty["stale_context_rate"] is None
    c.post("/search", json={"query": "warranty frame years", "method": "bm25"})
    c.post("/search", json={"query": "zzzzqqq", "method": "bm25"})  # matches nothing
    c.post("/ask", json={"question": "How many days do I have to return an item?", "method": "bm25"})
    c.post("/ask", json={"question": "Do you sell spaceships to Mars?", "method": "bm25"})
    m = c.get("/metrics", headers=ops).json()
    assert m["queries"] == {"total": 4, "search": 2, "ask": 2}
    assert m["zero_hit_rate"] == 0.25
    assert m["abstention_rate"] == 0.5 and m["citation_validity"] == 1.0
    assert m["stale_context_rate"] == 0.0
    assert {"retrieval", "context", "generation", "search"} <= set(m["latency_ms"])
    assert m["latency_ms"]["retrieval"]["n"] == 2 and m["latency_ms"]["retrieval"]["p95"] >= 0
    assert m["requests"]["/search"]["count"] == 2 and m["requests"]["/search"]["errors"] == 0
    # An auditor looking at history does put superseded text in a context: the monitor shows it.
    history = {"statuses": ["superseded"], "check_validity": False}
    r = c.post("/ask", json={"question": "How many days to return?", "method": "bm25", "scope": history},
               headers=headers(AUDITOR_KEY))  # fmt: skip
    assert {x.rpartition(":")[0] for x in r.json()["context"]} == {"kestrel:kc-returns-v2"}
    assert c.get("/metrics", headers=ops).json()["stale_context_rate"] == 1 / 3
    text = c.get("/metrics", headers={"Accept": "text/plain", **ops})
    assert text.headers["content-type"].startswith("text/plain")
    assert "evidencedesk_stale_context_ratio 0.333" in text.text
    assert 'evidencedesk_queries_total{kind="ask"} 3.0' in text.text
    assert 'evidencedesk_stage_latency_ms{stage="retrieval",quantile="0.95"}' in text.text
    assert c.get("/metrics?format=prometheus", headers=ops).text.startswith("# HELP")


def test_lab_questions_search_and_rechunking(client: TestClient, kestrel_store: Path) -> None:
    questions = client.get("/lab/questions").json()
    labels = {x.id: x for x in load_labels(bundled_labels())}
    assert len(questions) == len(labels)
    assert all(set(q) == {"id", "question", "tags", "answerable"} for q in questions)  # no gold, no answer
    label = labels["q16"]
    out = client.post("/lab/search", json={"question_id": "q16", "k": 5}).json()
    with Store(kestrel_store) as db:
        chunks = {c.id: c for c in db.chunks()}
    assert [r["grade"] for r in out["results"]] == [label.grade_of(chunks[r["chunk_id"]]) for r in out["results"]]
    assert 2 in [r["grade"] for r in out["results"]]
    assert out["context"]["text"].startswith("<<<CONTEXT") and out["prompt"].startswith("SYSTEM:")
    kept, dropped = out["context"]["context"], [d["chunk_id"] for d in out["context"]["dropped"]]
    assert sorted(kept + dropped) == sorted(r["chunk_id"] for r in out["results"])  # every passage is accounted for
    assert all(f"[{cid}]" in out["context"]["text"] for cid in kept)
    rechunk = {"question_id": "q16", "k": 5, "chunker": {"name": "fixed", "size": 30}}
    assert client.post("/lab/search", json=rechunk).status_code == 403  # re-chunking needs a key
    small = client.post("/lab/search", json=rechunk, headers=headers(PUBLIC_KEY))
    assert small.json()["n_chunks"] > out["n_chunks"] and small.json()["chunking"]["size"] == 30
    typed = client.post("/lab/search", json={"query": label.question}).json()
    assert typed["label"]["id"] == "q16"  # a typed labelled question is recognised
    hybrid = client.post("/lab/search", json={"query": "torque stem", "method": "hybrid", "legs": ["bm25", "tfidf"]})
    assert hybrid.json()["legs"] == ["bm25", "tfidf"]
    assert {p["source"] for r in hybrid.json()["results"] for p in r["parts"]} == {"bm25", "tfidf"}
    asked = client.post("/lab/ask", json={"question_id": "q16"}).json()
    assert asked["grades"] and asked["citations"] and all("shared_words" in r for r in asked["retrieved"])
    assert client.post("/lab/search", json={"question_id": "q999"}).status_code == 404
    tiny = client.post("/lab/search", json={"query": "x", "chunker": {"name": "fixed", "size": 2, "unit": "chars"}},
                       headers=headers(PUBLIC_KEY))  # fmt: skip
    assert tiny.status_code == 400 and "at least 50 chars" in tiny.json()["detail"]


def test_eval_returns_and_stores_the_run(client: TestClient) -> None:
    body = {"method": "bm25", "k": 5, "methods": ["tfidf"], "size_series": True}
    r = client.post("/eval", json=body, headers=headers(STAFF_KEY))
    assert r.status_code == 200, r.text
    run = r.json()
    assert run["n_questions"] == len(load_labels(bundled_labels()))
    assert [s["method"] for s in run["strategies"]] == ["bm25", "tfidf"] and len(run["size_series"]) == 4
    assert client.get(f"/eval/runs/{run['run_id']}", headers=headers(STAFF_KEY)).json()["overall"] == run["overall"]
    report = client.get(f"/eval/runs/{run['run_id']}/report", headers=headers(STAFF_KEY))
    assert report.headers["content-type"].startswith("text/html")
    assert "size-curves" in report.text and "recall-curves" in report.text
    assert "default-src 'none'" in report.headers["content-security-policy"]
    assert client.post("/eval", json={"labels": "../labels.jsonl"}).status_code == 403  # no ingest root configured
