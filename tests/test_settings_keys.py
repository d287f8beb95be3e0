"""Every leaf key of ``evidencedesk.yaml`` changes what the CLI, the Python API and the service do.

The test walks the settings model; each leaf key must have a probe below (a base configuration,
a change of that key, and the action that shows it) or the test fails, so a new key cannot be
added without showing that every front end reads it. A probe passes when, in each front end, the
observed outcome with the change differs from the outcome without it. The corpus is three example
documents; BM25 and TF-IDF keep it fast (the dense keys embed a dozen chunks).
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic import BaseModel
from typer.testing import CliRunner

from evidencedesk.cli import app
from evidencedesk.config import Settings, parse_settings
from evidencedesk.desk import Desk
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("returns-v3.md", "returns-v2.md", "shipping.md")
QUERY = "How many days do I have to return an item and get a refund?"
FRONTS = ("api", "cli", "http")
KEY = "k" * 24
REPLY_DELAY = 0.3  # seconds the fake endpoint takes, so that a shorter generator.timeout_s runs out
runner = CliRunner()
HARRIER = (
    "---\nid: hr-returns\nstatus: current\naudience: public\nlang: en\ntenant: harrier\n---\n"
    "# Returns at Harrier\n\nReturn an unused item within 60 days of delivery for a full refund. "
    "Refunds reach the original payment method within 10 days; delivery fees are not refunded.\n"
)


def leaf_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted leaf keys of a settings model; list items appear as ``name[]``."""
    out = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        ann = field.annotation
        inner = getattr(ann, "__args__", (None,))[0] if getattr(ann, "__origin__", None) is list else None
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += leaf_keys(ann, f"{key}.")
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            out += leaf_keys(inner, f"{key}[].")
        else:
            out.append(key)
    return out


BM25 = {"retrieval": {"k": 3, "legs": [{"method": "bm25"}]}}
HYBRID = {"retrieval": {"k": 3, "legs": [{"method": "bm25"}, {"method": "tfidf"}]}}
WIDE = {**BM25, "scope": {"statuses": None, "audiences": None}}
NORMALIZED = {"retrieval": {**HYBRID["retrieval"], "fusion": {"method": "normalized"}}}
DENSE = {"retrieval": {"k": 3, "legs": [{"method": "dense"}]}}
FIXED = {"chunker": {"name": "fixed", "size": 40, "overlap": 0, "unit": "words"}, **BM25}
# the gate is off so that the endpoint is asked whatever the answerability model thinks
OPENAI = {**BM25, "generator": {"name": "openai", "base_url": "@", "model": "m1", "answerability_gate": False}}
# BM25 over plain words: the (stemming) overlap reranker then lifts a chunk from below the top 3
PLAIN = {"retrieval": {"k": 3, "legs": [{"method": "bm25", "stem": False, "stopwords": None}]}}
RRF = {"retrieval": {**HYBRID["retrieval"], "fusion": {"method": "rrf"}}}
TWO_TENANTS = {**BM25, "store": "@tenants"}  # the three documents plus one of another tenant
READER = {**BM25, "generator": {"answerability": "reader"}}  # the reader's answer (generator.reader.*)


def deep(base: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(base))
    node = data
    *parents, last = dotted.split(".")
    for p in parents:
        node = node[p[:-2]][0] if p.endswith("[]") else node.setdefault(p, {})
    node[last] = value
    return data


CROSS = deep(BM25, "retrieval.rerank", {"method": "cross-encoder", "fuse_weight": 1.0})


