"""FirstStage: the ranking every front end shows for a query, built in one place.

``search``, the service's ``/search``, the lab, ``eval`` and ``diagnose`` rank through one
``FirstStage``, and ``ask`` retrieves through its ``searcher`` and ``diversify``: so the same store,
method, k and scope give the same candidates in the same order everywhere.

A FirstStage is a searcher (already collapsed per page or document when the settings ask for it) and,
optionally, a diversity step (maximal marginal relevance). Without diversity the top ``k`` are the
searcher's own top ``k``; with it, the searcher fills a pool of ``max(k, pool)`` candidates and the
diversity step picks ``k`` of them, as ``ask`` does before its reranker.

The top ``k`` are always asked for as ``k`` (``search(query, k)``), never cut from a deeper list: a
hybrid's score fusion, a collapsed search and an approximate index may order the head of a deeper
list differently. ``ranking`` gives a deeper list whose head is exactly that top ``k``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.scope import Scope

Diversify = Callable[[list[Candidate], int], list[Candidate]]


class FirstStage:
    """``searcher``'s ranking, diversified by ``diversify`` over a pool of at least ``pool`` candidates."""

    def __init__(self, searcher: Searcher, diversify: Diversify | None = None, pool: int = 0) -> None:
        if pool < 0:
            raise ValueError(f"pool: must be at least 0, got {pool}")
        self.searcher = searcher
        self.diversify = diversify
        self.pool = pool
        self.name = searcher.name

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        """The top ``k`` for ``query`` inside ``scope``: what every front end shows."""
        k = check_k(k)
        if self.diversify is None:
            return self.searcher.search(query, k, scope)
        return self.diversify(self.searcher.search(query, max(k, self.pool), scope), k)

    def ranking(
        self, query: str, k: int, depth: int, scope: Scope | None = None
    ) -> tuple[list[Candidate], list[Candidate]]:
        """``(top, deep)``: the top ``k`` as :meth:`search` gives them, and a list of up to ``depth``
        candidates that starts with exactly those ``k`` and goes on with the first stage's next best."""
        top = self.search(query, k, scope)
        if depth <= k:
            return top, list(top)
        shown = {c.chunk.id for c in top}
        rest = [c for c in self.searcher.search(query, depth, scope) if c.chunk.id not in shown]
        return top, [*top, *rest[: depth - len(top)]]

    def __getattr__(self, name: str) -> Any:  # the searcher's own attributes (legs, tokenizer, identity)
        if name == "searcher":
            raise AttributeError(name)
        return getattr(self.searcher, name)


__all__ = ["Diversify", "FirstStage"]
