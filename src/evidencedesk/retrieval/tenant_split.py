"""Per-tenant statistics: one index per tenant, so a tenant's scores never depend on another's text.

BM25, TF-IDF and LSA weigh a word by how common it is in the indexed collection (document
frequency, average length, the SVD basis). Over a shared index, tenant A's scores would move when
tenant B adds text, and a tenant could learn how common a word is in another tenant's documents by
watching its own scores. ``TenantSplit`` builds the chosen searcher once per tenant, over that
tenant's chunks only, and answers a query from the indexes of the tenants the scope allows: with
one tenant in scope the result is exactly what an index of that tenant alone would return; with
several, each tenant's list is ranked with its own statistics and the lists are merged by score.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope


def tenants_of(chunks: Sequence[Chunk]) -> list[str]:
    """The distinct tenants of ``chunks``, sorted."""
    return sorted({c.metadata.tenant for c in chunks})


class TenantSplit:
    """A searcher made of one ``build(chunks)`` searcher per tenant (each built on first use)."""

    def __init__(self, chunks: Sequence[Chunk], build: Callable[[list[Chunk]], Searcher]) -> None:
        self._groups: dict[str, list[Chunk]] = {}
        for c in chunks:
            self._groups.setdefault(c.metadata.tenant, []).append(c)
        if not self._groups:
            raise ValueError("tenant statistics: no chunks to index")
        self._build = build
        self._parts: dict[str, Searcher] = {}
        self._lock = threading.Lock()
        self.name = self.part(min(self._groups)).name

    @property
    def tenants(self) -> list[str]:
        return sorted(self._groups)

    def part(self, tenant: str) -> Searcher:
        """The searcher over ``tenant``'s chunks alone."""
        with self._lock:
            found = self._parts.get(tenant)
            if found is None:
                found = self._build(list(self._groups[tenant]))
                self._parts[tenant] = found
            return found

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        scope = scope if scope is not None else Scope()
        wanted = self._groups.keys() if scope.tenants is None else self._groups.keys() & scope.tenants
        found: list[Candidate] = []
        for tenant in sorted(wanted):
            found.extend(self.part(tenant).search(query, k, scope))
        if len(wanted) > 1:
            found.sort(key=lambda c: (-c.score, c.chunk.id))
        return [replace(c, rank=i) for i, c in enumerate(found[:k], start=1)]

    def close(self) -> None:
        for part in self._parts.values():
            close = getattr(part, "close", None)
            if callable(close):
                close()

    def __getattr__(self, name: str) -> object:  # tokenizer, legs, identity...: the first tenant's searcher
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.part(min(self._groups)), name)


def split_by_tenant(chunks: Sequence[Chunk], build: Callable[[list[Chunk]], Searcher], on: bool) -> Searcher:
    """``build(chunks)``, or a ``TenantSplit`` of it when ``on`` and the chunks hold several tenants."""
    if on and len(tenants_of(chunks)) > 1:
        return TenantSplit(chunks, build)
    return build(list(chunks))


__all__ = ["TenantSplit", "split_by_tenant", "tenants_of"]
