"""HybridSearcher: run several searchers under the same scope and fuse their lists.

Each leg is searched to its own candidate depth (at least k, so the fused list has k results
whenever k allowed chunks match in any leg) and the lists are fused by reciprocal rank fusion
(default) or min-max normalised score fusion. Every fused candidate keeps each leg's rank and raw
score in ``parts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.fusion import FUSIONS, RRF_K, normalized_fusion, rrf
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.scope import Scope

DEFAULT_DEPTH = 100


class HybridSearcher:
    """``legs``: searchers, or ``(searcher, depth)`` pairs; ``fusion``: "rrf" or "normalized"."""

    def __init__(
        self,
        legs: Sequence[Searcher | tuple[Searcher, int]],
        fusion: str = "rrf",
        rrf_k: int = RRF_K,
        weights: Sequence[float] | None = None,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        if not legs:
            raise ValueError("legs: need at least one searcher")
        if fusion not in FUSIONS:
            raise ValueError(f"fusion: must be one of {', '.join(FUSIONS)}, got {fusion!r}")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise ValueError(f"rrf_k: must be an integer >= 0, got {rrf_k!r}")
        check_k(depth)
        self.legs: list[tuple[Searcher, int]] = []
        for n, leg in enumerate(legs):
            searcher, leg_depth = leg if isinstance(leg, tuple) else (leg, depth)
            if not callable(getattr(searcher, "search", None)) or not hasattr(searcher, "name"):
                raise ValueError(f"legs[{n}]: not a searcher (needs .name and .search)")
            try:
                check_k(leg_depth)
            except ValueError as exc:
                raise ValueError(f"legs[{n}] depth: {exc}") from None
            self.legs.append((searcher, int(leg_depth)))
        if weights is not None:
            if fusion != "normalized":
                raise ValueError("weights: only used with fusion='normalized'")
            if len(weights) != len(self.legs):
                raise ValueError(f"weights: {len(weights)} weights for {len(self.legs)} legs")
        self.fusion = fusion
        self.rrf_k = rrf_k
        self.weights = list(weights) if weights is not None else None
        self.name = "hybrid"

    @property
    def leg_names(self) -> list[str]:
        return [s.name for s, _ in self.legs]

    def identity(self) -> dict[str, object]:
        def leg_id(s: Searcher) -> object:
            ident = getattr(s, "identity", None)
            return ident() if callable(ident) else s.name

        return {
            "method": self.name,
            "fusion": self.fusion,
            "rrf_k": self.rrf_k,
            "weights": self.weights,
            "legs": [{"searcher": leg_id(s), "depth": d} for s, d in self.legs],
        }

    def leg_lists(self, query: str, k: int = 10, scope: Scope | None = None) -> list[list[Candidate]]:
        """Each leg's own list (depth ``max(depth, k)``), all under the same scope."""
        k = check_k(k)
        scope = scope if scope is not None else Scope()
        return [s.search(query, max(d, k), scope) for s, d in self.legs]

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        lists = self.leg_lists(query, k, scope)
        if self.fusion == "rrf":
            return rrf(lists, self.rrf_k, top=k, source=self.name)
        return normalized_fusion(lists, self.weights, top=k, source=self.name)

    def add(self, chunks: Iterable[Chunk]) -> None:
        chunks = list(chunks)
        for s, _ in self.legs:
            s.add(chunks)  # type: ignore[attr-defined]

    def remove(self, doc_ids: Iterable[str]) -> int:
        if isinstance(doc_ids, str):
            raise ValueError("doc_ids: must be a list of document ids, not one string")
        doc_ids = list(doc_ids)
        return max((s.remove(doc_ids) for s, _ in self.legs), default=0)  # type: ignore[attr-defined]
