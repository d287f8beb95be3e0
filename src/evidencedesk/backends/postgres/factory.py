"""pg_searcher: a method name and parameters to a Searcher over a PgStore (the twin of ``make_searcher``).

``bm25`` and ``dense`` search inside the database; ``hybrid`` fuses legs as the embedded factory
does; ``tfidf`` and ``lsa`` have no database form and are built in memory over the store's chunks.
BM25 settings belong to the store (``PgStore(..., k1=, b=, tokenizer=)`` or ``configure_bm25``).
``tenant_statistics=True`` (bm25, tfidf, lsa) ranks each tenant with its own collection statistics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.backends.postgres.searchers import PgBM25Searcher, PgDenseSearcher
from evidencedesk.backends.postgres.store import PgStore
from evidencedesk.constants import METHODS
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.factory import DEFAULT_LEGS, _depths, _legs, make_searcher
from evidencedesk.retrieval.hybrid import DEFAULT_DEPTH, HybridSearcher

_BM25_SETTINGS = ("k1", "b", "tokenizer", "stem", "stopwords", "language", "min_length", "contextual")
_DENSE_PARAMS = (
    "embedder", "cache_path", "mode", "ef_search", "max_scan_tuples", "fallback", "batch_size", "contextual",
)  # fmt: skip


def _unknown(method: str, params: Mapping[str, object], accepted: tuple[str, ...]) -> None:
    unknown = set(params) - set(accepted)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) for method {method!r} on PostgreSQL: {', '.join(sorted(unknown))}; "
            f"accepted: {', '.join(accepted) or 'none'}"
        )


def pg_searcher(method: str, store: PgStore, **params: Any) -> Searcher:
    """A searcher of ``method`` over ``store``; unknown methods or parameters raise ValueError."""
    if method == "bm25":
        settings = sorted(set(params) & set(_BM25_SETTINGS))
        if settings:
            raise ValueError(
                f"{', '.join(settings)}: BM25 settings belong to the PostgreSQL store; open it with them "
                "(PgStore(url, k1=..., b=..., tokenizer=...)) or call store.configure_bm25"
            )
        _unknown(method, params, ("margin", "tenant_statistics"))
        return PgBM25Searcher(store, **params)
    if method == "dense":
        _unknown(method, params, _DENSE_PARAMS)
        if isinstance(params.get("embedder"), str):
            from evidencedesk.index.embedders import embedder_from_name

            params["embedder"] = embedder_from_name(params["embedder"])
        return PgDenseSearcher(store, **params)
    if method in ("tfidf", "lsa"):
        return make_searcher(method, store.chunks(), **params)
    if method == "hybrid":
        names = _legs(params.pop("legs", DEFAULT_LEGS))
        leg_params = params.pop("leg_params", None) or {}
        if not isinstance(leg_params, dict) or set(leg_params) - set(names):
            raise ValueError(f"leg_params: a dict keyed by leg name ({', '.join(names)}), got {leg_params!r}")
        _unknown(method, params, ("fusion", "rrf_k", "weights", "depth", "depths"))
        depths = _depths(params.pop("depths", None), names, params.get("depth", DEFAULT_DEPTH))
        legs = [(pg_searcher(n, store, **dict(leg_params.get(n, {}))), depths[n]) for n in names]
        return HybridSearcher(legs, **params)
    raise ValueError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
