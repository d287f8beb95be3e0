"""TwoStage: a wide, cheap first stage, then a reranker over its candidates only.

``TwoStage`` is itself a Searcher. It counts the candidates the second stage scored (its cost,
counted rather than timed so output is repeatable). ``ceiling`` reports recall at the candidate
depth beside recall at the final k: a reranker can only reorder what the first stage fetched, so
recall at the candidate depth is the most it can reach.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.rerank.base import Reranker
from evidencedesk.retrieval.scope import Scope


class ReachDict(TypedDict):
    """The rerank reach figures as JSON, with ``headroom``."""

    candidates: int
    final: int
    queries: int
    recall_at_candidates: float
    first_stage_at_final: float
    reranked_at_final: float
    headroom: float
    scored_per_query: float


@dataclass
class TwoStage:
    """Fetch ``candidates`` with ``first``, rerank them, keep the best ``final`` (or ``k``)."""

    first: Searcher
    reranker: Reranker
    candidates: int = 20
    final: int = 5
    scored: int = field(default=0, init=False)  # candidates the second stage has scored so far
    searches: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise ValueError(f"candidates: must be >= 1, got {self.candidates}")
        if self.final < 1:
            raise ValueError(f"final: must be >= 1, got {self.final}")
        if self.final > self.candidates:
            raise ValueError(f"final: must be <= candidates ({self.candidates}), got {self.final}")
        if not hasattr(self.reranker, "rerank"):
            raise ValueError("reranker: must have a rerank(query, candidates) method")

    @property
    def name(self) -> str:
        return f"{self.first.name}+{self.reranker.name}"

    def stages(self, query: str, k: int | None = None, scope: Scope | None = None) -> tuple[list[Candidate], ...]:
        """``(first-stage candidates, reranked top k)`` for one query."""
        k = self.final if k is None else k
        if k < 1:
            raise ValueError(f"k: must be >= 1, got {k}")
        broad = self.first.search(query, max(self.candidates, k), scope)
        self.scored += len(broad)
        self.searches += 1
        return broad, self.reranker.rerank(query, broad)[:k]

    def search(self, query: str, k: int | None = None, scope: Scope | None = None) -> list[Candidate]:
        return self.stages(query, k, scope)[1]

    @property
    def scored_per_search(self) -> float:
        return self.scored / self.searches if self.searches else 0.0


@dataclass(frozen=True)
class Ceiling:
    """Recall at the candidate depth (the ceiling) beside recall at the final k, before and after reranking."""

    candidates: int
    final: int
    queries: int
    recall_at_candidates: float
    first_stage_at_final: float
    reranked_at_final: float
    scored_per_query: float

    @property
    def headroom(self) -> float:
        """What reranking could still win: the ceiling minus recall at the final k after reranking."""
        return self.recall_at_candidates - self.reranked_at_final

    def to_dict(self) -> ReachDict:
        return {
            "candidates": self.candidates,
            "final": self.final,
            "queries": self.queries,
            "recall_at_candidates": self.recall_at_candidates,
            "first_stage_at_final": self.first_stage_at_final,
            "reranked_at_final": self.reranked_at_final,
            "headroom": self.headroom,
            "scored_per_query": self.scored_per_query,
        }


def _recall(found: list[Candidate], relevant: Collection[str]) -> float:
    ids = {c.chunk.id for c in found}
    return sum(r in ids for r in relevant) / len(relevant)


def ceiling(
    two: TwoStage,
    queries: Mapping[str, str],
    relevant: Mapping[str, Collection[str]],
    scope: Scope | None = None,
) -> Ceiling:
    """Mean recall over the queries that have relevant chunk ids (queries without any are skipped)."""
    judged = [qid for qid in queries if relevant.get(qid)]
    if not judged:
        raise ValueError("relevant: no query has a relevant chunk id, so recall is undefined")
    at_depth = first_at_final = reranked_at_final = 0.0
    scored = 0
    for qid in judged:
        before = two.scored
        broad, top = two.stages(queries[qid], two.final, scope)
        scored += two.scored - before
        rel = set(relevant[qid])
        at_depth += _recall(broad[: two.candidates], rel)
        first_at_final += _recall(broad[: two.final], rel)
        reranked_at_final += _recall(top, rel)
    n = len(judged)
    return Ceiling(two.candidates, two.final, n, at_depth / n, first_at_final / n, reranked_at_final / n, scored / n)


__all__ = ["Ceiling", "TwoStage", "ceiling"]
