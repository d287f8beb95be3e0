"""Compare retrieval methods on the same labels, chunks, scope and k.

One row per method: answers at rank 1, within 3 and within 5 (hit@n counts an answering, grade-2
chunk), how often the answer was outranked by a grade-0 chunk, how often no answer was in the top
k, and how many unanswerable questions still got results ("junk"). ``recall_curve`` gives mean
recall@k for k = 1..n from the rankings an evaluation already holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.evaluation import metrics as m
from evidencedesk.evaluation.labels import Label
from evidencedesk.evaluation.runner import QuestionResult, evaluate
from evidencedesk.evaluation.taxonomy import label_counts
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.scope import Scope

HITS = (1, 3, 5)


@dataclass(frozen=True)
class StrategyRow:
    """How one method fares on the labelled questions (a row of the strategies table)."""

    method: str
    k: int
    n_answerable: int
    hits: dict[str, int]  # "hit@1" -> number of answerable questions with an answer that high
    outranked: int  # retrieval/irrelevant_match
    no_answer_in_k: int  # retrieval/missed_evidence
    junk: int  # unanswerable questions with any result
    n_unanswerable: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StrategyRow:
        """A row read back from its JSON."""
        return cls(
            method=str(d["method"]),
            k=int(d["k"]),
            n_answerable=int(d["n_answerable"]),
            hits={str(h): int(n) for h, n in d["hits"].items()},
            outranked=int(d["outranked"]),
            no_answer_in_k=int(d["no_answer_in_k"]),
            junk=int(d["junk"]),
            n_unanswerable=int(d["n_unanswerable"]),
        )


def strategy_row(method: str, results: Sequence[QuestionResult], k: int, hits: Sequence[int] = HITS) -> StrategyRow:
    answerable = [r for r in results if r.answerable]
    unanswerable = [r for r in results if not r.answerable]
    counts = label_counts(results)
    return StrategyRow(
        method=method,
        k=k,
        n_answerable=len(answerable),
        hits={f"hit@{n}": sum(r.hit(n) for r in answerable) for n in hits},
        outranked=counts[("retrieval", "irrelevant_match")],
        no_answer_in_k=counts[("retrieval", "missed_evidence")],
        junk=sum(r.returned > 0 for r in unanswerable),
        n_unanswerable=len(unanswerable),
    )


def recall_curve(results: Sequence[QuestionResult], max_k: int = 20) -> list[float]:
    """Mean recall@k over answerable questions for k = 1..max_k (an answer no chunk holds counts 0)."""
    answerable = [r for r in results if r.answerable]
    if not answerable:
        return []
    qrels = {r.id: r.relevant for r in answerable}
    run = {r.id: r.ranking for r in answerable}
    curve = []
    for k in range(1, max_k + 1):
        per_q = m.recall(qrels, run, k)
        curve.append(sum(per_q.get(r.id, 0.0) for r in answerable) / len(answerable))
    return curve


def compare_strategies(
    searchers: Mapping[str, Searcher],
    labels: Sequence[Label],
    chunks: Sequence[Chunk],
    scope: Scope | None,
    k: int = 5,
    curve_k: int = 20,
) -> tuple[list[StrategyRow], dict[str, list[float]]]:
    """Evaluate each named searcher the same way; return its table rows and recall curves."""
    rows, curves = [], {}
    for name, searcher in searchers.items():
        results = evaluate(searcher, labels, chunks, scope, k, depth=max(k, curve_k))
        rows.append(strategy_row(name, results, k))
        curves[name] = recall_curve(results, curve_k)
    return rows, curves


__all__ = ["HITS", "StrategyRow", "compare_strategies", "recall_curve", "strategy_row"]
