"""Settings to objects: the one place that reads ``Settings`` and builds the pipeline's parts.

Every front end gets its searchers, reranker, diversity step, generator, rewriter and context
options from here (through ``Desk``), so a key of ``evidencedesk.yaml`` means the same thing in
the CLI, the Python API and the HTTP service. The stages below (``retrieval``, ``answer``) take
plain parameters and never read the settings model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.answer.generators.base import Generator
from evidencedesk.config import Settings
from evidencedesk.constants import EMBEDDINGS_FILE
from evidencedesk.errors import ConfigError
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.first_stage import FirstStage
from evidencedesk.retrieval.rerank.base import Reranker
from evidencedesk.wiring_params import (
    BM25Options,
    ContextOptions,
    ExtractiveParams,
    FusionParams,
    GeneratorParams,
    HybridParams,
    LegParams,
    LlamaCppParams,
    OpenAIParams,
    SearcherParams,
    Tokens,
)

if TYPE_CHECKING:
    from evidencedesk.index.embedders import Embedder
    from evidencedesk.retrieval.rewrite import Rewriter

Diversify = Callable[[list[Candidate], int], list[Candidate]]


# -- searchers -------------------------------------------------------------------------------------
def leg_params(settings: Settings, method: str, cache_path: Path) -> LegParams:
    """Searcher parameters for one ``method`` from the settings' leg of that method (defaults when
    no leg names it); dense embeddings are cached at ``cache_path``."""
    leg = next((x for x in settings.retrieval.legs if x.method == method), None)
    if method == "dense":
        if leg is None:
            return LegParams(method, cache_path=cache_path)
        embedder = leg.model if leg.model != "minilm" else None
        return LegParams(method, cache_path=cache_path, contextual=leg.contextual, embedder=embedder)
    if method not in ("bm25", "tfidf", "lsa") or leg is None:
        return LegParams(method)
    tokens = Tokens(stem=leg.stem, stopwords=leg.stopwords, language=leg.language)
    if method == "bm25":
        return LegParams(method, k1=leg.k1, b=leg.b, tokens=tokens, contextual=leg.contextual)
    # TF-IDF and LSA keep their own word pattern unless the leg itself asks for stemming or stopwords
    # (the stem and stopwords defaults are BM25's)
    asked = {"stem", "stopwords"} & leg.model_fields_set
    own = tokens if asked and (leg.stem or leg.stopwords) else None
    return LegParams(method, rank=leg.rank if method == "lsa" else None, tokens=own)


def dense_contextual(settings: Settings) -> bool:
    """Whether dense embeddings are computed over each chunk's title line (false when no leg is dense)."""
    leg = next((x for x in settings.retrieval.legs if x.method == "dense"), None)
    return leg is not None and leg.contextual


def hybrid_legs(settings: Settings) -> tuple[str, ...]:
    """A hybrid's legs: the configured legs when there are several, else bm25 and dense."""
    legs = settings.retrieval.legs
    return tuple(leg.method for leg in legs) if len(legs) > 1 else ("bm25", "dense")


def fusion_params(settings: Settings, names: Sequence[str]) -> FusionParams:
    """A hybrid's fusion settings: method, RRF constant, weights, and the depth each leg ranks to
    (its own ``depth``; legs the settings do not list rank as deep as the deepest listed one)."""
    r = settings.retrieval
    depths = [leg.depth for leg in r.legs if leg.method in names]
    weights = r.fusion.weights
    return FusionParams(
        method=r.fusion.method,
        rrf_k=r.fusion.k,
        weights=tuple(weights) if weights is not None else None,
        depth=max(depths or [leg.depth for leg in r.legs]),
        depths=tuple({leg.method: leg.depth for leg in r.legs if leg.method in names}.items()),
    )


def searcher_params(
    settings: Settings, method: str, cache_path: Path, legs: Sequence[str] | None = None
) -> SearcherParams:
    """``make_searcher`` parameters for ``method`` as the settings describe it; ``legs`` replaces a
    hybrid's configured legs."""
    if method != "hybrid":
        return leg_params(settings, method, cache_path)
    names = list(legs) if legs else list(hybrid_legs(settings))
    return HybridParams(tuple(leg_params(settings, m, cache_path) for m in names), fusion_params(settings, names))


