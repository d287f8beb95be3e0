"""precision@k: relevant items in the top k / k, even when fewer than k were returned (trec_eval P_k)."""

from __future__ import annotations

from collections.abc import Mapping

from evidencedesk.evaluation.metrics.base import RELEVANT, Qrels, Run, per_query


def _precision(grades: Mapping[str, int], ids: list[str], k: int) -> float:
    return sum(grades.get(d, 0) >= RELEVANT for d in ids[:k]) / k


def precision(qrels: Qrels, run: Run, k: int) -> dict[str, float]:
    return per_query(qrels, run, k, _precision)
