"""On PostgreSQL, the Python API, ``evidencedesk ask/search --json`` and ``POST /ask``/``/search``
agree on the same ten example questions, and every trace names the in-database searcher. Two
service processes' worth of state over one database agree, and each sees the other's ingest on
its next request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidencedesk.config import load_settings
from evidencedesk.desk import Desk
from evidencedesk.server.app import create_app
from evidencedesk.server.state import ServiceState
from tests.support.parity import BM25_YAML, KESTREL_DOCS, SERVICE, collect
from tests.support.pg_database import fresh_database


@pytest.fixture
def pg_db_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the test server (its URL), dropped when the test ends."""
    with fresh_database(pg_url, "evd_par") as url:
        yield url


def test_three_front_ends_agree_on_postgres(pg_db_url: str, tmp_path: Path) -> None:
    config = tmp_path / "evidencedesk.yaml"
    config.write_text(BM25_YAML, encoding="utf-8")
    settings = load_settings(config)
    with Desk(pg_db_url, settings) as desk:
        desk.ingest(KESTREL_DOCS)
    got = collect(pg_db_url, config, settings)
    assert got["api"] == got["cli"] == got["http"]
    assert got["api_s"] == got["cli_s"] == got["http_s"]
    assert any(not a["abstained"] and a["citations"] for a in got["api"])
    assert {a["searcher"] for a in got["http"]} == {"pg-bm25"}


def test_two_services_agree_and_see_each_others_ingest(pg_db_url: str, tmp_path: Path) -> None:
    config = tmp_path / "evidencedesk.yaml"
    config.write_text(BM25_YAML, encoding="utf-8")
    settings = load_settings(config)
    with Desk(pg_db_url, settings) as desk:
        desk.ingest(KESTREL_DOCS)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "tyres.md").write_text(
        "---\nid: kc-tyres\nstatus: current\naudience: public\n---\n# Tyres\n\n"
        "Tubeless tyres are set to 45 psi at the workshop.\n",
        encoding="utf-8",
    )
    one = TestClient(create_app(ServiceState(pg_db_url, settings, SERVICE)))
    two = TestClient(create_app(ServiceState(pg_db_url, settings, SERVICE)))
    with one, two:
        query = {"query": "tubeless tyres psi workshop", "k": 3}
        before = one.post("/search", json=query).json()
        assert before == two.post("/search", json=query).json()
        assert "kc-tyres" not in {r["doc_id"] for r in before}
        with Desk(pg_db_url, settings) as writer:  # a third process ingests (keeping the other documents)
            writer.ingest(extra, remove_missing=False)
        after_one = one.post("/search", json=query).json()
        after_two = two.post("/search", json=query).json()
        assert after_one == after_two and after_one[0]["doc_id"] == "kc-tyres"
        assert one.get("/healthz").json()["build_id"] == two.get("/healthz").json()["build_id"]
