"""Fusing ranked lists: reciprocal rank fusion (by position) and min-max normalised score fusion.

Both keep, for every fused candidate, the parts it came from (source, rank, raw score), and break
ties by the best rank the chunk reached in any list, then by chunk id, so the output is stable.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from fractions import Fraction

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Part, candidate

RRF_K = 60  # Cormack, Clarke and Buettcher (2009)


class _Pool:
    """Every chunk seen in the lists and its best rank, in one pass; the parts (source, rank, score)
    are gathered, and ``Part`` records made, only for the chunks that make the fused top."""

    def __init__(self, lists: Sequence[Sequence[Candidate]]) -> None:
        self.lists = lists
        self.chunks: dict[str, Chunk] = {}
        self.best: dict[str, int] = {}
        best = self.best
        for lst in lists:
            for rank, cand in enumerate(lst, 1):  # rank = 1-based index in this list (scores are ignored)
                cid = cand.chunk.id
                seen = best.get(cid)
                if seen is None:
                    self.chunks[cid] = cand.chunk
                    best[cid] = rank
                elif rank < seen:
                    best[cid] = rank

    def ranks(self) -> dict[str, list[int]]:
        """Each chunk's ranks over the lists, in list order."""
        found: dict[str, list[int]] = {cid: [] for cid in self.chunks}
        for lst in self.lists:
            for rank, cand in enumerate(lst, 1):
                found[cand.chunk.id].append(rank)
        return found

    def ranked(self, totals: dict[str, Fraction] | dict[str, float], top: int | None, source: str) -> list[Candidate]:
        best = self.best
        key = lambda cid: (-totals[cid], best[cid], cid)  # noqa: E731
        order = sorted(totals, key=key) if top is None or top >= len(totals) else heapq.nsmallest(top, totals, key=key)
        wanted = set(order)
        parts: dict[str, list[Part]] = {cid: [] for cid in order}
        for lst in self.lists:
            for rank, cand in enumerate(lst, 1):
                cid = cand.chunk.id
                if cid in wanted:
                    parts[cid].append(Part(cand.source, rank, float(cand.score)))
        return [
            candidate(self.chunks[cid], float(totals[cid]), n, source, tuple(parts[cid]))
            for n, cid in enumerate(order, 1)
        ]


def _check_top(top: int | None) -> None:
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise ValueError(f"top: must be None or an integer >= 1, got {top!r}")


def rrf(
    lists: Sequence[Sequence[Candidate]], k: int = RRF_K, top: int | None = None, source: str = "hybrid"
) -> list[Candidate]:
    """Reciprocal rank fusion: a chunk's score is the sum of ``1 / (k + rank)`` over the lists holding it.

    Ranks are positions (from 1) in each list; raw scores are ignored. Sums are exact fractions, so
    equal sums are real ties, broken by the better best rank, then the chunk id.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k: must be an integer >= 0, got {k!r}")
    _check_top(top)
    pool = _Pool(lists)
    totals = {cid: sum((Fraction(1, k + rank) for rank in ranks), Fraction(0)) for cid, ranks in pool.ranks().items()}
    return pool.ranked(totals, top, source)


def normalized_fusion(
    lists: Sequence[Sequence[Candidate]],
    weights: Sequence[float] | None = None,
    top: int | None = None,
    source: str = "hybrid",
) -> list[Candidate]:
    """Weighted sum of min-max normalised scores; a chunk missing from a list gets 0 from it.

    Each list's scores are mapped to [0, 1] by ``(s - min) / (max - min)``; a list whose scores are
    all equal maps them all to 1.
    """
    if weights is None:
        weights = [1.0] * len(lists)
    weights = [float(w) for w in weights]
    if len(weights) != len(lists):
        raise ValueError(f"weights: {len(weights)} weights for {len(lists)} lists")
    if any(not w >= 0 for w in weights):
        raise ValueError(f"weights: must all be >= 0, got {weights}")
    _check_top(top)
    pool = _Pool(lists)
    totals: dict[str, float] = dict.fromkeys(pool.chunks, 0.0)
    for lst, w in zip(lists, weights, strict=True):
        if not lst:
            continue
        scores = [float(c.score) for c in lst]
        lo, hi = min(scores), max(scores)
        for cand, s in zip(lst, scores, strict=True):
            totals[cand.chunk.id] += w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
    return pool.ranked(totals, top, source)


FUSIONS = ("rrf", "normalized")
