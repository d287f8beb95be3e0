"""The Reranker protocol and the one helper every reranker uses to return its list.

A reranker takes the candidates a first stage found and gives back the same candidates with new
scores, in a new order, ranked from 1. The first stage's candidate is kept in ``parts`` so a trace
still shows where each chunk stood before reranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from evidencedesk.retrieval.candidates import Candidate, Part


@runtime_checkable
class Reranker(Protocol):
    """Rescores candidates: same candidates in, same candidates out, new scores and order."""

    name: str

    def rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]: ...


def reordered(candidates: Sequence[Candidate], scores: Sequence[float], source: str) -> list[Candidate]:
    """The candidates sorted by ``scores`` (highest first; ties keep the original rank), ranked from 1.

    Each returned candidate carries the original candidate's parts plus the original candidate
    itself as a part, so nothing about the first stage is lost.
    """
    if len(scores) != len(candidates):
        raise ValueError(f"scores: expected {len(candidates)} scores, got {len(scores)}")
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), candidates[i].rank, i))
    out: list[Candidate] = []
    for new_rank, i in enumerate(order, 1):
        old = candidates[i]
        parts = (*old.parts, Part(old.source, old.rank, old.score))
        out.append(Candidate(old.chunk, float(scores[i]), new_rank, source, parts))
    return out


__all__ = ["Reranker", "reordered"]
