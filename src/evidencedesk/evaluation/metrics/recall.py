"""recall@k: relevant items in the top k / all relevant items of the query (trec_eval recall_k)."""

from __future__ import annotations

from collections.abc import Mapping

from evidencedesk.evaluation.metrics.base import RELEVANT, Qrels, Run, per_query


def _recall(grades: Mapping[str, int], ids: list[str], k: int) -> float:
    total = sum(g >= RELEVANT for g in grades.values())
    return sum(grades.get(d, 0) >= RELEVANT for d in ids[:k]) / total


def recall(qrels: Qrels, run: Run, k: int) -> dict[str, float]:
    return per_query(qrels, run, k, _recall)
