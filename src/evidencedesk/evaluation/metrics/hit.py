"""hit@k: 1 when at least one relevant item is in the top k, else 0 (trec_eval's success@k)."""

from __future__ import annotations

from collections.abc import Mapping

from evidencedesk.evaluation.metrics.base import RELEVANT, Qrels, Run, per_query


def _hit(grades: Mapping[str, int], ids: list[str], k: int) -> float:
    return 1.0 if any(grades.get(d, 0) >= RELEVANT for d in ids[:k]) else 0.0


def hit(qrels: Qrels, run: Run, k: int) -> dict[str, float]:
    return per_query(qrels, run, k, _hit)
