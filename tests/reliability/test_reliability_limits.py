"""The limits that protect the service: each refused with a clear 4xx that names the limit, nothing stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from tests.support.reliability import COUNTS, snapshot, versioned_doc, write_versioned

KEY = "limits-key-0123456789"
LIMITS = {
    "max_upload_bytes": 4000,
    "max_upload_files": 2,
    "max_query_chars": 50,
    "max_k": 5,
    "max_candidates": 10,
    "max_body_bytes": 3000,
}


def make_client(store: Path, **extra: Any) -> TestClient:
    service = parse_service_settings({"keys": [{"name": "writer", "key": KEY, "ingest": True}], **LIMITS, **extra})
    return TestClient(create_app(ServiceState(store, Settings(), service)), headers={"X-API-Key": KEY})


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_versioned(tmp_path / "docs", 1, 4)
    with Store(tmp_path / "store") as s:
        ingest_folder(s, tmp_path / "docs", ChunkingConfig(name="structure", size=60))
    return tmp_path / "store"


@pytest.fixture
def client(store: Path) -> Iterator[TestClient]:
    with make_client(store) as c:
        yield c


def refused(response: Any, status: int, *words: str) -> None:
    COUNTS["limits: refusals checked"] += 1
    assert response.status_code == status, response.text
    detail = str(response.json()["detail"])
    assert all(w in detail for w in words), detail


def test_query_length(client: TestClient) -> None:
    assert client.post("/search", json={"query": "refunds " + "x" * 42}).status_code == 200  # 50 characters
    refused(client.post("/search", json={"query": "refunds " + "x" * 43}), 413, "query", "50")
    refused(client.post("/ask", json={"question": "q" * 51}), 413, "question", "50")


def test_k(client: TestClient) -> None:
    assert len(client.post("/search", json={"query": "refunds", "k": 5}).json()) == 5
    refused(client.post("/search", json={"query": "refunds", "k": 6}), 400, "k", "5")
    refused(client.post("/ask", json={"question": "refunds?", "k": 6}), 400, "k", "5")


def test_candidate_depth(client: TestClient) -> None:
    assert client.post("/ask", json={"question": "What covers refunds?", "candidates": 10}).status_code == 200
    refused(client.post("/ask", json={"question": "What covers refunds?", "candidates": 11}), 400, "candidates", "10")


def test_json_body_size(client: TestClient) -> None:
    refused(client.post("/search", json={"query": "refunds", "legs": ["bm25"] * 500}), 413, "larger than", "3000")


def test_upload_size_and_count(client: TestClient, store: Path) -> None:
    before = snapshot(store)
    big = ("big.md", (versioned_doc(90, 1, parts=12)).encode(), "text/markdown")
    assert len(big[1]) > LIMITS["max_upload_bytes"]
    refused(client.post("/ingest", files=[("files", big)]), 413, "big.md", "4000")
    small = [("files", (f"s{n}.md", versioned_doc(80 + n, 1, parts=1).encode(), "text/markdown")) for n in range(3)]
    refused(client.post("/ingest", files=small), 400, "2")  # three files, two allowed
    assert snapshot(store) == before  # nothing of a refused upload was stored
    assert client.post("/ingest", files=small[:2]).status_code == 200
    assert len(snapshot(store)["documents"]) == len(before["documents"]) + 2


def test_request_time(store: Path) -> None:
    with make_client(store, max_request_seconds=1e-6) as c:
        refused(c.post("/search", json={"query": "refunds"}), 408, "longer than")
        refused(c.get("/documents"), 408, "longer than")
        upload = [("files", ("late.md", versioned_doc(70, 1, parts=1).encode(), "text/markdown"))]
        assert c.post("/ingest", files=upload).status_code == 200  # ingest is never cut off half way
    with make_client(store) as c:
        assert c.post("/search", json={"query": "refunds"}).status_code == 200
