"""nDCG@k: DCG of the top k divided by the DCG of the ideal order of all judged grades.

``DCG@k = sum over ranks i <= k of gain(grade_i) / log2(i + 1)``. Two gains, and the result says
which one it used:

- ``linear``: gain = grade. This is trec_eval's ``ndcg_cut`` (and scikit-learn's ``ndcg_score``).
- ``exponential``: gain = 2**grade - 1, the textbook variant that weights the top grade more.

Grades of 0 or below add nothing. The ideal DCG uses every positive grade in the qrels, cut at k.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from evidencedesk.evaluation.metrics.base import Qrels, Run, per_query

Gain = Literal["linear", "exponential"]
GAINS: tuple[str, ...] = ("linear", "exponential")


def _gain(grade: int, kind: str) -> float:
    if grade <= 0:
        return 0.0
    return float(grade) if kind == "linear" else float(2**grade - 1)


def _dcg(grades: list[int], kind: str) -> float:
    return sum(_gain(g, kind) / math.log2(i + 2) for i, g in enumerate(grades))


class NDCG(dict[str, float]):
    """Per-query nDCG@k (a plain ``{query id: value}`` dict) that also records its gain and k."""

    def __init__(self, gain: str, k: int, values: Mapping[str, float]) -> None:
        super().__init__(values)
        self.gain = gain
        self.k = k

    @property
    def name(self) -> str:
        return f"ndcg@{self.k}" if self.gain == "linear" else f"ndcg_exp@{self.k}"


def ndcg(qrels: Qrels, run: Run, k: int, gain: Gain = "linear") -> NDCG:
    if gain not in GAINS:
        raise ValueError(f"gain: must be one of {', '.join(GAINS)}, got {gain!r}")

    def score(grades: Mapping[str, int], ids: list[str], cut: int) -> float:
        ideal = _dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:cut], gain)
        return _dcg([grades.get(d, 0) for d in ids[:cut]], gain) / ideal

    return NDCG(gain, k, per_query(qrels, run, k, score))
