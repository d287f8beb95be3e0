"""Ranking metrics: hand computations and a cross-check against pytrec_eval (trec_eval)."""

from __future__ import annotations

import math
import random

import pytest
import pytrec_eval

from evidencedesk.evaluation.metrics import hit, mean, mrr, ndcg, precision, ranking, recall


def first_relevant_at(ranks: list[int | None], depth: int = 10) -> tuple[dict, dict]:
    """One relevant doc per query, placed at the given rank (None: not retrieved)."""
    qrels, run = {}, {}
    for n, rank in enumerate(ranks):
        q = f"q{n}"
        qrels[q] = {"gold": 1}
        ids = [f"x{i}" for i in range(depth)]
        if rank is not None:
            ids[rank - 1] = "gold"
        run[q] = ids
    return qrels, run


def test_ndcg_at_4_by_hand_linear_gain() -> None:
    # grades in rank order 1, 2, 0, 2; ideal order 2, 2, 1, 0: 3.123 / 3.762
    qrels = {"q": {"a": 1, "b": 2, "d": 2, "c": 0}}
    result = ndcg(qrels, {"q": ["a", "b", "c", "d"]}, 4)
    assert result.gain == "linear" and result.name == "ndcg@4"
    assert result["q"] == pytest.approx(0.830, abs=5e-4)


def test_ndcg_exponential_gain_weights_the_top_grade_more() -> None:
    # gains 1, 3, 0, 3: DCG 1 + 3/log2(3) + 3/log2(5) = 4.185; ideal 3, 3, 1: 3 + 1.893 + 0.5 = 5.393
    qrels = {"q": {"a": 1, "b": 2, "d": 2}}
    result = ndcg(qrels, {"q": ["a", "b", "c", "d"]}, 4, gain="exponential")
    assert result.gain == "exponential" and result.name == "ndcg_exp@4"
    assert result["q"] == pytest.approx(0.776, abs=5e-4)
    with pytest.raises(ValueError, match="gain"):
        ndcg(qrels, {"q": ["a"]}, 4, gain="square")  # type: ignore[arg-type]


def test_mrr_and_recall_for_five_queries() -> None:
    qrels, run = first_relevant_at([1, 2, 4, 1, None])
    assert mean(mrr(qrels, run, 10)) == pytest.approx(0.55)
    assert mean(recall(qrels, run, 3)) == pytest.approx(0.60)
    assert mean(recall(qrels, run, 5)) == pytest.approx(0.80)
    assert mean(hit(qrels, run, 3)) == pytest.approx(0.60)


def test_mrr_for_first_ranks_1_3_2() -> None:
    qrels, run = first_relevant_at([1, 3, 2])
    assert mean(mrr(qrels, run, 10)) == pytest.approx(0.611, abs=5e-4)
    assert mean(mrr(qrels, run, 2)) == pytest.approx((1 + 0 + 0.5) / 3)  # the cut at k counts


def test_precision_at_5_with_two_relevant_in_top_5() -> None:
    qrels = {"q": {"a": 1, "c": 2, "z": 1}}
    assert precision(qrels, {"q": ["a", "b", "c", "d", "e", "z"]}, 5) == {"q": pytest.approx(0.40)}
    assert precision(qrels, {"q": ["a"]}, 5) == {"q": pytest.approx(0.20)}  # divides by k, not by what came back


def test_queries_without_relevant_items_are_left_out_and_missing_runs_score_zero() -> None:
    qrels = {"none": {"a": 0}, "lost": {"a": 1}, "ok": {"a": 2}}
    run = {"none": ["a"], "ok": ["a"], "extra": ["a"]}
    for fn in (hit, recall, precision, mrr):
        out = fn(qrels, run, 3)
        assert set(out) == {"lost", "ok"}
        assert out["lost"] == 0.0
    assert set(ndcg(qrels, run, 3)) == {"lost", "ok"}


def test_ranking_rules_match_trec_eval() -> None:
    assert ranking({"a": 1.0, "b": 1.0, "c": 2.0}) == ["c", "b", "a"]  # score desc, ties by id desc
    assert ranking(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]  # first occurrence kept
    with pytest.raises(ValueError, match="k"):
        recall({"q": {"a": 1}}, {"q": ["a"]}, 0)
    with pytest.raises(TypeError):
        ranking("abc")


def _random_case(rng: random.Random) -> tuple[dict, dict]:
    qrels, run = {}, {}
    for q in range(rng.randint(1, 6)):
        docs = [f"d{i}" for i in range(rng.randint(1, 25))]
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2]) for d in judged}
        if rng.random() < 0.1:
            qrels[f"q{q}"] = {d: 0 for d in judged}  # a query with nothing relevant
        retrieved = rng.sample(docs, rng.randint(1, len(docs)))
        run[f"q{q}"] = {d: float(rng.randint(0, 6)) for d in retrieved}  # few values: many ties
    return qrels, run


@pytest.mark.parametrize("seed", range(60))
def test_cross_check_against_pytrec_eval(seed: int) -> None:
    rng = random.Random(seed)
    qrels, run = _random_case(rng)
    ks = (1, 2, 3, 5, 10, 20)
    cuts = ",".join(map(str, ks))
    measures = {f"ndcg_cut.{cuts}", f"recall.{cuts}", f"P.{cuts}", f"success.{cuts}", "recip_rank"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours_queries = set(recall(qrels, run, 1))
    assert ours_queries == {q for q in qrels if any(g >= 1 for g in qrels[q].values())}
    for k in ks:
        ours = {
            "ndcg_cut": ndcg(qrels, run, k),
            "recall": recall(qrels, run, k),
            "P": precision(qrels, run, k),
            "success": hit(qrels, run, k),
        }
        for name, values in ours.items():
            for q, v in values.items():
                assert v == pytest.approx(ref[q][f"{name}_{k}"], abs=1e-9), (seed, q, name, k)
    deep = mrr(qrels, run, 1000)
    for q, v in deep.items():
        assert v == pytest.approx(ref[q]["recip_rank"], abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_mrr_at_k_and_lists_with_repeats_match_pytrec_eval_on_the_deduplicated_run(seed: int) -> None:
    rng = random.Random(1000 + seed)
    qrels, scored = _random_case(rng)
    k = rng.choice([1, 2, 3, 5])
    lists = {}
    for q, scores in scored.items():
        ids = ranking(scores)
        lists[q] = [d for d in ids for _ in range(rng.randint(1, 2))]  # each id once or twice in a row
    cut = {q: {d: float(len(ids) - i) for i, d in enumerate(ranking(ids)[:k])} for q, ids in lists.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", f"ndcg_cut.{k}"}).evaluate(cut)
    for q, v in mrr(qrels, lists, k).items():
        assert v == pytest.approx(ref[q]["recip_rank"], abs=1e-9)
    for q, v in ndcg(qrels, lists, k).items():
        assert v == pytest.approx(ref[q][f"ndcg_cut_{k}"], abs=1e-9)


def test_linear_ndcg_is_one_for_the_ideal_order_and_log_discounted() -> None:
    qrels = {"q": {"a": 2, "b": 1}}
    assert ndcg(qrels, {"q": ["a", "b"]}, 2)["q"] == pytest.approx(1.0)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg(qrels, {"q": ["b", "a"]}, 2)["q"] == pytest.approx(expected)
