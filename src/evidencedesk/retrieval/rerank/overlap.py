"""OverlapReranker: the share of the query's content words that a chunk holds.

Deterministic and free: a baseline for the second stage and a stand-in where no cross-encoder
is available. Words are stemmed and stopwords ignored (``text.content_words``).
Ties keep the first stage's order.
"""

from __future__ import annotations

from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.rerank.base import reordered
from evidencedesk.text import content_words, share_present


class OverlapReranker:
    """Score = |query content words found in the chunk| / |query content words|."""

    name = "overlap"

    def score(self, query: str, text: str) -> float:
        needed = content_words(query)
        if not needed:
            return 0.0
        return share_present(needed, set(content_words(text)))

    def rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        needed = content_words(query)
        scores = [share_present(needed, set(content_words(c.chunk.text))) if needed else 0.0 for c in candidates]
        return reordered(candidates, scores, self.name)


__all__ = ["OverlapReranker"]
