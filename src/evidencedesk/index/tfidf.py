"""TF-IDF cosine with scikit-learn's weighting (smooth idf, l2-normalised rows).

Text is analysed either by a scikit-learn analyzer built from ``token_pattern`` (default: the
project's word pattern, which keeps one-character words such as a lone digit and Bangla words
whole) or by a :class:`~evidencedesk.text.tokenizer.Tokenizer`. Counts are kept per row, so an
update analyses only the new rows; idf depends on every row, so the weighting is refitted
(``TfidfTransformer``) after each update and the result equals a fresh ``TfidfVectorizer`` fit.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from evidencedesk.index.counts import TermCounts
from evidencedesk.text import Tokenizer, token_pattern

Analyzer = Callable[[str], list[str]]


def make_analyzer(
    token_pattern_: str | None = None, tokenizer: Tokenizer | None = None, lowercase: bool = True
) -> Analyzer:
    """Our tokenizer when given, else scikit-learn's analyzer for ``token_pattern_``."""
    if tokenizer is not None:
        if token_pattern_ is not None:
            raise ValueError("token_pattern: give a token pattern or a tokenizer, not both")
        return tokenizer.tokenize
    pattern = token_pattern_ if token_pattern_ is not None else token_pattern()
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"token_pattern: not a valid regular expression: {exc}") from exc
    from sklearn.feature_extraction.text import TfidfVectorizer  # scikit-learn loads only when TF-IDF is used

    analyzer: Callable[[str], list[str]] = TfidfVectorizer(token_pattern=pattern, lowercase=lowercase).build_analyzer()
    return analyzer


class TfidfIndex:
    """TF-IDF row vectors (CSR) plus a per-term postings copy for fast cosine with a query."""

    def __init__(self, texts: Iterable[str] = (), analyzer: Analyzer | None = None) -> None:
        self.analyzer: Analyzer = analyzer or make_analyzer()
        self.counts = TermCounts.from_tokens(self.analyzer(t) for t in texts)
        self._refresh()

    def add(self, texts: Iterable[str]) -> None:
        self.counts.add(self.analyzer(t) for t in texts)
        self._refresh()

    def keep(self, rows: np.ndarray) -> None:
        self.counts.keep(np.asarray(rows, dtype=bool))
        self._refresh()

    def _refresh(self) -> None:
        self.counts.prune()  # a term no row holds would still weigh in the query's norm
        counts = self.counts.matrix
        self.n_docs, self.n_terms = counts.shape
        if self.n_docs and self.n_terms:
            from sklearn.feature_extraction.text import TfidfTransformer

            transformer = TfidfTransformer().fit(counts)
            self.idf = np.asarray(transformer.idf_, dtype=np.float64)
            self.matrix = transformer.transform(counts).tocsr()
        else:
            self.idf = np.zeros(self.n_terms)
            self.matrix = counts.astype(np.float64)
        csc = self.matrix.tocsc()
        csc.sort_indices()
        self.indptr = csc.indptr.astype(np.int64)
        self.rows = csc.indices.astype(np.int64)
        self.data = csc.data

    def query_vector(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """``(term_ids, weights)`` of the query's l2-normalised TF-IDF vector (unknown terms dropped)."""
        vocab = self.counts.vocab
        tf = Counter(vocab[t] for t in self.analyzer(query) if t in vocab)
        if not tf:
            return np.empty(0, dtype=np.int64), np.empty(0)
        ids = np.fromiter(tf.keys(), dtype=np.int64, count=len(tf))
        w = np.fromiter(tf.values(), dtype=np.float64, count=len(tf)) * self.idf[ids]
        return ids, w / np.linalg.norm(w)

    def scores(self, query: str, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosines)`` of the allowed rows with a positive cosine; rows ascending."""
        ids, w = self.query_vector(query)
        if not len(ids):
            return np.empty(0, dtype=np.int64), np.empty(0)
        starts, ends = self.indptr[ids], self.indptr[ids + 1]
        lens = ends - starts
        total = int(lens.sum())
        offsets = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
        rows, contrib = self.rows[offsets], self.data[offsets] * np.repeat(w, lens)
        if allowed is not None:
            keep = allowed[rows]
            rows, contrib = rows[keep], contrib[keep]
        dense = np.bincount(rows, weights=contrib, minlength=self.n_docs)
        hit = np.flatnonzero(dense > 0)
        return hit, dense[hit]

    def terms(self, text: str) -> Sequence[str]:
        return self.analyzer(text)
