"""The gate: compare() on run dicts, and the eval / diagnose / compare commands on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.chunking import ChunkingConfig
from evidencedesk.cli import app
from evidencedesk.evaluation.gate import EXIT_REGRESSED, compare
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from tests.support.paths import KESTREL_DOCS, KESTREL_LABELS


def run_with(means: dict[str, dict[str, float]], k: int = 5) -> dict:
    return {
        "k": k,
        "method": "bm25",
        "slices": {
            s: {m: {"n": 12, "mean": v, "se": 0.0, "small": False} for m, v in ms.items()} for s, ms in means.items()
        },
    }


def test_compare_flags_a_drop_beyond_the_threshold_on_any_slice() -> None:
    a = run_with({"all": {"recall@5": 0.80, "mrr@5": 0.60}, "bangla": {"recall@5": 0.90}})
    same = compare(a, a)
    assert not same.regressed and len(same.deltas) == 3 and same.notes == ()
    b = run_with({"all": {"recall@5": 0.79, "mrr@5": 0.70}, "bangla": {"recall@5": 0.80}})
    result = compare(a, b, threshold=0.02)
    assert result.regressed
    assert [(d.slice, d.metric) for d in result.regressions] == [("bangla", "recall@5")]
    assert result.regressions[0].delta == pytest.approx(-0.10)
    assert not compare(a, b, threshold=0.2).regressed
    exactly = run_with({"all": {"recall@5": 0.78, "mrr@5": 0.6}, "bangla": {"recall@5": 0.9}})
    assert not compare(a, exactly, threshold=0.02).regressed  # a drop of exactly the threshold passes
    beyond = run_with({"all": {"recall@5": 0.77, "mrr@5": 0.6}, "bangla": {"recall@5": 0.9}})
    assert compare(a, beyond, threshold=0.02).regressions[0].metric == "recall@5"
    d = result.to_dict()
    assert d["regressed"] is True and d["regressions"][0]["slice"] == "bangla"


def test_compare_notes_what_cannot_be_compared() -> None:
    a = run_with({"all": {"recall@5": 0.8}, "stale": {"recall@5": 0.5}})
    b = run_with({"all": {"recall@3": 0.1}}, k=3)
    result = compare(a, b)
    assert not result.regressed and result.deltas == ()
    assert any("k differs" in n for n in result.notes)
    assert any("slice 'stale' only in run A" in n for n in result.notes)
    with pytest.raises(ValueError, match="slices"):
        compare({"k": 5}, a)
    with pytest.raises(ValueError, match="threshold"):
        compare(a, a, threshold=-0.1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "store"
    with Store(path) as db:
        ingest_folder(db, KESTREL_DOCS, ChunkingConfig())
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def test_eval_diagnose_and_the_gate_on_a_worse_chunking(store: Path, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    code, out = invoke(
        "eval", str(KESTREL_LABELS), "--store", str(store), "--method", "bm25", "--k", "5", "--methods", "tfidf",
        "--html", str(html), "--no-answers", "--json",
    )  # fmt: skip
    assert code == 0, out
    good = json.loads(out)
    assert [r["method"] for r in good["strategies"]] == ["bm25", "tfidf"]
    page = html.read_text(encoding="utf-8")
    assert all(f'id="{c}"' in page for c in ("label-counts", "recall-curves", "size-curves"))
    assert good["run_id"] == 1 and good["build_id"] == 1
    assert good["slices"]["all"]["recall@5"]["mean"] > 0.5

    code, out = invoke("compare", "1", "1", "--store", str(store))
    assert code == 0, out
    assert "no regression" in out

    with Store(store) as db:  # re-ingest with windows far too small: the same documents, a worse build
        ingest_folder(db, KESTREL_DOCS, ChunkingConfig("fixed", size=60, unit="chars"))
    code, out = invoke(
        "eval", str(KESTREL_LABELS), "--store", str(store), "--method", "bm25", "--k", "5", "--no-answers", "--json"
    )
    assert code == 0, out
    worse = json.loads(out)
    assert worse["run_id"] == 2 and worse["build_id"] == 2
    counts = {(x["stage"], x["label"]): x["count"] for x in worse["label_counts"]}
    assert counts[("ingestion", "missed_evidence")] > 10

    code, out = invoke("compare", "1", "2", "--store", str(store))
    assert code == EXIT_REGRESSED == 3, out
    assert "REGRESSED" in out
    code, out = invoke("compare", "1", "2", "--store", str(store), "--json")
    assert code == 3
    verdict = json.loads(out)
    assert verdict["regressed"] is True
    assert any(d["slice"] == "all" and d["metric"] == "recall@5" for d in verdict["regressions"])

    saved = tmp_path / "run1.json"
    with Store(store) as db:
        saved.write_text(json.dumps(db.load_eval_run(1)), encoding="utf-8")
    code, _ = invoke("compare", str(saved), "1", "--store", str(store))  # a run file works as well as an id
    assert code == 0

    code, out = invoke("diagnose", str(KESTREL_LABELS), "--store", str(store), "--k", "5", "--json")
    assert code == 0
    diag = json.loads(out)
    assert diag["n_failed"] == len(diag["failing"]) > 0
    assert {f["first"]["stage"] for f in diag["failing"]} >= {"ingestion"}
    code, out = invoke("diagnose", str(KESTREL_LABELS), "--store", str(store), "--k", "5")
    assert code == 0 and "ingestion" in out and "missed_evidence" in out


def test_commands_fail_clearly(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", str(bad), "--store", str(store)])
    assert result.exit_code == 1 and "bad.jsonl:1" in result.stderr
    result = CliRunner().invoke(app, ["eval", str(KESTREL_LABELS), "--store", str(store), "--method", "magic"])
    assert result.exit_code == 2
    result = CliRunner().invoke(app, ["eval", str(KESTREL_LABELS), "--store", str(tmp_path / "none")])
    assert result.exit_code == 1 and "no store" in result.stderr
    result = CliRunner().invoke(app, ["compare", "1", "99", "--store", str(store)])
    assert result.exit_code == 1 and "no evaluation run 99" in result.stderr
