"""BEIR: the loader (plain and gzip), the store round trip, the runner and `evidencedesk beir` end to end."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from evidencedesk.chunking import chunk_document
from evidencedesk.cli import app
from evidencedesk.evaluation.beir import (
    BEIR_CHUNKING,
    beir_document,
    doc_run,
    load_beir,
    read_qrels,
    run_beir,
    score_run,
    store_chunks,
    write_trec_run,
)
from evidencedesk.evaluation.metrics import mean, ndcg
from evidencedesk.index.embedders import default_embedder
from evidencedesk.retrieval.scope import Scope


class CountingEmbedder:
    """The real default embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.texts_embedded = 0

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        self.texts_embedded += len(texts)
        return self.inner.embed(texts, batch_size=batch_size, progress=progress)


CORPUS = [
    {"_id": "d1", "title": "Aspirin and heart attacks", "text": "Daily aspirin lowers the risk of a heart attack."},
    {"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplements do not prevent bone fractures in adults."},
    {"_id": "d3", "title": "Coffee", "text": "Coffee drinking is linked with lower liver disease mortality."},
    {"_id": "d4", "title": "Sleep", "text": "Short sleep raises blood pressure in middle-aged people."},
    {"_id": "d5", "title": "", "text": "Statins reduce cholesterol and cardiovascular events."},
    {"_id": "d6", "title": "Exercise", "text": "Regular running improves memory in older adults."},
]
QUERIES = [
    {"_id": "q1", "text": "aspirin prevents heart attack"},
    {"_id": "q2", "text": "vitamin D prevents fractures"},
    {"_id": "q3", "text": "statins lower cardiovascular events"},
    {"_id": "q4", "text": "running and memory"},
    {"_id": "q9", "text": "a training query"},
]
TEST_QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d5", 1), ("q4", "d6", 1), ("q4", "d3", 1)]


def write_beir(folder: Path, gz: bool) -> Path:
    folder.mkdir(parents=True)
    lines = "".join(json.dumps(r) + "\n" for r in CORPUS)
    if gz:
        with gzip.open(folder / "corpus.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write(lines)
    else:
        (folder / "corpus.jsonl").write_text(lines, encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    (folder / "qrels").mkdir()
    rows = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in TEST_QRELS)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows, encoding="utf-8")
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq9\td3\t1\n", encoding="utf-8")
    return folder


@pytest.fixture(params=[False, True], ids=["plain", "gzip"])
def dataset_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny", gz=request.param)


def test_loader_reads_corpus_queries_and_split_qrels(dataset_dir: Path) -> None:
    ds = load_beir(dataset_dir, "test")
    assert ds.name == "tiny" and ds.split == "test"
    assert [d.id for d in ds.documents] == ["d1", "d2", "d3", "d4", "d5", "d6"]
    d1 = ds.documents[0]
    assert d1.title == "Aspirin and heart attacks"
    assert d1.text == "Aspirin and heart attacks\n\nDaily aspirin lowers the risk of a heart attack."
    assert Scope().allows(d1.metadata, d1.id)  # current, public, en: the default scope sees the corpus
    assert ds.documents[4].text == CORPUS[4]["text"]  # no title: the text alone
    assert set(ds.queries) == {"q1", "q2", "q3", "q4"}  # only the queries judged in this split
    assert ds.qrels["q4"] == {"d6": 1, "d3": 1}
    assert load_beir(dataset_dir, "train").qrels == {"q9": {"d3": 1}}
    body_only = load_beir(dataset_dir, "test", title_in_text=False)
    assert body_only.documents[0].text == CORPUS[0]["text"]


def test_each_row_is_one_chunk_with_a_stable_id(dataset_dir: Path) -> None:
    long_row = {"_id": "long", "title": "T", "text": " ".join(["word"] * 5000) + "\n\nMore.\n\nEven more."}
    doc = beir_document(long_row)
    chunks = chunk_document(doc, BEIR_CHUNKING)
    assert [c.id for c in chunks] == ["long:c0"] and chunks[0].text == doc.text


def test_loader_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        load_beir(tmp_path / "missing")
    folder = write_beir(tmp_path / "x", gz=False)
    with pytest.raises(ValueError, match=r"qrels/dev.tsv"):
        load_beir(folder, "dev")
    (folder / "qrels" / "bad.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not an integer"):
        read_qrels(folder, "bad")
    (folder / "qrels" / "orphan.tsv").write_text("q77\td1\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not in queries.jsonl"):
        load_beir(folder, "orphan")
    (folder / "corpus.jsonl").unlink()
    with pytest.raises(ValueError, match="no corpus.jsonl"):
        load_beir(folder)