# key -> (base settings, action, changed value); "store" changes the store folder itself
PROBES: dict[str, tuple[dict[str, Any], str, Any]] = {
    "store": (BM25, "search", "@other"),
    "chunker.name": (FIXED, "ingest", "paragraph"),
    "chunker.size": (FIXED, "ingest", 15),
    "chunker.overlap": (FIXED, "ingest", 10),
    "chunker.unit": (FIXED, "ingest", "chars"),
    "retrieval.legs[].method": (BM25, "search", "tfidf"),
    "retrieval.legs[].depth": (NORMALIZED, "search", 1),  # min-max over a shorter list
    "retrieval.legs[].k1": (BM25, "search", 0.3),
    "retrieval.legs[].b": (BM25, "search", 0.0),
    "retrieval.legs[].stem": (BM25, "search", False),
    "retrieval.legs[].stopwords": (BM25, "search", None),
    "retrieval.legs[].language": (BM25, "search", "german"),  # another stemmer than the documents' English
    "retrieval.legs[].rank": ({"retrieval": {"k": 3, "legs": [{"method": "lsa"}]}}, "search", 2),
    "retrieval.legs[].model": (DENSE, "search", "bge-small"),  # the other bundled model: other vectors, other scores
    "retrieval.legs[].contextual": (DENSE, "search", False),  # true by default
    "retrieval.fusion.method": (HYBRID, "search", "rrf"),
    "retrieval.fusion.k": (RRF, "search", 1),
    "retrieval.fusion.weights": (NORMALIZED, "search", [0.9, 0.1]),
    "retrieval.rerank.method": (BM25, "ask", "overlap"),
    "retrieval.rerank.model": (
        deep(BM25, "retrieval.rerank", {"method": "cross-encoder", "model": "/nonexistent/a"}),
        "ask",
        "/nonexistent/b",
    ),
    "retrieval.rerank.candidates": (deep(PLAIN, "retrieval.rerank", {"method": "overlap"}), "ask", 3),
    "retrieval.rerank.max_tokens": (CROSS, "ask", 8),  # the cross-encoder reads 8 tokens of each pair: new scores
    "retrieval.rerank.fuse_weight": (CROSS, "ask", 0.0),  # the first stage's scores alone, min-max scaled
    "retrieval.rerank.min_score": (CROSS, "ask", 30.0),  # above any logit: every candidate is dropped, ask abstains
    "retrieval.diversity.method": (BM25, "search", "mmr"),
    "retrieval.diversity.lambda": (deep(BM25, "retrieval.diversity", {"method": "mmr"}), "search", 0.95),
    "retrieval.collapse": (BM25, "search", "document"),  # one chunk per document instead of per page
    "retrieval.k": (BM25, "search", 1),
    "retrieval.tenant_statistics": (TWO_TENANTS, "search", True),  # each tenant's own BM25 statistics
    "context.budget_tokens": (BM25, "ask", 16),
    "context.floor": (BM25, "ask", 1000.0),
    "context.dedup_threshold": (deep(WIDE, "retrieval.k", 6), "ask", 0.05),
    "context.order": (deep(BM25, "retrieval.k", 5), "ask", "edges"),
    "generator.name": (BM25, "ask", "openai"),
    "generator.base_url": (OPENAI, "ask", "@@"),
    "generator.model": (OPENAI, "ask", "m2"),
    "generator.api_key_env": (OPENAI, "ask", "EVIDENCEDESK_TEST_OTHER_KEY"),
    "generator.max_tokens": (OPENAI, "ask", 17),
    # nothing reaches the context (floor), so the gate abstains without asking the endpoint
    "generator.answerability_gate": (deep(OPENAI, "context.floor", 1000.0), "ask", True),
    # the endpoint's reply holds a supported and an unsupported sentence: dropped, or the whole answer goes
    "generator.on_unsupported": (OPENAI, "ask", "abstain"),
    "generator.timeout_s": (OPENAI, "ask", 0.05),  # the endpoint takes REPLY_DELAY to answer
    "generator.answerability": (BM25, "ask", "cross-encoder"),  # the cross-encoder's answerability model decides
    "generator.reader.model": (deep(READER, "generator.reader", {"model": "/nonexistent/a"}), "ask", "/nonexistent/b"),
    "generator.reader.threshold": (READER, "ask", 50.0),  # above any score: no unit answers, ask abstains
    # every unit reaches a threshold this low: about 50 words of them, or the best unit alone
    "generator.reader.max_words": (deep(READER, "generator.reader", {"threshold": -30.0}), "ask", 1),
    "scope.statuses": (BM25, "search", ["superseded"]),
    "scope.audiences": (BM25, "search", ["staff"]),
    "scope.langs": (BM25, "search", ["de"]),
    "scope.tenants": (BM25, "search", ["someone-else"]),
}
# keys a front end does not read, and why (anything else must change all three)
NOT_IN: dict[str, dict[str, str]] = {
    key: {"http": "the service's scope comes from each API key (the service settings), never from this file"}
    for key in ("scope.statuses", "scope.audiences", "scope.langs", "scope.tenants")
}
GONE: set[str] = set()  # keys removed from the model stay listed here while old files may hold them
# no cross-encoder ships with the packages here: the base names a model that is not there, and the
# change shows the key is read because each front end's error names the other model
FAILING_BASE = {"retrieval.rerank.model", "generator.reader.model"}