def pg_searcher_params(
    settings: Settings,
    method: str,
    cache_path: Path,
    legs: Sequence[str] | None = None,
    tenant_statistics: bool = False,
) -> SearcherParams:
    """``pg_searcher`` parameters: as ``searcher_params``, less the BM25 settings (a PostgreSQL store
    holds its BM25 weights; ``pg_store_options`` opens it with the configured ones). TF-IDF and LSA
    have no database form: a single one gets its in-memory parameters. ``tenant_statistics``: every
    leg but dense keeps one index per tenant."""

    def one(name: str) -> LegParams:
        params = LegParams(name) if name == "bm25" else leg_params(settings, name, cache_path)
        return replace(params, tenant_statistics=tenant_statistics and name != "dense")

    if method != "hybrid":
        return one(method)
    names = list(legs) if legs else list(hybrid_legs(settings))
    return HybridParams(tuple(one(m) for m in names), fusion_params(settings, names))


def bm25_settings(settings: Settings) -> BM25Options:
    """The BM25 leg's ``tokenizer``, ``k1``, ``b`` and ``contextual`` (the defaults when no leg is BM25)."""
    from evidencedesk.config import LegSettings
    from evidencedesk.text.tokenizer import Tokenizer

    leg = next((x for x in settings.retrieval.legs if x.method == "bm25"), LegSettings(method="bm25"))
    tokenizer = Tokenizer(stem=leg.stem, stopwords=leg.stopwords, language=leg.language)
    return BM25Options(tokenizer=tokenizer, k1=leg.k1, b=leg.b, contextual=leg.contextual)


def dense_model(settings: Settings) -> str:
    leg = next((x for x in settings.retrieval.legs if x.method == "dense"), None)
    return leg.model if leg is not None else "minilm"


def dense_embedder(settings: Settings) -> Embedder:
    """The embedder the dense leg names (the bundled MiniLM by default)."""
    from evidencedesk.index.embedders import embedder_from_name

    return embedder_from_name(dense_model(settings))


# -- generator -------------------------------------------------------------------------------------
def generator_params(settings: Settings, name: str) -> GeneratorParams | None:
    """The constructor parameters of generator ``name`` from ``generator.*`` (None: a generator
    without settings of its own)."""
    gen = settings.generator
    if name == "openai":
        key = os.environ.get(gen.api_key_env, "").strip()
        return OpenAIParams(gen.base_url, gen.model, gen.max_tokens, gen.timeout_s, api_key=key or None)
    if name == "llama-cpp":
        return LlamaCppParams(model_path=gen.model, max_tokens=gen.max_tokens, timeout_s=gen.timeout_s)
    if name == "extractive":
        return ExtractiveParams(
            reader=gen.answerability, reader_tokens=settings.retrieval.rerank.max_tokens,
            reader_model=gen.reader.model, reader_threshold=gen.reader.threshold, max_words=gen.reader.max_words,
        )  # fmt: skip
    return None


def build_generator(settings: Settings, name: str | None = None) -> Generator:
    """The generator ``name`` (default ``generator.name``) built with the configured model settings.

    An unknown name raises ``ConfigError``; a generator whose library or model is missing raises
    ImportError, FileNotFoundError or RuntimeError from its constructor.
    """
    from evidencedesk.answer.generators import get_generator

    chosen = name or settings.generator.name
    try:
        params = generator_params(settings, chosen)
        return get_generator(chosen, **(params.as_kwargs() if params is not None else {}))
    except ValueError as exc:
        raise ConfigError(f"generator.name: {exc}") from None


# -- reranker and diversity ------------------------------------------------------------------------
def rerank_spec(settings: Settings) -> str:
    """The configured reranker in its short form: none, overlap, llm, cross-encoder (the bundled
    model) or cross-encoder:MODEL."""
    rerank = settings.retrieval.rerank
    if rerank.method == "cross-encoder" and rerank.model:
        return f"cross-encoder:{rerank.model}"
    return rerank.method


def build_reranker(
    spec: str | None, generator: Callable[[], Generator], settings: Settings | None = None
) -> Reranker | None:
    """A reranker from its short form; ``llm`` asks the answer generator (``generator()``) to judge
    each candidate. ``none`` (or None) means no second stage. A cross-encoder reads
    ``retrieval.rerank.max_tokens`` and ``fuse_weight`` from ``settings``."""
    if spec is not None and spec.strip().lower() == "llm":
        from evidencedesk.retrieval.rerank.llm import LLMReranker

        return LLMReranker(generator())
    from evidencedesk.retrieval.rerank import get_reranker
    from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable

    rerank = (settings or Settings()).retrieval.rerank
    try:
        return get_reranker(
            spec, max_tokens=rerank.max_tokens, fuse_weight=rerank.fuse_weight, min_score=rerank.min_score
        )
    except CrossEncoderUnavailable as exc:
        raise ConfigError(str(exc)) from None
    except ValueError as exc:
        message = str(exc)
        key = "retrieval.rerank.model" if message.startswith("retrieval.rerank.model") else "retrieval.rerank.method"
        raise ConfigError(message if message.startswith(key) else f"{key}: {message}") from None


