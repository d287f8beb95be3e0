"""evaluate, EvalRun and the strategies comparison on the real Kestrel corpus."""

from __future__ import annotations

import json

import pytest

from evidencedesk.evaluation import metrics as m
from evidencedesk.evaluation.run import EvalRun
from evidencedesk.evaluation.runner import evaluate
from evidencedesk.evaluation.strategies import compare_strategies, recall_curve, strategy_row
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope


@pytest.fixture(scope="module")
def results(labels, chunks):
    return evaluate(make_searcher("bm25", chunks), labels, chunks, Scope(), 5)


def test_per_question_rows_agree_with_the_metric_functions(results, chunks) -> None:
    allowed = [c for c in chunks if Scope().allows_chunk(c)]
    for r in results:
        assert r.returned <= 5 and len(r.grades) == r.returned
        assert len(r.ranking) >= r.returned
        if not r.answerable:
            assert r.relevant == {} and set(r.metrics) == {"abstain"}
            continue
        qrels, run = {r.id: r.relevant}, {r.id: r.ranking}
        assert r.metrics["recall@5"] == pytest.approx(m.recall(qrels, run, 5).get(r.id, 0.0))
        assert r.metrics["ndcg@5"] == pytest.approx(m.ndcg(qrels, run, 5).get(r.id, 0.0))
        assert all(cid in {c.id for c in allowed} for cid in r.relevant)  # qrels stay inside the scope
        assert r.grades == [r.relevant.get(cid, 0) for cid in r.ranking[:5]]
        if r.rank is not None and r.rank <= 5:
            assert r.metrics["hit@5"] == 1.0 and r.metrics["answer_recall@5"] > 0


def test_eval_run_aggregates_and_round_trips(results, labels, chunks) -> None:
    unfiltered = evaluate(make_searcher("bm25", chunks), labels, chunks, Scope.everything(), 5)
    run = EvalRun.of("bm25", 5, Scope().to_dict(), results, build_id=7, chunking_hash="abc", unfiltered=unfiltered)
    d = json.loads(json.dumps(run.to_dict()))
    answerable = [r for r in results if r.answerable]
    assert d["n_answerable"] == len(answerable) and d["n_unanswerable"] == len(results) - len(answerable)
    assert d["overall"]["recall@5"]["n"] == len(answerable)
    assert d["overall"]["recall@5"]["mean"] == pytest.approx(
        sum(r.metrics["recall@5"] for r in answerable) / len(answerable)
    )
    assert d["overall"]["abstain"]["n"] == d["n_unanswerable"]
    assert {"all", "paraphrase", "bangla", "structured"} <= set(d["slices"])
    paraphrase = [r for r in answerable if "paraphrase" in r.tags]
    assert d["slices"]["paraphrase"]["mrr@5"]["n"] == len(paraphrase)
    stale = {(x["stage"], x["label"]): x["count"] for x in d["label_counts_unfiltered"]}
    shut = {(x["stage"], x["label"]): x["count"] for x in d["label_counts"]}
    assert stale.get(("retrieval", "stale_document"), 0) > 0
    assert shut.get(("retrieval", "stale_document"), 0) == 0  # the filter makes the label vanish
    back = EvalRun.from_dict(d)
    assert back.to_dict() == d and back.slices == run.slices
    assert [q.findings for q in back.questions] == [q.findings for q in results]


def test_strategies_table_and_recall_curves(labels, chunks, results) -> None:
    searchers = {"bm25": make_searcher("bm25", chunks), "tfidf": make_searcher("tfidf", chunks)}
    rows, curves = compare_strategies(searchers, labels, chunks, Scope(), k=5)
    assert [r.method for r in rows] == ["bm25", "tfidf"]
    bm25 = rows[0]
    assert bm25 == strategy_row("bm25", results, 5)
    answerable = [r for r in results if r.answerable]
    assert bm25.hits == {f"hit@{n}": sum(r.rank is not None and r.rank <= n for r in answerable) for n in (1, 3, 5)}
    assert bm25.hits["hit@1"] <= bm25.hits["hit@3"] <= bm25.hits["hit@5"] <= bm25.n_answerable
    assert bm25.junk == sum(r.returned > 0 for r in results if not r.answerable)
    assert bm25.no_answer_in_k == sum(any(f.label == "missed_evidence" and f.stage == "retrieval" for f in r.findings)
                                      for r in results)  # fmt: skip
    for curve in curves.values():
        assert len(curve) == 20
        assert all(a <= b + 1e-12 for a, b in zip(curve, curve[1:], strict=False))
    assert curves["bm25"][4] == pytest.approx(sum(r.metrics["recall@5"] for r in answerable) / len(answerable))
    assert recall_curve([r for r in results if not r.answerable]) == []


def test_floor_and_validation(labels, chunks) -> None:
    searcher = make_searcher("bm25", chunks)
    everything_out = evaluate(searcher, labels[:5], chunks, Scope(), 3, floor=1e9)
    assert all(r.context == [] for r in everything_out)
    with pytest.raises(ValueError, match="k"):
        evaluate(searcher, labels, chunks, Scope(), 0)


@pytest.mark.slow
def test_keyword_dense_and_hybrid_compared_on_the_same_labels(labels, chunks, tmp_path) -> None:
    cache = {"cache_path": tmp_path / "embeddings.sqlite"}
    searchers = {
        "bm25": make_searcher("bm25", chunks),
        "dense": make_searcher("dense", chunks, **cache),
        "hybrid": make_searcher("hybrid", chunks, leg_params={"dense": cache}),
    }
    rows, curves = compare_strategies(searchers, labels, chunks, Scope(), k=5)
    assert [r.method for r in rows] == ["bm25", "dense", "hybrid"]
    for r in rows:
        assert r.n_answerable == sum(x.answerable for x in labels)
        assert r.hits["hit@5"] + r.no_answer_in_k >= r.n_answerable  # every answer is either in the top 5 or missed
        assert r.junk <= r.n_unanswerable
    dense = evaluate(searchers["dense"], labels, chunks, Scope(), 5)
    assert all(r.returned == 5 for r in dense)  # a vector search always returns neighbours, even for junk
    assert rows[1].junk == rows[1].n_unanswerable
