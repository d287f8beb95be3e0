"""The typed parameters ``wiring`` builds from the settings for searchers, generators and the context.

Each is a frozen dataclass, built once from ``Settings`` and never changed afterwards; ``as_kwargs()``
gives the keyword arguments of the constructor it is for (``make_searcher``, ``pg_searcher``,
``get_generator``, ``open_store``, ``assemble``), a fresh mapping on every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from evidencedesk.text.tokenizer import Tokenizer


@dataclass(frozen=True)
class Tokens:
    """How a lexical leg tokenizes: Snowball stemming, stopwords (None: keep every word) and language."""

    stem: bool
    stopwords: str | None
    language: str


@dataclass(frozen=True)
class LegParams:
    """One searcher's parameters (a single method, or one leg of a hybrid); None: the searcher's default.

    BM25 reads ``k1``, ``b``, ``tokens`` and ``contextual``; TF-IDF ``tokens``; LSA ``rank`` and
    ``tokens``; dense ``cache_path``, ``contextual`` and ``embedder``. ``tenant_statistics``: one index
    per tenant (lexical methods only).
    """

    method: str
    k1: float | None = None
    b: float | None = None
    rank: int | None = None
    tokens: Tokens | None = None
    contextual: bool | None = None
    cache_path: Path | None = None
    embedder: str | None = None
    tenant_statistics: bool = False

    def as_kwargs(self) -> dict[str, object]:
        """The searcher's keyword arguments: only the parameters given."""
        out: dict[str, object] = {}
        if self.cache_path is not None:
            out["cache_path"] = self.cache_path
        if self.k1 is not None:
            out["k1"] = self.k1
        if self.b is not None:
            out["b"] = self.b
        if self.rank is not None:
            out["rank"] = self.rank
        if self.tokens is not None:
            out.update(stem=self.tokens.stem, stopwords=self.tokens.stopwords, language=self.tokens.language)
        if self.contextual is not None:
            out["contextual"] = self.contextual
        if self.embedder is not None:
            out["embedder"] = self.embedder
        if self.tenant_statistics:
            out["tenant_statistics"] = True
        return out


@dataclass(frozen=True)
class FusionParams:
    """How a hybrid fuses its legs: ``rrf`` or ``normalized``, the RRF constant, the weights, and how
    deep each leg ranks (``depths``, in leg order; ``depth`` for a leg not listed)."""

    method: str
    rrf_k: int
    weights: tuple[float, ...] | None
    depth: int
    depths: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class HybridParams:
    """A hybrid searcher's legs (in order, each with its own parameters) and their fusion."""

    legs: tuple[LegParams, ...]
    fusion: FusionParams

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(leg.method for leg in self.legs)

    def leg(self, method: str) -> LegParams:
        """The parameters of the leg ``method``; KeyError when the hybrid has no such leg."""
        for leg in self.legs:
            if leg.method == method:
                return leg
        raise KeyError(method)

    def as_kwargs(self) -> dict[str, object]:
        """``make_searcher("hybrid", ...)``'s keyword arguments."""
        f = self.fusion
        return {
            "legs": list(self.names),
            "leg_params": {leg.method: leg.as_kwargs() for leg in self.legs},
            "fusion": f.method,
            "rrf_k": f.rrf_k,
            "weights": list(f.weights) if f.weights is not None else None,
            "depth": f.depth,
            "depths": dict(f.depths),
        }


SearcherParams = LegParams | HybridParams


@dataclass(frozen=True)
class BM25Options:
    """The BM25 settings a PostgreSQL store is opened with (it keeps its BM25 weights itself)."""

    tokenizer: Tokenizer
    k1: float
    b: float
    contextual: bool

    def as_kwargs(self) -> dict[str, object]:
        return {"tokenizer": self.tokenizer, "k1": self.k1, "b": self.b, "contextual": self.contextual}


def _given(pairs: dict[str, object]) -> dict[str, object]:
    return {name: value for name, value in pairs.items() if value is not None}


@dataclass(frozen=True)
class OpenAIParams:
    """The ``openai`` generator's endpoint, model, answer length, deadline and key (None: its default)."""

    base_url: str | None
    model: str | None
    max_tokens: int
    timeout: float
    api_key: str | None = None

    def as_kwargs(self) -> dict[str, object]:
        return _given({
            "base_url": self.base_url, "model": self.model, "max_tokens": self.max_tokens,
            "timeout": self.timeout, "api_key": self.api_key,
        })  # fmt: skip


@dataclass(frozen=True)
class LlamaCppParams:
    """The ``llama-cpp`` generator's model file, answer length and deadline."""

    model_path: str | None
    max_tokens: int
    timeout_s: float

    def as_kwargs(self) -> dict[str, object]:
        return _given({"model_path": self.model_path, "max_tokens": self.max_tokens, "timeout_s": self.timeout_s})


@dataclass(frozen=True)
class ExtractiveParams:
    """The ``extractive`` generator's answerability path, its reader and the answer's length."""

    reader: str
    reader_tokens: int
    reader_model: str | None
    reader_threshold: float | None
    max_words: int

    def as_kwargs(self) -> dict[str, object]:
        return _given({
            "reader": self.reader, "reader_tokens": self.reader_tokens, "reader_model": self.reader_model,
            "reader_threshold": self.reader_threshold, "max_words": self.max_words,
        })  # fmt: skip


GeneratorParams = OpenAIParams | LlamaCppParams | ExtractiveParams


class ContextKwargs(TypedDict):
    """``assemble``'s (and ``prepare``'s) context keyword arguments."""

    budget_tokens: int
    floor: float | None
    dedup_threshold: float
    order: str


@dataclass(frozen=True)
class ContextOptions:
    """How the context is assembled: its token budget, score floor, near-duplicate threshold and order."""

    budget_tokens: int
    floor: float | None
    dedup_threshold: float
    order: str

    def as_kwargs(self) -> ContextKwargs:
        return {
            "budget_tokens": self.budget_tokens,
            "floor": self.floor,
            "dedup_threshold": self.dedup_threshold,
            "order": self.order,
        }


__all__ = [
    "BM25Options",
    "ContextKwargs",
    "ContextOptions",
    "ExtractiveParams",
    "FusionParams",
    "GeneratorParams",
    "HybridParams",
    "LegParams",
    "LlamaCppParams",
    "OpenAIParams",
    "SearcherParams",
    "Tokens",
]
