"""What every metric shares: the run and qrels types, the ranking rule and the per-query loop.

Conventions (those of trec_eval, checked against pytrec_eval):

- ``qrels[qid][doc] = grade``; a grade of 1 or more counts as relevant (nDCG uses the grade as gain).
- A run gives each query either a ranked list of ids or ``{id: score}``. Scores are ranked by score
  descending, ties by id descending (trec_eval's order). A list keeps the first occurrence of a
  repeated id. A list shorter than ``k`` is fine.
- A query with no relevant item in ``qrels`` (absent, or all grades 0) is left out of the result:
  there is nothing to find, so no retrieval metric is defined. Callers count such queries apart.
- A query with relevant items but no entry in ``run`` scores 0 (trec_eval's ``-c``), so a method
  that returns nothing is never flattered by a smaller denominator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
RunQuery = Sequence[str] | Mapping[str, float]
Run = Mapping[str, RunQuery]
RELEVANT = 1  # the smallest grade that counts as relevant


def ranking(results: RunQuery) -> list[str]:
    """A query's ids in rank order: scores descending then id descending; repeats dropped."""
    if isinstance(results, Mapping):
        return [doc for doc, _ in sorted(results.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
    if isinstance(results, str):
        raise TypeError("a run query must be a list of ids or a {id: score} mapping, not a string")
    seen: set[str] = set()
    out: list[str] = []
    for doc in results:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k: must be a positive integer, got {k!r}")


def per_query(
    qrels: Qrels, run: Run, k: int, score: Callable[[Mapping[str, int], list[str], int], float]
) -> dict[str, float]:
    """Apply ``score(grades, ranked ids, k)`` to every query that has at least one relevant item."""
    check_k(k)
    out: dict[str, float] = {}
    for qid, grades in qrels.items():
        if not any(g >= RELEVANT for g in grades.values()):
            continue
        out[qid] = float(score(grades, ranking(run.get(qid, ())), k))
    return out


def mean(per_query_values: Mapping[str, float]) -> float:
    """The mean over queries (0.0 for no queries)."""
    values = list(per_query_values.values())
    return sum(values) / len(values) if values else 0.0


__all__ = ["RELEVANT", "Qrels", "Run", "RunQuery", "check_k", "mean", "per_query", "ranking"]