def with_collapse(searcher: Searcher, settings: Settings) -> Searcher:
    """``searcher`` with ``retrieval.collapse`` applied: at most one chunk per page (or document)."""
    from evidencedesk.retrieval.collapse import collapsed

    return collapsed(searcher, settings.retrieval.collapse)


def build_diversity(settings: Settings) -> Diversify | None:
    """``retrieval.diversity``: maximal marginal relevance over the candidate pool, or None."""
    div = settings.retrieval.diversity
    if div.method != "mmr":
        return None
    from evidencedesk.retrieval.mmr import mmr

    lambda_ = div.lambda_

    def diversify(candidates: list[Candidate], k: int) -> list[Candidate]:
        return mmr(candidates, k, lambda_)

    return diversify


def first_stage(searcher: Searcher, settings: Settings) -> FirstStage:
    """The ranking every front end shows over ``searcher`` (already collapsed, see ``with_collapse``):
    ``retrieval.diversity`` picks the top k from a pool of ``retrieval.rerank.candidates``, as ``ask``
    does before its reranker."""
    return FirstStage(searcher, build_diversity(settings), settings.retrieval.rerank.candidates)


# -- rewriting and context -------------------------------------------------------------------------
@dataclass(frozen=True)
class RewriteOptions:
    """Which query rewriting steps a request asks for."""

    normalise: bool = False
    decompose: bool = False
    paraphrases: tuple[str, ...] = ()
    hyde: bool = False

    def __bool__(self) -> bool:
        return self.normalise or self.decompose or bool(self.paraphrases) or self.hyde


def build_rewriter(options: RewriteOptions | None, generator: Callable[[], Generator]) -> Rewriter | None:
    """A ``Rewriter`` for the steps asked for (HyDE asks the answer generator), or None."""
    if not options:
        return None
    from evidencedesk.retrieval.rewrite import Rewriter

    assert options is not None
    return Rewriter(
        normalise=options.normalise,
        decompose=options.decompose,
        paraphrases=list(options.paraphrases) or None,
        hyde=generator() if options.hyde else None,
    )


def context_options(settings: Settings) -> ContextOptions:
    """How ``assemble`` builds the context, from ``context.*``."""
    ctx = settings.context
    return ContextOptions(
        budget_tokens=ctx.budget_tokens, floor=ctx.floor, dedup_threshold=ctx.dedup_threshold, order=ctx.order
    )


# -- what a searcher is, for traces ----------------------------------------------------------------
def unwrapped(searcher: Any) -> Any:
    """The searcher inside its wrappers (one call at a time, collapsing), which pass ``searcher`` on."""
    while getattr(searcher, "searcher", None) is not None:
        searcher = searcher.searcher
    return searcher


def searcher_label(searcher: Searcher) -> str:
    """Where a searcher ranks: ``pg-bm25`` (inside PostgreSQL), ``snapshot-bm25`` (a memory-mapped
    snapshot), ``memory-bm25`` (an index built in memory); a hybrid lists its legs."""
    inner = unwrapped(searcher)
    legs = getattr(inner, "legs", None)
    if legs:
        return f"hybrid({'+'.join(searcher_label(s) for s, _ in legs)})"
    module = type(inner).__module__
    if module.startswith("evidencedesk.backends.postgres"):
        where = "pg"
    elif module == "evidencedesk.retrieval.snapshot":
        where = "snapshot"
    else:
        where = "memory"
    method = getattr(inner, "method", None) if where == "snapshot" else None
    return f"{where}-{method or inner.name}"


__all__ = [
    "EMBEDDINGS_FILE",
    "RewriteOptions",
    "bm25_settings",
    "build_diversity",
    "build_generator",
    "build_reranker",
    "build_rewriter",
    "context_options",
    "dense_contextual",
    "dense_embedder",
    "first_stage",
    "generator_params",
    "hybrid_legs",
    "leg_params",
    "pg_searcher_params",
    "rerank_spec",
    "searcher_label",
    "searcher_params",
    "unwrapped",
    "with_collapse",
]
