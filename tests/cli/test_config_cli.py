"""Every command reads evidencedesk.yaml (or --config PATH), and flags on the command line win over it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app

runner = CliRunner()

DOCS = {
    "returns.md": "---\nid: returns\ntitle: Returns\n---\n# Returns\n\n## Window\n\n"
    "Return items within 30 days of delivery for a refund to the original payment method.\n\n"
    "## Condition\n\nItems must be unused and in the original box with every accessory.\n",
    "returns-old.md": "---\nid: returns-old\ntitle: Old returns\nstatus: superseded\n---\n# Returns\n\n"
    "Return items within 60 days of delivery for store credit.\n",
    "hours.md": "---\nid: hours\ntitle: Hours\n---\n# Hours\n\nThe shop opens at nine and closes at six. "
    "Deliveries arrive in the morning; returns are accepted at the counter during opening hours.\n",
    "delivery.md": "---\nid: delivery\ntitle: Delivery\n---\n# Delivery\n\nDelivery takes three working days. "
    "A refund for a late delivery is paid within five days.\n",
    "warranty.md": "---\nid: warranty\ntitle: Warranty\n---\n# Warranty\n\nFrames carry a five year warranty; "
    "a refund replaces a repair only when no part is available within 30 days.\n",
    "payments.md": "---\nid: payments\ntitle: Payments\n---\n# Payments\n\nA refund reaches the card within ten days "
    "of the returned item arriving at the warehouse.\n",
    "gifts.md": "---\nid: gifts\ntitle: Gifts\n---\n# Gifts\n\nGifts returned within 30 days of delivery get a gift "
    "card instead of a refund.\n",
}
BM25_ONLY = "retrieval:\n  k: 2\n  legs:\n    - method: bm25\n"


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, " ".join(result.stderr.split())  # errors: rich wraps long lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def store(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "store"
    code, _, err = run("ingest", str(corpus), "--store", str(path), "--json")
    assert code == 0, err
    return path


def test_help_constants_match_their_sources() -> None:
    from evidencedesk.cli import evaluate
    from evidencedesk.evaluation.slices import SMALL_N
    from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES

    cli_app = importlib.import_module("evidencedesk.cli.app")  # the module (evidencedesk.cli.app is the Typer app)
    assert cli_app.DEFAULT_MAX_BYTES == DEFAULT_MAX_BYTES and evaluate.SMALL_N == SMALL_N


def test_help_loads_no_numerical_library() -> None:
    code = (
        "import sys, evidencedesk.cli\n"
        "heavy = {'numpy', 'scipy', 'pypdf', 'sklearn', 'onnxruntime'} & {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_search_takes_k_and_method_from_the_config_file(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text(BM25_ONLY, encoding="utf-8")
    code, out, err = run("search", "refund within days of delivery", "--store", str(store), "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 2 and all([p["source"] for p in r["parts"]] == ["bm25"] for r in rows)
    code, out, _ = run("search", "refund within days of delivery", "--store", str(store), "--json", "--k", "4")
    assert code == 0 and len(json.loads(out)) == 4  # the flag wins over the file


def test_an_explicit_config_path(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "elsewhere" / "mine.yaml"
    cfg.parent.mkdir()
    cfg.write_text(BM25_ONLY + f"store: {store}\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # no evidencedesk.yaml here: without --config the defaults apply
    code, out, err = run("search", "refund within days of delivery", "--config", str(cfg), "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 2 and rows[0]["parts"][0]["source"] == "bm25"
    code, out, _ = run("search", "refund within days of delivery", "--config", str(cfg), "--json", "--k", "3")
    assert code == 0 and len(json.loads(out)) == 3
    code, out, _ = run("docs", "--config", str(cfg), "--json")  # the store comes from the file too
    assert code == 0 and {d["id"] for d in json.loads(out)} == set(p.removesuffix(".md") for p in DOCS)
    code, _, err = run("docs", "--json")
    assert code == 1 and "no store at .evidencedesk" in err
    assert not (work / ".evidencedesk").exists()


def test_scope_defaults_come_from_the_config_and_flags_override(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    query = ("refund within days of delivery", "--store", str(store), "--json", "--k", "10")
    code, out, _ = run("search", *query, "--method", "bm25")
    assert code == 0 and "returns-old" not in {r["doc_id"] for r in json.loads(out)}
    (tmp_path / "evidencedesk.yaml").write_text(
        BM25_ONLY + "scope:\n  statuses: [current, superseded]\n", encoding="utf-8"
    )
    code, out, err = run("search", *query)
    assert code == 0, err
    assert "returns-old" in {r["doc_id"] for r in json.loads(out)}
    code, out, _ = run("search", *query, "--status", "current")
    assert code == 0 and "returns-old" not in {r["doc_id"] for r in json.loads(out)}


def test_ingest_takes_the_chunker_from_the_config(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text("chunker:\n  name: fixed\n  size: 40\n  unit: chars\n")
    code, out, err = run("ingest", str(corpus), "--json")  # the store: the config's default, .evidencedesk
    assert code == 0, err
    report = json.loads(out)
    assert report["chunking"]["name"] == "fixed" and report["chunking"]["size"] == 40
    assert (tmp_path / ".evidencedesk").is_dir()
    code, out, _ = run("ingest", str(corpus), "--json", "--size", "60")
    assert code == 0
    again = json.loads(out)
    assert again["chunking"]["name"] == "fixed" and again["chunking"]["size"] == 60
    assert again["n_chunks"] < report["n_chunks"]


@pytest.mark.parametrize(
    "command",
    [
        ["search", "refund"],
        ["ingest", "."],
        ["ask", "How long is the warranty?"],
        ["docs"],
        ["eval", "labels.jsonl"],
        ["compare", "1", "2"],
    ],
)
def test_a_bad_config_file_exits_2_naming_the_key(
    command: list[str], store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text("retrieval:\n  kk: 3\n  fusion:\n    k: -1\n", encoding="utf-8")
    code, _, err = run(*command, "--store", str(store))
    assert code == 2
    assert "retrieval.kk: unknown key" in err and "retrieval.fusion.k" in err


def test_a_bad_flag_value_names_the_flag_and_the_key(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("ask", "q", "--store", str(store), "--order", "random")
    assert code == 2 and "--order (context.order)" in err
    code, _, err = run("ask", "q", "--store", str(store), "--generator", "gpt-99")
    assert code == 2 and "--generator (generator.name)" in err
    code, _, err = run("ingest", ".", "--store", str(store), "--chunker", "magic")
    assert code == 2 and "--chunker (chunker.name)" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("chunker:\n  size: many\n", encoding="utf-8")
    code, _, err = run("ingest", ".", "--store", str(store), "--config", str(bad))
    assert code == 2 and "bad.yaml: chunker.size" in err
    code, _, err = run("search", "q", "--config", str(tmp_path / "missing.yaml"))
    assert code == 2 and "config file not found" in err


def test_ask_takes_the_generator_context_and_k_from_the_config(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text(
        BM25_ONLY + "context:\n  budget_tokens: 64\ngenerator:\n  name: extractive\n", encoding="utf-8"
    )
    code, out, err = run("ask", "How many days to return items for a refund?", "--store", str(store), "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["method"] == "bm25" and len(answer["context"]) <= 2 and answer["context_tokens"] <= 64
    code, out, _ = run("ask", "How many days to return items?", "--store", str(store), "--json", "--k", "4",
                       "--budget", "400")  # fmt: skip
    assert code == 0
    wider = json.loads(out)
    assert len(wider["retrieved"]) > 2 or len(wider["context"]) > len(answer["context"])


def test_eval_and_diagnose_take_method_and_k_from_the_config(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evidencedesk.yaml").write_text(BM25_ONLY, encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"id": "a", "question": "How many days to return items?", "tags": ["exact_term"], "answerable": true, '
        '"gold": [{"evidence": "within 30 days of delivery", "grade": 2}]}\n',
        encoding="utf-8",
    )
    code, out, err = run("eval", str(labels), "--store", str(store), "--no-answers", "--no-save", "--json")
    assert code == 0, err
    assert json.loads(out)["method"] == "bm25" and json.loads(out)["k"] == 2
    code, out, _ = run("diagnose", str(labels), "--store", str(store), "--k", "3", "--json")
    assert code == 0 and json.loads(out)["method"] == "bm25" and json.loads(out)["k"] == 3


def test_store_urls(tmp_path: Path) -> None:
    code, _, err = run("docs", "--store", "postgresql://me:s3cret@127.0.0.1:1/nothing")
    assert code == 1 and "postgresql://me:***@127.0.0.1:1/nothing" in err and "s3cret" not in err
    code, _, err = run("search", "x", "--store", "mysql://me@host/db")
    assert code == 2 and "unsupported URL" in err
