"""BM25 as sparse vectors: a chunk's saturated term weights dotted with the query's idf vector.

For query term t and chunk d (the formulas of ``evidencedesk.index.bm25``)::

    document side  w(t, d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))   (a sparsevec)
    query side     idf(t)  = ln(1 + (N - df + 0.5) / (df + 0.5))                     (a sparsevec)
    score(d)       = sum over the distinct query terms of idf(t) * w(t, d)  =  -(weights <#> query)

The database keeps each chunk's raw term frequencies and length next to its encoded weights, and
the document frequencies and corpus size in ``vocab`` and ``bm25_stats``. The weights depend on
avgdl, which moves whenever chunks come or go, so an ingest re-encodes every chunk in SQL when
avgdl changed (and only the new chunks when it did not): the stored weights always belong to the
current corpus. pgvector keeps sparsevec values in float32; the database ranks by that inner
product, and the scores of the rows it returns are recomputed here in float64 from the stored
frequencies, so they equal the embedded BM25 exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pgvector import SparseVector

from evidencedesk.documents import Chunk
from evidencedesk.index.bm25 import lucene_idf
from evidencedesk.index.bm25_weight import check_params, term_weight
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.store.json_data import JsonObject
from evidencedesk.text.tokenizer import DEFAULT_TOKENIZER, Tokenizer

SPARSE_DIM = 1_000_000_000  # pgvector's largest sparsevec dimension; term ids count from 1

ENCODE_ALL = "UPDATE chunk_terms SET weights = bm25_weights(terms, tfs, dl, %(k1)s, %(b)s, %(avgdl)s, %(dim)s)"
ENCODE_NEW = ENCODE_ALL + " WHERE weights IS NULL"


@dataclass(frozen=True)
class TermCounts:
    """One chunk's length (its number of terms) and the frequency of each distinct term."""

    length: int
    tf: Mapping[str, int]


@dataclass(frozen=True)
class QueryTerm:
    id: int
    term: str
    df: int
    idf: float


class BM25Encoder:
    """Turns chunk text into term counts and a query into its idf vector; scores exactly in float64."""

    def __init__(
        self, tokenizer: Tokenizer | None = None, k1: float = 1.5, b: float = 0.75, contextual: bool = False
    ) -> None:
        self.k1, self.b = check_params(k1, b)
        self.contextual = bool(contextual)  # index each chunk after its title > heading path line
        self.tokenizer = tokenizer if tokenizer is not None else DEFAULT_TOKENIZER
        if not isinstance(self.tokenizer, Tokenizer):
            raise ValueError(f"tokenizer: expected a Tokenizer, got {type(self.tokenizer).__name__}")

    def identity(self) -> JsonObject:
        return {"k1": self.k1, "b": self.b, "tokenizer": self.tokenizer.to_dict(), "contextual": self.contextual}

    # -- document side -------------------------------------------------------------------------------
    def counts(self, text: str, lang: str = "en") -> TermCounts:
        terms = self.tokenizer.tokenize(text, lang)
        return TermCounts(len(terms), Counter(terms))

    def chunk_counts(self, chunk: Chunk) -> TermCounts:
        """The term counts of ``chunk`` as indexed: its text, after its context line when ``contextual``."""
        return self.counts(index_text(chunk, self.contextual), chunk.metadata.lang)

    def weight(self, tf: int, length: int, avgdl: float) -> float:
        """The saturated, length-normalised term frequency, computed as ``BM25Index.weight`` does."""
        return float(term_weight(tf, length, self.k1, self.b, avgdl))

    def doc_vector(self, term_ids: Sequence[int], tfs: Sequence[int], length: int, avgdl: float) -> SparseVector:
        """The document-side sparse vector (what ``bm25_weights`` writes in SQL); for tests and tools."""
        return SparseVector({t - 1: self.weight(tf, length, avgdl) for t, tf in zip(term_ids, tfs, strict=True)},
                            SPARSE_DIM)  # fmt: skip

    # -- query side ----------------------------------------------------------------------------------
    def query_terms(self, query: str, langs: Sequence[str] = ("en",)) -> list[str]:
        """The distinct terms of a query in first-seen order (a repeated term counts once), read in each
        of ``langs`` (the stored chunks' languages) when the tokenizer is per-language."""
        return self.tokenizer.query_terms(query, langs)

    @staticmethod
    def idf(n_chunks: int, df: Sequence[int]) -> np.ndarray:
        return lucene_idf(n_chunks, np.asarray(df, dtype=np.int64))

    @staticmethod
    def query_vector(terms: Sequence[QueryTerm]) -> SparseVector:
        return SparseVector({t.id - 1: t.idf for t in terms}, SPARSE_DIM)

    def score(
        self, terms: Sequence[QueryTerm], term_ids: Sequence[int], tfs: Sequence[int], length: int, avgdl: float
    ) -> float:
        """The float64 BM25 score of one chunk, summed in query-term order like the embedded index."""
        tf_of = dict(zip(term_ids, tfs, strict=True))
        total = 0.0
        for t in terms:
            tf = tf_of.get(t.id)
            if tf:
                total += self.weight(tf, length, avgdl) * t.idf
        return total
