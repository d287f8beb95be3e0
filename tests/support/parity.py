"""One question set through the three front ends: the Python API (``Desk``), the command line
(``--json``, the real Typer app in-process) and the HTTP service (FastAPI TestClient).

``collect`` returns, per question, what each front end answered, reduced to the fields that must
agree: the answer, the citations, the context ids and the retrieved ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from evidencedesk.cli import app
from evidencedesk.config import Settings
from evidencedesk.desk import Desk
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import ScopeSpec, ServiceSettings
from evidencedesk.server.state import ServiceState

ROOT = Path(__file__).resolve().parents[2]
KESTREL_DOCS = ROOT / "examples" / "kestrel" / "docs"
KESTREL_LABELS = ROOT / "examples" / "kestrel" / "labels.jsonl"
# tenant_statistics is set, not left to each front end's default (the service turns it on when a
# scope names tenants, as SERVICE's does): all three front ends then search the same index
BM25_YAML = "retrieval:\n  k: 4\n  tenant_statistics: false\n  legs:\n    - method: bm25\n"
# the example store holds two tenants (kestrel, and default for its files without front matter): a
# caller without a key is allowed both, so it sees what the Python API and the CLI see
SERVICE = ServiceSettings(allow_anonymous=True, anonymous_scope=ScopeSpec(tenants=["kestrel", "default"]))
runner = CliRunner()


def ten_questions() -> list[str]:
    lines = KESTREL_LABELS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines[:10]]


def answer_part(out: dict[str, Any]) -> dict[str, Any]:
    return {
        "answer": out["answer"],
        "abstained": out["abstained"],
        "citations": out["citations"],
        "context": out["context"],
        "retrieved": [r["chunk_id"] for r in out["retrieved"]],
        "searcher": out["searcher"],
    }


def search_part(rows: list[dict[str, Any]]) -> list[tuple[str, float, list[str]]]:
    return [(r["chunk_id"], round(r["score"], 9), r["shared_words"]) for r in rows]


def cli(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def collect(store: str, config: Path, settings: Settings) -> dict[str, list[Any]]:
    """Ask and search every question through each front end over ``store`` (a folder or URL)."""
    questions = ten_questions()
    got: dict[str, list[Any]] = {k: [] for k in ("api", "cli", "http", "api_s", "cli_s", "http_s")}
    with Desk(store, settings) as desk:
        # every tenant of the store is the anonymous caller's, or the service would see less
        assert set(desk.store.tenants()) == set(SERVICE.anonymous_scope.tenants or ())
        for q in questions:
            got["api"].append(answer_part(desk.ask(q).to_dict()))
            got["api_s"].append(search_part([hit.to_dict() for hit in desk.search_rows(q)]))
    for q in questions:
        got["cli"].append(answer_part(cli("ask", q, "--store", store, "--config", str(config), "--json")))
        got["cli_s"].append(search_part(cli("search", q, "--store", store, "--config", str(config), "--json")))
    with TestClient(create_app(ServiceState(store, settings, SERVICE))) as client:
        for q in questions:
            r = client.post("/ask", json={"question": q})
            assert r.status_code == 200, r.text
            got["http"].append(answer_part(r.json()))
            r = client.post("/search", json={"query": q})
            assert r.status_code == 200, r.text
            got["http_s"].append(search_part(r.json()))
    return got
