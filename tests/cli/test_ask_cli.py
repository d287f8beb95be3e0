"""`evidencedesk ask` and `evidencedesk trace` on the Kestrel corpus, through the real Typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app

KESTREL = Path(__file__).resolve().parents[2] / "examples" / "kestrel" / "docs"
runner = CliRunner()
REQUIRED = {"answer", "abstained", "citations", "context", "findings", "trace_id", "timings"}
STAGES = {"rewrite", "retrieval", "rerank", "context", "generation", "validation"}


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def ask_json(store: Path, question: str, *extra: str) -> dict:
    code, out, err = run("ask", question, "--store", str(store), "--method", "bm25", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store")
    code, _, err = run("ingest", str(KESTREL), "--store", str(path), "--json")
    assert code == 0, err
    return path


def test_json_keys_and_the_stored_trace(store: Path) -> None:
    out = ask_json(store, "How many days do I have to return an item?")
    assert set(out) >= REQUIRED and set(out["timings"]) == STAGES
    assert out["abstained"] is False and "within 30 days of the delivery date" in out["answer"]
    assert out["citations"] and set(out["citations"]) <= set(out["context"])
    code, text, _ = run("trace", out["trace_id"], "--store", str(store), "--json")
    assert code == 0
    stored = json.loads(text)
    assert stored["trace_id"] == out["trace_id"] and stored["answer"] == out["answer"]
    assert stored["prompt"].startswith("SYSTEM:") and stored["context"] == out["context"]


def test_stale_conflict_cites_only_the_current_policy(store: Path) -> None:
    question = "How many days after delivery can items be sent back?"
    out = ask_json(store, question)
    assert {cid.rpartition(":")[0] for cid in out["citations"]} == {"kestrel:kc-returns-v3"}
    assert all(c["metadata"]["status"] == "current" for c in out["retrieved"])
    assert "60" not in out["answer"]
    # Without the status and date filter the superseded policy competes for the same question.
    history = ask_json(store, question, "--status", "current", "--status", "superseded", "--valid-at", "any")
    assert "kestrel:kc-returns-v2" in {c["doc_id"] for c in history["retrieved"]}


def test_unanswerable_question_abstains(store: Path) -> None:
    out = ask_json(store, "Do you sell electric scooters?")
    assert out["abstained"] is True and out["citations"] == [] and "scooters" in out["answer"]


def test_torque_table_row(store: Path) -> None:
    out = ask_json(store, "What torque do the crank arm bolts need on a large frame?")
    assert "| Crank arm bolts | 12 Nm | 14 Nm |" in out["answer"]
    assert any(cid.startswith("kestrel:kc-torque-chart:") for cid in out["citations"])
    cited = out["citations"][0]
    assert out["sources"][cited]["source"].endswith("torque.md")


def test_human_output_and_full_trace(store: Path) -> None:
    code, text, _ = run("ask", "What is the recall reference for the Ridgeline RD2-24 fork?", "--store", str(store),
                        "--method", "bm25", "--rerank", "overlap", "--candidates", "10")  # fmt: skip
    assert code == 0
    assert "KC-RC-2025-03" in text and "Citations" in text and "recall-rd2-24.md" in text
    for stage in STAGES:
        assert stage in text
    trace_id = text.strip().splitlines()[-1].split()[-1]
    code, full, _ = run("trace", trace_id, "--store", str(store))
    assert code == 0
    assert "<<<CONTEXT" in full and "reranked" in full and "validated answer" in full


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["ask", "q", "--rerank", "magic"], 2),
        (["ask", "q", "--method", "nope"], 2),
        (["ask", "q", "--generator", "gpt-99"], 2),
        (["ask", "q", "--k", "5", "--candidates", "2"], 2),
        (["ask", "q", "--order", "random", "--method", "bm25"], 2),
        (["trace", "no-such-trace"], 1),
    ],
)
def test_usage_and_missing_things(store: Path, args: list[str], code: int) -> None:
    got, _, err = run(*args, "--store", str(store))
    assert got == code and err.strip()


def test_missing_store_is_an_error(tmp_path: Path) -> None:
    code, _, err = run("ask", "anything", "--store", str(tmp_path / "none"), "--method", "bm25")
    assert code == 1 and "no store" in err
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_default_hybrid_method(store: Path) -> None:
    code, text, err = run("ask", "Do you sell electric scooters?", "--store", str(store), "--json")
    assert code == 0, err
    out = json.loads(text)
    assert out["method"] == "hybrid" and out["abstained"] is True
