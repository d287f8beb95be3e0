"""The command line over a PostgreSQL store: ``--store postgresql://...`` for ingest, docs, search, ask and eval.

Each test gets a database of its own (created here, dropped afterwards), since a URL selects a
database and the command line uses the store's default schema in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app
from tests.support.pg_database import fresh_database

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "kestrel" / "docs"
LABELS = ROOT / "examples" / "kestrel" / "labels.jsonl"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


@pytest.fixture
def pg_db_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the test server (its URL), dropped when the test ends."""
    with fresh_database(pg_url, "evd_cli") as url:
        yield url


def test_ingest_docs_search_ask_eval_on_postgres(
    pg_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text("retrieval:\n  legs:\n    - method: bm25\n", encoding="utf-8")
    store = ("--store", pg_db_url)
    code, out, err = run("ingest", str(DOCS), *store, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_documents"] == 18 and report["failed"] == []

    code, out, err = run("docs", *store, "--json")
    assert code == 0, err
    docs = json.loads(out)
    assert len(docs) == 18 and sum(d["n_chunks"] for d in docs) == report["n_chunks"]
    code, out, _ = run("chunks", "kestrel:kc-returns-v3", *store, "--json")
    assert code == 0 and json.loads(out)[0]["id"] == "kestrel:kc-returns-v3:c0"

    code, out, err = run("search", "stem bolt torque", *store, "--json", "--k", "3")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 3 and rows[0]["parts"][0]["source"] == "bm25"
    assert all(r["metadata"]["status"] == "current" for r in rows)

    code, out, err = run("ask", "How many days do I have to return an item?", *store, "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert not answer["abstained"] and {c.rpartition(":")[0] for c in answer["citations"]} == {"kestrel:kc-returns-v3"}
    code, out, _ = run("trace", answer["trace_id"], *store, "--json")
    assert code == 0 and json.loads(out)["answer"] == answer["answer"]

    code, out, err = run("eval", str(LABELS), *store, "--k", "3", "--no-answers", "--json")
    assert code == 0, err
    run_out = json.loads(out)
    assert run_out["method"] == "bm25" and run_out["run_id"] == 1 and run_out["n_questions"] == 42
    code, _, err = run("compare", "1", "1", *store)
    assert code == 0, err


def test_an_unreachable_server_is_named_without_its_password(pg_url: str) -> None:
    parts = urlsplit(pg_url)
    url = parts._replace(netloc=f"nobody:hunter2@{parts.hostname}:1").geturl()
    code, _, err = run("search", "x", "--store", url)
    assert code == 1 and "cannot open store" in err and "hunter2" not in err and "nobody:***@" in err
