"""Per-tenant statistics: a tenant's ids and scores do not depend on whether other tenants' text exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.cli.app import app as cli
from evidencedesk.config import parse_settings
from evidencedesk.desk import Desk
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from tests.support.security import AUDIENCES, KEYS, QUERY, TENANTS, auth, doc_id, note, service_settings, write_labels
from tests.support.server import make_client

ACME = {"tenants": ["acme"], "audiences": list(AUDIENCES), "statuses": None}
QUERIES = [QUERY, "receipt form within 30 days", "frames five years zqacmestaffmark"]


def _store(root: Path, tenants: tuple[str, ...]) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for t in tenants:
        for a in AUDIENCES:
            # the other tenants' text makes some words far more common than acme alone has them
            common = "Receipt receipt policy policy policy warranty frames. "
            extra = "" if t == "acme" else common * (3 + TENANTS.index(t))
            (docs / f"{doc_id(t, a)}.md").write_text(note(t, a, extra), encoding="utf-8")
    with Store(root / "store") as db:
        ingest_folder(db, docs, ChunkingConfig())
    return root / "store"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        "alone": _store(tmp_path_factory.mktemp("acme-alone"), ("acme",)),
        "shared": _store(tmp_path_factory.mktemp("all-tenants"), TENANTS),
    }


def _ranked(store: Path, method: str, split: bool | None, query: str) -> list[tuple[str, float]]:
    settings = parse_settings({"retrieval": {"legs": [{"method": method}], "tenant_statistics": split}})
    with Desk(store, settings) as desk:
        return [(c.chunk.id, c.score) for c in desk.search(query, k=10, method=method, scope=ACME)]


@pytest.mark.parametrize("method", ["bm25", "tfidf", "lsa"])
def test_a_tenants_ids_and_scores_ignore_other_tenants(stores: dict[str, Path], method: str) -> None:
    for query in QUERIES:
        alone = _ranked(stores["alone"], method, True, query)
        assert alone, query
        assert _ranked(stores["shared"], method, True, query) == alone  # identical ids and scores


def test_control_with_shared_statistics_the_other_tenants_move_the_scores(stores: dict[str, Path]) -> None:
    for method in ("bm25", "tfidf"):
        alone = _ranked(stores["alone"], method, False, QUERY)
        shared = _ranked(stores["shared"], method, False, QUERY)
        assert [s for _, s in shared] != [s for _, s in alone]


def test_the_service_turns_it_on_when_keys_name_tenants(stores: dict[str, Path], tmp_path: Path) -> None:
    """Over HTTP, with keys naming tenants and nothing in the shared config, acme's key gets the same
    results from both stores; the command line gets them with ``retrieval.tenant_statistics: true``."""
    got: dict[str, Any] = {}
    for name, store in stores.items():
        settings = service_settings(write_labels(tmp_path / f"{name}.jsonl"))
        with make_client(store, settings) as c:
            r = c.post("/search", json={"query": QUERY, "method": "bm25", "k": 10}, headers=auth("acme-staff"))
            assert r.status_code == 200, r.text
            got[name] = [(h["chunk_id"], h["score"]) for h in r.json()]
    assert got["alone"] == got["shared"] == _ranked(stores["alone"], "bm25", True, QUERY)
    config = tmp_path / "evidencedesk.yaml"
    config.write_text("retrieval:\n  legs: [{method: bm25}]\n  tenant_statistics: true\n", encoding="utf-8")
    cli_out = {}
    for name, store in stores.items():
        args = ["search", QUERY, "--store", str(store), "--config", str(config), "--json", "--k", "10"]
        args += ["--tenant", "acme", "--audience", "public", "--audience", "staff"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        cli_out[name] = [(h["chunk_id"], h["score"]) for h in json.loads(result.stdout)]
    assert cli_out["alone"] == cli_out["shared"] == got["alone"]
    assert KEYS  # the keys the service used name tenants (tests.support.security.SCOPES)
