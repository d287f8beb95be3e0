"""`evidencedesk search` through the real Typer app over a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.cli import app
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store

runner = CliRunner()

DOCS = {
    "returns.md": "---\nid: returns\ntitle: Returns\n---\n# Returns\n\n## Window\n\n"
    "Return items within 30 days of delivery for a refund to the original payment method.\n",
    "returns-old.md": "---\nid: returns-old\ntitle: Old returns\nstatus: superseded\n---\n# Returns\n\n"
    "Return items within 60 days of delivery for store credit.\n",
    "goodwill.md": "---\nid: goodwill\ntitle: Goodwill\naudience: staff\n---\n# Goodwill\n\n"
    "A store manager may approve a goodwill refund up to 45 days after delivery.\n",
    "hours.md": "---\nid: hours\ntitle: Hours\n---\n# Hours\n\nThe shop opens at nine.\n",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with Store(root / "store") as db:
        ingest_folder(db, docs, ChunkingConfig())
    return root / "store"


def search(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["search", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_results_within_the_default_scope(store: Path) -> None:
    code, out, _ = search("refund within days of delivery", "--store", str(store), "--method", "bm25", "--json",
                          "--k", "5")  # fmt: skip
    assert code == 0
    rows = json.loads(out)
    assert [r["doc_id"] for r in rows] == ["returns"]  # the superseded and the staff-only text are not ranked
    row = rows[0]
    for key in ("rank", "chunk_id", "doc_id", "score", "text", "metadata", "parts", "shared_words", "location"):
        assert key in row
    assert row["rank"] == 1 and row["score"] > 0 and row["parts"][0]["source"] == "bm25"
    # the query's words whose terms the chunk holds; "within" and "of" are English stopwords, not terms
    assert row["shared_words"] == ["refund", "days", "delivery"]
    code, out, _ = search("refunds", "--store", str(store), "--method", "bm25", "--json")
    assert code == 0
    assert json.loads(out)[0]["shared_words"] == ["refunds"]  # stemmed: "refunds" matches the chunk's "refund"


def test_scope_options_widen_and_narrow(store: Path) -> None:
    base = ("refund within days of delivery", "--store", str(store), "--method", "bm25", "--json")
    code, out, _ = search(*base, "--audience", "public", "--audience", "staff", "--status", "current",
                          "--status", "superseded")  # fmt: skip
    assert code == 0
    assert {r["doc_id"] for r in json.loads(out)} == {"returns", "returns-old", "goodwill"}
    code, out, _ = search(*base, "--lang", "bn")
    assert code == 0 and json.loads(out) == []


@pytest.mark.parametrize("method", ["tfidf", "lsa"])
def test_other_lexical_methods(store: Path, method: str) -> None:
    code, out, _ = search("shop opens", "--store", str(store), "--method", method, "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows[0]["doc_id"] == "hours" and rows[0]["parts"][0]["source"] == method


def test_hybrid_results_show_each_legs_rank(store: Path) -> None:
    hybrid = ("--store", str(store), "--method", "hybrid", "--legs", "bm25,lsa")
    code, out, _ = search("refund delivery", *hybrid, "--json")
    rows = json.loads(out)
    assert {p["source"] for p in rows[0]["parts"]} == {"bm25", "lsa"}
    code, out, _ = search("refund delivery", *hybrid)
    assert code == 0 and "returns:c" in out
    ranks = {p["source"]: p["rank"] for p in rows[0]["parts"]}
    assert f"bm25 #{ranks['bm25']} · lsa #{ranks['lsa']}" in out  # each leg's rank of the first result


def test_plain_output_and_no_match(store: Path) -> None:
    code, out, _ = search("opens nine", "--store", str(store), "--method", "bm25")
    assert code == 0 and "hours:c" in out and "opens" in out and "lines" in out
    code, out, _ = search("zeppelin", "--store", str(store), "--method", "bm25")
    assert code == 0 and "no chunk" in out


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("x", "--method", "bm42"), 2),
        (("x", "--k", "0"), 2),
        (("x", "--method", "bm25", "--legs", "bm25,lsa"), 2),
        (("x", "--method", "hybrid", "--legs", "bm25"), 2),
        (("x", "--method", "hybrid", "--legs", "bm25,nope"), 2),
        (("x", "--valid-at", "yesterday"), 2),
    ],
)
def test_usage_errors(store: Path, args: tuple[str, ...], code: int) -> None:
    got, _, err = search(*args, "--store", str(store))
    assert got == code and "error" in err


def test_missing_store_is_an_error(tmp_path: Path) -> None:
    code, _, err = search("x", "--store", str(tmp_path / "none"))
    assert code == 1 and "no store" in err
    assert not (tmp_path / "none").exists()


def test_dense_and_default_hybrid_cache_embeddings_in_the_store(store: Path) -> None:
    code, out, _ = search("how long do I have to send something back", "--store", str(store), "--method", "dense",
                          "--json")  # fmt: skip
    assert code == 0
    rows = json.loads(out)
    assert rows and {r["doc_id"] for r in rows} <= {"returns", "hours"}  # never the superseded or staff text
    assert (store / "embeddings.sqlite").exists()
    code, out, _ = search("refund delivery", "--store", str(store), "--method", "hybrid", "--json")
    assert code == 0
    assert {p["source"] for r in json.loads(out) for p in r["parts"]} == {"bm25", "dense"}
