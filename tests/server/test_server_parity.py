"""``POST /search`` and ``POST /ask`` answer with what ``search --json`` and ``ask --json`` print."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from evidencedesk.cli import app
from evidencedesk.config import load_settings
from tests.support.server import AUDITOR_KEY, PUBLIC_KEY, headers, make_client

runner = CliRunner()
VOLATILE = ("trace_id", "timings")  # a fresh id and wall times differ on every run
CONFIG: list[str] = []  # --config FILE: the shared settings both front ends read


@pytest.fixture(scope="module")
def client(kestrel_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The service and the command line read one config file. It turns per-tenant statistics on
    explicitly: the service would turn them on by itself (its keys name tenants), the CLI would not."""
    config = tmp_path_factory.mktemp("parity") / "evidencedesk.yaml"
    config.write_text("retrieval:\n  tenant_statistics: true\n", encoding="utf-8")
    CONFIG[:] = ["--config", str(config)]
    with make_client(kestrel_store, settings=load_settings(config)) as c:
        yield c


def cli_json(*args: str) -> Any:
    result = runner.invoke(app, [*args, *CONFIG])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def stable(out: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in out.items() if k not in VOLATILE}


@pytest.mark.parametrize(
    ("query", "method", "cli_scope", "api_scope"),
    [
        ("How many days do I have to return an item?", "bm25", [], None),
        ("RD2-24 recall fork", "tfidf", [], None),
        ("torque for the stem bolts", "lsa", [], None),
        ("ফেরত", "bm25", ["--lang", "bn"], {"langs": ["bn"], "statuses": ["current"], "audiences": ["public"]}),
        ("return window days", "bm25", ["--status", "current", "--status", "superseded", "--valid-at", "any"],
         {"statuses": ["current", "superseded"], "audiences": ["public"], "check_validity": False}),
    ],
)  # fmt: skip
def test_search_matches_the_cli(
    client: TestClient, kestrel_store: Path, query: str, method: str, cli_scope: list[str], api_scope: Any
) -> None:
    expected = cli_json("search", query, "--store", str(kestrel_store), "--method", method, "--k", "7", "--json",
                        *cli_scope)  # fmt: skip
    # The auditor key sees everything, so the request's scope alone decides, as the CLI's options do.
    r = client.post("/search", json={"query": query, "method": method, "k": 7, "scope": api_scope},
                    headers=headers(AUDITOR_KEY) if api_scope else {})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json() == expected
    assert expected, "the comparison should hold some results"


def test_hybrid_search_matches_the_cli(client: TestClient, kestrel_store: Path) -> None:
    query = "Can I get my money back for a bike I rode 60 km?"
    expected = cli_json("search", query, "--store", str(kestrel_store), "--method", "hybrid", "--legs", "bm25,tfidf",
                        "--k", "6", "--json")  # fmt: skip
    r = client.post("/search", json={"query": query, "method": "hybrid", "legs": ["bm25", "tfidf"], "k": 6})
    assert r.json() == expected
    assert all(len(row["parts"]) >= 1 for row in expected) and any(len(row["parts"]) == 2 for row in expected)


@pytest.mark.parametrize(
    "question",
    ["How many days do I have to return an item?", "What is the phone number of the recall hotline?",
     "Do you sell spaceships?"],
)  # fmt: skip
def test_ask_matches_the_cli(client: TestClient, kestrel_store: Path, question: str) -> None:
    expected = cli_json("ask", question, "--store", str(kestrel_store), "--method", "bm25", "--json")
    r = client.post("/ask", json={"question": question, "method": "bm25"}, headers=headers(PUBLIC_KEY))
    assert r.status_code == 200, r.text
    got = r.json()
    # The CLI, run by whoever owns the store, says which documents outside the scope matched a question it
    # abstained on; the service never does (a caller may not learn of documents it cannot see).
    assert "outside_scope" not in got and ("outside_scope" in expected) == expected["abstained"]
    expected.pop("outside_scope", None)
    assert stable(got) == stable(expected)
    assert got["trace_id"] != expected["trace_id"] and set(got["timings"]) == set(expected["timings"])
    # Both traces were stored, and the service's one reads back as it was returned.
    assert client.get(f"/traces/{got['trace_id']}", headers=headers(PUBLIC_KEY)).json() == got
