"""Searcher wiring and search for the Desk.

Which searcher a method gets depends on where the index lives: inside PostgreSQL (``pg-bm25``,
``pg-dense``), a memory-mapped snapshot that fits the latest build (``snapshot-bm25`` ...), or else an
index built in memory from the stored chunks (``memory-bm25`` ...). Searchers are cached per build.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from evidencedesk.config import Settings
from evidencedesk.constants import METHODS
from evidencedesk.errors import ConfigError
from evidencedesk.lab import searcher_tokenizer
from evidencedesk.results.search import SearchHit
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.explain import shared_words
from evidencedesk.retrieval.first_stage import FirstStage
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.contract import HoldsVectors, SearchesInside
from evidencedesk.wiring import (
    dense_contextual,
    dense_embedder,
    first_stage,
    hybrid_legs,
    pg_searcher_params,
    searcher_label,
    searcher_params,
    with_collapse,
)

from .index_upkeep import IndexUpkeep
from .state import DeskState

_IN_MEMORY_ONLY = "TF-IDF and LSA are built in memory only: use bm25, dense or a hybrid of those"
_WRITE_INDEX = "with a snapshot that fits (evidencedesk index), BM25 and dense search read their index from disk"


class Serialized:
    """A searcher whose ``search`` runs one call at a time: in-memory and snapshot searchers keep
    small caches (scope masks, restricted postings) that are not built for concurrent writers."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self._lock = threading.Lock()
        self.name = searcher.name

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        with self._lock:
            return self.searcher.search(query, k, scope)

    @property
    def paged(self) -> bool:
        """Whether a chunk the searcher ranks may lie on a page (asked by page collapsing on every search:
        a property, not a trip through ``__getattr__``)."""
        return bool(getattr(self.searcher, "paged", True))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.searcher, name)


def checked_method(state: DeskState, method: str | None, legs: Sequence[str] | None) -> str:
    """``method`` (default: the configured one), checked, with ``legs`` only for a hybrid."""
    method = method or state.settings.retrieval.method
    if method not in METHODS:
        raise ConfigError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
    if legs is not None and method != "hybrid":
        raise ConfigError("legs: only for method hybrid")
    return method


class Searching:
    """Builds and caches the first-stage searchers, and runs searches through them."""

    def __init__(self, state: DeskState, index: IndexUpkeep) -> None:
        self.state = state
        self.index = index
        # the first stage last built per (method, legs), with the searcher and settings it was built from
        self._stages: dict[tuple[str | None, tuple[str, ...] | None], tuple[Searcher, Settings, FirstStage]] = {}

    def searcher(self, method: str | None = None, legs: Sequence[str] | None = None) -> Searcher:
        state = self.state
        method = checked_method(state, method, legs)
        names = tuple(legs) if legs else None
        if names is not None and names == hybrid_legs(state.settings):
            names = None  # the configured legs named: the same searcher as naming none
        state.build_id()
        key = (method, names)
        with state.lock:
            found = state.cache.searchers.get(key)
            if found is None:
                self._stages.clear()  # they hold searchers of an earlier build or settings
                found = with_collapse(self._make(method, names), state.settings)
                state.cache.searchers[key] = found
            return found

    def _make(self, method: str, names: tuple[str, ...] | None) -> Searcher:
        state = self.state
        settings, cache = state.settings, state.embeddings_file
        legs = list(names or hybrid_legs(settings)) if method == "hybrid" else [method]
        if isinstance(state.store, SearchesInside):
            if "dense" in legs and isinstance(state.store, HoldsVectors):
                contextual = dense_contextual(settings)
                state.store.ensure_vectors(dense_embedder(settings), cache, contextual=contextual)
            if method in ("tfidf", "lsa"):  # no database form: built in memory from the chunks
                state.check_memory(f"method {method}", _IN_MEMORY_ONLY)
            elif method == "hybrid" and {"tfidf", "lsa"} & set(legs):
                state.check_memory(f"a hybrid with legs {', '.join(legs)}", _IN_MEMORY_ONLY)
            params = pg_searcher_params(settings, method, cache, names, tenant_statistics=state.tenant_statistics())
            return state.store.searcher(method, **params.as_kwargs())
        split = state.tenant_statistics()
        mapped = self._from_snapshot(method, names, per_tenant=split)
        if mapped is not None:
            return Serialized(mapped)
        from evidencedesk.retrieval.factory import make_searcher

        hint = _IN_MEMORY_ONLY if {"tfidf", "lsa"} & set(legs) else f"{self.index.snapshot_status()}; {_WRITE_INDEX}"
        state.check_memory(f"method {method}", hint)
        chunks = state.store.chunks()
        self.index.keep_chunks(chunks)
        params = searcher_params(settings, method, cache, names)
        if "dense" in legs and state.step_progress is not None:
            self.index.embed(state.step_progress("embedding chunks"))  # with progress: the searcher finds them cached
        return Serialized(make_searcher(method, chunks, tenant_statistics=split, **params.as_kwargs()))

    def _from_snapshot(self, method: str, names: tuple[str, ...] | None, per_tenant: bool) -> Searcher | None:
        snap, _ = self.index.snapshot()
        if snap is None:
            return None
        from evidencedesk.wiring_snapshot import snapshot_searcher

        settings = self.state.settings
        legs = names or hybrid_legs(settings)
        embedder = lambda: dense_embedder(settings)  # noqa: E731
        return snapshot_searcher(snap, self.state.store, settings, method, legs, embedder, per_tenant)

    def first_stage(
        self, method: str | None = None, legs: Sequence[str] | None = None, over: Searcher | None = None
    ) -> FirstStage:
        """The ranking every front end shows for ``method``: its searcher (collapsed per
        ``retrieval.collapse``), or ``over`` (a searcher built elsewhere, e.g. over the lab's
        re-chunked corpus), then ``retrieval.diversity``."""
        searcher = over if over is not None else self.searcher(method, legs)
        settings = self.state.settings
        if over is not None:
            return first_stage(searcher, settings)
        key = (method, tuple(legs) if legs else None)
        made = self._stages.get(key)
        if made is not None and made[0] is searcher and made[1] is settings:
            return made[2]  # the same searcher under the same settings: the same first stage
        stage = first_stage(searcher, settings)
        self._stages[key] = (searcher, settings, stage)
        return stage

    def label(self, method: str | None = None, legs: Sequence[str] | None = None) -> str:
        return searcher_label(self.searcher(method, legs))

    def search(
        self, query: str, k: int | None, method: str | None, scope: Scope | Mapping[str, Any] | None,
        legs: Sequence[str] | None,
    ) -> list[Candidate]:  # fmt: skip
        if not query.strip():
            raise ConfigError("query: must not be empty")
        settings = self.state.settings
        k = k or settings.retrieval.k
        if k < 1:
            raise ConfigError(f"k: must be at least 1, got {k}")
        return self.first_stage(method, legs).search(query, k, self.state.scope(scope))

    def rows(
        self, query: str, results: list[Candidate], method: str | None, legs: Sequence[str] | None
    ) -> list[SearchHit]:
        """``results`` of ``query`` as hits, with the query words each holds as ``method``'s searcher reads them."""
        tokenizer = searcher_tokenizer(self.searcher(method, legs))
        return [SearchHit.of(c, shared_words(query, c.chunk.text, tokenizer)) for c in results]


def warm_up() -> None:
    """Compile (or load from numba's cache) the search kernels now, so that no request waits for them;
    a service calls it before it takes requests."""
    from evidencedesk.index.postings_kernel import warm

    warm()


__all__ = ["Searching", "Serialized", "checked_method", "warm_up"]