def test_store_round_trip_skips_unchanged_and_embeds_once(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", gz=True)
    store = tmp_path / "store"
    counting = CountingEmbedder()
    params = {"embedder": counting, "cache_path": store / "embeddings.sqlite"}
    first = run_beir(folder, "dense", store, params=params)
    assert counting.texts_embedded == len(CORPUS) + 4  # six documents, then the four test queries
    second = run_beir(folder, "dense", store, params=params)
    assert counting.texts_embedded == len(CORPUS) + 8  # only the queries again: no document re-embedded
    assert replace(first, seconds=0.0) == replace(second, seconds=0.0)
    assert first.scores["ndcg@10"] > 0.6  # a real model finds these paraphrases

    from evidencedesk.store import Store

    with Store(store) as db:
        reports = [b.report for b in db.builds()]
    assert sorted(reports[-1]["unchanged"]) == [r["_id"] for r in CORPUS]  # the second sync changed nothing


def test_doc_run_scores_and_trec_file(tmp_path: Path) -> None:
    from evidencedesk.retrieval.factory import make_searcher

    ds = load_beir(write_beir(tmp_path / "tiny", gz=False))
    chunks = store_chunks(ds, tmp_path / "store")
    searcher = make_searcher("bm25", chunks, stem=True, stopwords="english")
    run = doc_run(searcher, ds.queries, chunks, k=3)
    assert set(run) == set(ds.queries) and all(len(docs) <= 3 for docs in run.values())
    assert next(iter(run["q1"])) == "d1"
    scores = score_run(ds.qrels, run)
    assert scores["ndcg@10"] == pytest.approx(mean(ndcg(ds.qrels, run, 10)))
    path = write_trec_run(run, tmp_path / "run.trec", "my tag")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == sum(len(d) for d in run.values())
    for line in lines:
        qid, q0, doc, rank, score, tag = line.split(" ")
        assert q0 == "Q0" and tag == "mytag" and doc in run[qid]
        assert float(score) == pytest.approx(run[qid][doc], abs=1e-6)
    q1 = [line.split(" ") for line in lines if line.startswith("q1 ")]
    assert [r[2] for r in q1] == list(run["q1"])  # the run's order, rank 1 first
    assert [int(r[3]) for r in q1] == list(range(1, len(q1) + 1))
    assert [float(r[4]) for r in q1] == sorted((float(r[4]) for r in q1), reverse=True)


def test_cli_end_to_end_json_and_run_file(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", gz=True)
    run_file = tmp_path / "out" / "bm25.trec"
    args = ["beir", str(folder), "--method", "bm25", "--store", str(tmp_path / "s"), "--run-out", str(run_file)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert set(summary) == {"method", "split", "n_queries", "n_docs", "seconds", "ndcg@10", "recall@100", "mrr@10"}
    assert (summary["method"], summary["split"], summary["n_queries"], summary["n_docs"]) == ("bm25", "test", 4, 6)
    # q4 judges d3 (coffee) relevant, which shares no term with "running and memory": BM25 finds 7 of 8 halves.
    assert summary["recall@100"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert 0.0 < summary["ndcg@10"] <= 1.0
    lines = run_file.read_text(encoding="utf-8").splitlines()
    assert lines and all(len(line.split(" ")) == 6 and line.split(" ")[1] == "Q0" for line in lines)
    assert {line.split(" ")[0] for line in lines} <= {"q1", "q2", "q3", "q4"}
    assert all(line.endswith(" evidencedesk-bm25") for line in lines)

    table = CliRunner().invoke(app, ["beir", str(folder), "--method", "bm25", "--store", str(tmp_path / "s")])
    assert table.exit_code == 0 and "ndcg@10" in table.stdout


def test_cli_usage_errors(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", gz=False)
    runner = CliRunner()
    assert runner.invoke(app, ["beir", str(folder), "--method", "nope"]).exit_code == 2
    assert runner.invoke(app, ["beir", str(tmp_path / "missing")]).exit_code == 2
    assert runner.invoke(app, ["beir", str(folder), "--method", "dense", "--k1", "1.2"]).exit_code == 2
    bad_split = runner.invoke(app, ["beir", str(folder), "--split", "dev", "--store", str(tmp_path / "s"), "--json"])
    assert bad_split.exit_code == 1 and "dev" in bad_split.stderr


def test_scores_equal_trec_eval_and_keep_the_run_order() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}, "q3": {"d9": 1}}
    run = {
        "q1": {"d4": 0.9, "d1": 0.5, "d2": 0.4, "d3": 0.3},
        "q2": {"d5": 2.0, "d2": 1.0, "d6": 0.5},
        "q3": {"d1": 1.0},
    }
    ours = score_run(qrels, run)
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "recip_rank"}).evaluate(run)
    assert ours["ndcg@10"] == pytest.approx(sum(r["ndcg_cut_10"] for r in res.values()) / 3)
    assert ours["recall@100"] == pytest.approx(sum(r["recall_100"] for r in res.values()) / 3)
    assert ours["mrr@10"] == pytest.approx(sum(r["recip_rank"] for r in res.values()) / 3)  # every hit is in the top 10
    # A tie is ordered as trec_eval orders it (document id descending: d2 first), whatever the run's order.
    tied = score_run({"q": {"d1": 1}}, {"q": {"d1": 0.5, "d2": 0.5}})
    assert tied["mrr@10"] == 0.5


def test_the_run_file_scores_what_the_command_reports(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    folder = write_beir(tmp_path / "tiny", gz=False)
    run_file = tmp_path / "run.trec"
    args = ["beir", str(folder), "--method", "bm25", "--store", str(tmp_path / "s"), "--run-out", str(run_file)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    run: dict[str, dict[str, float]] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split(" ")
        run.setdefault(qid, {})[doc] = float(score)
    qrels = read_qrels(folder, "test")
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    judged = [res.get(q, {"ndcg_cut_10": 0.0, "recall_100": 0.0}) for q in qrels]
    assert summary["ndcg@10"] == round(sum(r["ndcg_cut_10"] for r in judged) / len(judged), 4)
    assert summary["recall@100"] == round(sum(r["recall_100"] for r in judged) / len(judged), 4)