def _reply(messages: list[dict[str, Any]]) -> str:
    """The first sentence of the first chunk shown, citing it, then a sentence no chunk supports."""
    shown = re.search(r"<<<CHUNK \[([^\]]+)\][^\n]*>>>\n(.+)", " ".join(str(m.get("content")) for m in messages))
    if shown is None:
        return "I don't know."
    first = re.split(r"(?<=[.!?])\s", shown.group(2).strip())[0].rstrip(".")
    return f"{first} [{shown.group(1)}]. Purple elephants repair every bicycle for free [{shown.group(1)}]."


class _Chat(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that records each request and answers with a fixed reply."""

    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(
            {
                "server": self.server.server_address[1],
                "model": body.get("model"),
                "max_tokens": body.get("max_tokens"),
                "auth": self.headers.get("Authorization"),
            }
        )
        reply = {"choices": [{"message": {"content": _reply(body.get("messages", []))}}]}
        time.sleep(REPLY_DELAY)
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    started = [ThreadingHTTPServer(("127.0.0.1", 0), _Chat) for _ in range(2)]
    for s in started:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield tuple(f"http://127.0.0.1:{s.server_address[1]}/v1" for s in started)  # type: ignore[misc]
    for s in started:
        s.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("keys")
    docs, other = base / "docs", base / "other"
    docs.mkdir()
    other.mkdir()
    for name in DOCS:
        shutil.copy(ROOT / "examples" / "kestrel" / "docs" / name, docs / name)
    shutil.copy(ROOT / "examples" / "kestrel" / "docs" / "shipping.md", other / "shipping.md")
    with Desk(base / "store", Settings()) as desk:
        desk.ingest(docs)
    with Desk(base / "other-store", Settings()) as desk:
        desk.ingest(other)
    tenants = base / "tenants"
    shutil.copytree(docs, tenants)
    (tenants / "harrier-returns.md").write_text(HARRIER, encoding="utf-8")
    with Desk(base / "tenants-store", Settings()) as desk:
        desk.ingest(tenants)
        assert set(desk.store.tenants()) == {"kestrel", "harrier"}
    return {
        "base": base,
        "docs": docs,
        "store": base / "store",
        "other": base / "other-store",
        "tenants": base / "tenants-store",
    }


def _resolve(data: dict[str, Any], corpus: dict[str, Path], servers: tuple[str, str]) -> dict[str, Any]:
    text = json.dumps(data).replace('"@@"', json.dumps(servers[1])).replace('"@"', json.dumps(servers[0]))
    text = text.replace('"@tenants"', json.dumps(str(corpus["tenants"])))
    out = json.loads(text.replace('"@other"', json.dumps(str(corpus["other"]))))
    out.setdefault("store", str(corpus["store"]))
    return out


def _outcome(kind: str, payload: Any) -> Any:
    if kind == "ingest":
        return sorted(payload["chunk_ids"])
    if kind == "search":
        return [(r["chunk_id"], round(r["score"], 6), [p["source"] for p in r["parts"]]) for r in payload]
    keep = ("answer", "abstained", "context", "citations")
    reranked = [(r["chunk_id"], round(r["score"], 6)) for r in payload["reranked"]]
    decided = payload.get("generation", {}).get("answerability_model")
    return {**{k: payload[k] for k in keep}, "reranked": reranked, "answerability_model": decided}


def observe(front: str, data: dict[str, Any], action: str, corpus: dict[str, Path], tmp: Path) -> Any:
    """What ``front`` does for ``action`` under the settings ``data``: an outcome, or its error."""
    settings = parse_settings(data)
    config = tmp / f"{front}-{abs(hash(json.dumps(data, sort_keys=True)))}.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    fresh = tmp / f"fresh-{front}-{config.stem}"
    seen_before = len(_Chat.seen)
    if front == "api":
        try:
            with Desk(fresh if action == "ingest" else None, settings) as desk:
                if action == "ingest":
                    desk.ingest(corpus["docs"])
                    payload: Any = {"chunk_ids": desk.store.chunk_ids()}
                elif action == "search":
                    payload = [hit.to_dict() for hit in desk.search_rows(QUERY)]
                else:
                    payload = desk.ask(QUERY, save=False).to_dict()
        except (ValueError, RuntimeError, OSError, ImportError) as exc:
            return ("error", str(exc)[:200])
    elif front == "cli":
        args = ["ingest", str(corpus["docs"]), "--store", str(fresh)] if action == "ingest" else [action, QUERY]
        result = runner.invoke(app, [*args, "--config", str(config), "--json"])
        if result.exit_code != 0:
            return ("error", result.exit_code, result.stderr[-200:])
        payload = json.loads(result.stdout)
        if action == "ingest":
            with Desk(fresh, settings) as desk:
                payload = {"chunk_ids": desk.store.chunk_ids()}
    else:
        service = parse_service_settings(
            {
                "ingest_root": str(corpus["base"]),
                "generators": ["extractive", "openai"],
                "keys": [{"name": "writer", "key": KEY, "ingest": True}],
            }
        )
        target = fresh if action == "ingest" else settings.store
        if action == "ingest":
            Desk(fresh, settings).close()
        with TestClient(create_app(ServiceState(target, settings, service)), raise_server_exceptions=False) as c:
            # the key's scope is the default one (current, public, any tenant), as the other front ends'
            key = {"X-API-Key": KEY}
            if action == "ingest":
                r = c.post("/ingest", json={"path": "docs"}, headers=key)
            elif action == "search":
                r = c.post("/search", json={"query": QUERY}, headers=key)
            else:
                r = c.post("/ask", json={"question": QUERY}, headers=key)
            if r.status_code != 200:
                return ("error", r.status_code, r.text[-200:])
            payload = r.json()
            if action == "ingest":
                payload = {"chunk_ids": c.app.state.service.store.chunk_ids()}
    return (_outcome(action, payload), _Chat.seen[seen_before:])


def test_every_leaf_key_has_a_probe() -> None:
    keys = set(leaf_keys(Settings))
    assert keys - set(PROBES) - GONE == set(), "a settings key without a probe: show that every front end reads it"
    assert set(PROBES) - keys == set(), "a probe for a key the model no longer has"


@pytest.mark.parametrize("key", sorted(PROBES))
def test_changing_the_key_changes_every_front_end(
    key: str,
    corpus: dict[str, Path],
    servers: tuple[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("EVIDENCEDESK_OPENAI_API_KEY", "first-key")
    monkeypatch.setenv("EVIDENCEDESK_TEST_OTHER_KEY", "second-key")
    monkeypatch.chdir(tmp_path)
    base, action, value = PROBES[key]
    changed = deep(base, key, value)
    before_data = _resolve(base, corpus, servers)
    after_data = _resolve(changed, corpus, servers)
    searched: dict[str, Any] = {}
    for front in FRONTS:
        if front in NOT_IN.get(key, {}):
            continue
        before = observe(front, before_data, action, corpus, tmp_path)
        after = observe(front, after_data, action, corpus, tmp_path)
        assert before != after, f"{key}: changing it to {value!r} changes nothing in the {front} front end"
        if key not in FAILING_BASE:
            assert before[0] != "error", f"{key}: the base configuration fails in the {front} front end: {before}"
        if action == "search":
            searched[front] = before
    # and the front ends read the base configuration alike: the same ranking and scores
    assert all(got == next(iter(searched.values())) for got in searched.values()), f"{key}: {searched}"
