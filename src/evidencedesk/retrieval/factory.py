"""make_searcher: one entry point from a method name and parameters to a Searcher.

Methods: ``bm25``, ``tfidf``, ``lsa``, ``dense`` and ``hybrid`` (legs fused by RRF; default legs
``bm25,dense``). Tokenizer settings may be given as ``tokenizer=`` (a Tokenizer or its dict) or as
the shortcuts ``stem``, ``stopwords``, ``language``, ``min_length``. A hybrid takes ``legs`` ("bm25,lsa"
or a list), ``fusion``, ``rrf_k``, ``weights``, ``depth`` (or per leg ``depths``: {"bm25": 20}) and
``leg_params`` ({"bm25": {"k1": 1.2}}).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evidencedesk.constants import LEGS, METHODS
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.hybrid import DEFAULT_DEPTH, HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, LsaSearcher, TfidfSearcher
from evidencedesk.text.tokenizer import Tokenizer

DEFAULT_LEGS = ("bm25", "dense")
_TOKENIZER_SHORTCUTS = ("stem", "stopwords", "language", "min_length")


def _dense_class() -> type:
    try:
        from evidencedesk.retrieval.dense import DenseSearcher
    except ImportError as exc:  # pragma: no cover - only when the dense module is missing or broken
        raise ValueError(f"method 'dense' is not available: {exc}") from exc
    return DenseSearcher


def _dense(chunks: list[Chunk], **params: Any) -> Searcher:
    cls = _dense_class()
    embedder = params.get("embedder")
    if isinstance(embedder, str):
        from evidencedesk.index.embedders import embedder_from_name

        params["embedder"] = embedder_from_name(embedder)
    return _construct(cls, "dense", chunks, params)


def _construct(cls: Callable[..., Any], method: str, chunks: list[Chunk], params: Mapping[str, object]) -> Searcher:
    accepted = set(inspect.signature(cls).parameters) - {"chunks", "self"}
    unknown = set(params) - accepted
    if unknown:
        raise ValueError(
            f"unknown parameter(s) for method {method!r}: {', '.join(sorted(unknown))}; "
            f"accepted: {', '.join(sorted(accepted))}"
        )
    made: Searcher = cls(chunks, **params)
    return made


def _with_tokenizer(params: dict[str, Any]) -> dict[str, Any]:
    """Fold the tokenizer shortcuts (stem=..., stopwords=...) into a ``tokenizer`` parameter."""
    shortcuts = {k: params.pop(k) for k in _TOKENIZER_SHORTCUTS if k in params}
    if not shortcuts:
        return params
    if "tokenizer" in params and params["tokenizer"] is not None:
        raise ValueError(f"give either tokenizer= or {', '.join(sorted(shortcuts))}, not both")
    params["tokenizer"] = Tokenizer(**shortcuts)
    return params


def _legs(legs: str | Sequence[str]) -> list[str]:
    names = [p.strip() for p in legs.split(",")] if isinstance(legs, str) else [str(p).strip() for p in legs]
    names = [n for n in names if n]
    if not names:
        raise ValueError("legs: name at least one method, e.g. 'bm25,dense'")
    for n in names:
        if n not in LEGS:
            raise ValueError(f"legs: unknown leg {n!r}; choose from {', '.join(LEGS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"legs: a method appears twice in {names}")
    return names


def _depths(depths: Any, names: Sequence[str], default: int) -> dict[str, int]:
    """Each leg's depth: ``depths`` ({"bm25": 20}) where given, else ``default``."""
    depths = depths or {}
    if not isinstance(depths, dict) or set(depths) - set(names):
        raise ValueError(f"depths: a dict keyed by leg name ({', '.join(names)}), got {depths!r}")
    return {n: int(depths.get(n, default)) for n in names}


def _hybrid(chunks: list[Chunk], **params: Any) -> Searcher:
    names = _legs(params.pop("legs", DEFAULT_LEGS))
    wanted_depths = params.pop("depths", None)
    leg_params = params.pop("leg_params", None) or {}
    if not isinstance(leg_params, dict) or set(leg_params) - set(names):
        raise ValueError(f"leg_params: a dict keyed by leg name ({', '.join(names)}), got {leg_params!r}")
    accepted = set(inspect.signature(HybridSearcher).parameters) - {"legs"}
    unknown = set(params) - accepted
    if unknown:
        raise ValueError(
            f"unknown parameter(s) for method 'hybrid': {', '.join(sorted(unknown))}; "
            f"accepted: legs, leg_params, depths, {', '.join(sorted(accepted))}"
        )
    depths = _depths(wanted_depths, names, params.get("depth", DEFAULT_DEPTH))
    legs = [(make_searcher(n, chunks, **dict(leg_params.get(n, {}))), depths[n]) for n in names]
    return HybridSearcher(legs, **params)


def make_searcher(method: str, chunks: Sequence[Chunk], **params: Any) -> Searcher:
    """A searcher of ``method`` over ``chunks``; unknown methods or parameters raise ValueError.

    ``tenant_statistics=True`` gives the lexical methods (bm25, tfidf, lsa, and those legs of a
    hybrid) one index per tenant (``TenantSplit``), so no tenant's scores depend on another's text;
    a hybrid then fuses the merged per-tenant lists as usual.
    """
    chunks = list(chunks)
    split = bool(params.pop("tenant_statistics", False))
    if split and method in ("bm25", "tfidf", "lsa"):
        from evidencedesk.retrieval.tenant_split import split_by_tenant

        return split_by_tenant(chunks, lambda part: make_searcher(method, part, **dict(params)), True)
    if method == "bm25":
        return _construct(BM25Searcher, method, chunks, _with_tokenizer(params))
    if method == "tfidf":
        return _construct(TfidfSearcher, method, chunks, _with_tokenizer(params))
    if method == "lsa":
        return _construct(LsaSearcher, method, chunks, _with_tokenizer(params))
    if method == "dense":
        return _dense(chunks, **params)
    if method == "hybrid":
        if split:
            legs = params.get("leg_params") or {}
            names = _legs(params.get("legs", DEFAULT_LEGS))
            params["leg_params"] = {n: {**dict(legs.get(n, {})), "tenant_statistics": True} for n in names}
        return _hybrid(chunks, **params)
    raise ValueError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
