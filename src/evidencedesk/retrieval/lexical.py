"""Lexical searchers over chunks: BM25, TF-IDF cosine and LSA.

Each ranks only the chunks its scope allows, returns only chunks with a positive score (sharing a
term with the query, or a positive cosine for LSA) and supports ``add(chunks)`` / ``remove(doc_ids)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.index.bm25 import BM25Index
from evidencedesk.index.lsa import DEFAULT_RANK, LsaIndex
from evidencedesk.index.tfidf import TfidfIndex, make_analyzer
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.row_searcher import RowSearcher
from evidencedesk.text.tokenizer import DEFAULT_TOKENIZER, Tokenizer


def _tokenizer(tokenizer: Tokenizer | dict[str, Any] | None) -> Tokenizer:
    if tokenizer is None:
        return DEFAULT_TOKENIZER
    if isinstance(tokenizer, dict):
        return Tokenizer.from_dict(tokenizer)
    if not isinstance(tokenizer, Tokenizer):
        raise ValueError(f"tokenizer: expected a Tokenizer or a dict, got {type(tokenizer).__name__}")
    return tokenizer


class BM25Searcher(RowSearcher):
    """BM25 with Lucene idf (``k1``, ``b``) over the chunks' text, tokenised by ``tokenizer``; with
    ``contextual`` each chunk's text is indexed after its ``title > heading path`` line (see
    :mod:`.contextual`)."""

    name = "bm25"

    def __init__(
        self,
        chunks: Iterable[Chunk],
        tokenizer: Tokenizer | dict[str, Any] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        contextual: bool = False,
    ) -> None:
        self.tokenizer = _tokenizer(tokenizer)
        self.contextual = bool(contextual)
        chunks = list(chunks)
        self.index = BM25Index((), k1=k1, b=b)  # validates k1 and b before any tokenising
        super().__init__(chunks)
        self.index.add(self._terms(self.chunks))

    @property
    def k1(self) -> float:
        return self.index.k1

    @property
    def b(self) -> float:
        return self.index.b

    def identity(self) -> dict[str, Any]:
        """What makes two BM25 indexes over the same chunks interchangeable."""
        return {
            "method": self.name,
            "k1": self.k1,
            "b": self.b,
            "tokenizer": self.tokenizer.to_dict(),
            "contextual": self.contextual,
        }

    def _terms(self, chunks: Sequence[Chunk]) -> Iterable[list[str]]:
        """Each chunk's terms, in its own language when the tokenizer is per-language."""
        tokenize = self.tokenizer.tokenize
        if not self.tokenizer.per_language:
            return (tokenize(index_text(c, self.contextual)) for c in chunks)
        return (tokenize(index_text(c, self.contextual), c.metadata.lang) for c in chunks)

    def _reindex(self) -> None:
        super()._reindex()
        self.langs = sorted({c.metadata.lang for c in self.chunks}) if self.tokenizer.per_language else []

    def query_terms(self, query: str) -> list[str]:
        """The query's distinct terms (in every language of the indexed chunks when per-language)."""
        return self.tokenizer.query_terms(query, self.langs)

    def _score(
        self, query: str, allowed: np.ndarray, key: Hashable, best: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.index.scores(self.query_terms(query), allowed, key, best)

    def _top(self, query: str, allowed: np.ndarray, key: Hashable, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.top(self.query_terms(query), k, self._tie, allowed, key)

    def _add_rows(self, chunks: Sequence[Chunk]) -> None:
        self.index.add(self._terms(chunks))

    def _keep_rows(self, keep: np.ndarray) -> None:
        self.index.keep(keep)


class _VectorSpaceSearcher(RowSearcher):
    """A searcher over an index of query-scored vectors (TF-IDF, LSA), described by its ``config``."""

    config: dict[str, Any]
    index: Any

    def identity(self) -> dict[str, Any]:
        return {"method": self.name, **self.config}

    def _score(
        self, query: str, allowed: np.ndarray, key: Hashable, best: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        scored: tuple[np.ndarray, np.ndarray] = self.index.scores(query, allowed)
        return scored


class TfidfSearcher(_VectorSpaceSearcher):
    """TF-IDF cosine (scikit-learn weighting).

    ``token_pattern``: a regular expression for scikit-learn's analyzer (default: the project's
    word pattern, which keeps one-character words). ``tokenizer``: use our Tokenizer instead.
    """

    name = "tfidf"
    index: TfidfIndex

    def __init__(
        self,
        chunks: Iterable[Chunk],
        token_pattern: str | None = None,
        tokenizer: Tokenizer | dict[str, Any] | None = None,
        lowercase: bool = True,
    ) -> None:
        tok = _tokenizer(tokenizer) if tokenizer is not None else None
        self.analyzer = make_analyzer(token_pattern, tok, lowercase)
        self.config = {
            "token_pattern": token_pattern,
            "tokenizer": tok.to_dict() if tok else None,
            "lowercase": lowercase,
        }
        super().__init__(chunks)
        self.index = TfidfIndex([c.text for c in self.chunks], self.analyzer)

    def _add_rows(self, chunks: Sequence[Chunk]) -> None:
        self.index.add([c.text for c in chunks])

    def _keep_rows(self, keep: np.ndarray) -> None:
        self.index.keep(keep)


class LsaSearcher(_VectorSpaceSearcher):
    """Cosine in the space of a rank-``rank`` truncated SVD of TF-IDF (refitted after each update)."""

    name = "lsa"
    index: LsaIndex

    def __init__(
        self,
        chunks: Iterable[Chunk],
        rank: int = DEFAULT_RANK,
        token_pattern: str | None = None,
        tokenizer: Tokenizer | dict[str, Any] | None = None,
        lowercase: bool = True,
    ) -> None:
        tok = _tokenizer(tokenizer) if tokenizer is not None else None
        analyzer = make_analyzer(token_pattern, tok, lowercase)
        self.config = {
            "rank": rank,
            "token_pattern": token_pattern,
            "tokenizer": tok.to_dict() if tok else None,
            "lowercase": lowercase,
        }
        super().__init__(chunks)
        self.index = LsaIndex([c.text for c in self.chunks], [c.id for c in self.chunks], rank, analyzer)

    @property
    def used_rank(self) -> int:
        """The rank after the cap ``min(rank, n_docs - 1, n_terms - 1)`` (0: plain TF-IDF vectors)."""
        return self.index.used_rank

    def _add_rows(self, chunks: Sequence[Chunk]) -> None:
        self.index.add([c.text for c in chunks], [c.id for c in chunks], refit=False)

    def _keep_rows(self, keep: np.ndarray) -> None:
        self.index.keep(keep, refit=False)

    def _commit(self) -> None:
        self.index.refit()
