"""MRR@k: 1 / rank of the first relevant item within the top k, 0 when none is there.

With ``k`` at least the run's length this is trec_eval's recip_rank.
"""

from __future__ import annotations

from collections.abc import Mapping

from evidencedesk.evaluation.metrics.base import RELEVANT, Qrels, Run, per_query


def _reciprocal_rank(grades: Mapping[str, int], ids: list[str], k: int) -> float:
    for rank, d in enumerate(ids[:k], 1):
        if grades.get(d, 0) >= RELEVANT:
            return 1.0 / rank
    return 0.0


def mrr(qrels: Qrels, run: Run, k: int) -> dict[str, float]:
    return per_query(qrels, run, k, _reciprocal_rank)
