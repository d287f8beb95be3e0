"""BM25 (Lucene idf) over a sparse term-frequency matrix.

For query term t and chunk d::

    idf(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))
    weight(t,d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
    score(d)    = sum over the distinct query terms of idf(t) * weight(t, d)

The term frequencies live in a CSR matrix (rows = chunks). After every build or update the cheap
corpus-wide parts (lengths, avgdl, df, idf) are recomputed and each posting's ``idf * weight`` is
stored once in per-term postings (CSC order), so a query only reads and sums the postings of its
own terms. Updates never re-tokenise the rows that stay and give exactly the scores of a fresh build.

Filtering happens before scoring: postings of rows outside the allowed mask are dropped before
any sum. A mask used more than once gets its own restricted postings (cached), so a query under a
narrow scope reads only the allowed rows' postings.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from evidencedesk.index.bm25_weight import check_params, term_weight
from evidencedesk.index.counts import TermCounts
from evidencedesk.index.postings_kernel import (  # numba is imported on first use
    answered_by_numpy,
    best_rows,
    kernel_loaded,
)
from evidencedesk.index.top_rows import top_k

_CACHED_VIEWS = 8
_SAMPLE = 256  # rows sampled for the floor under the best scores
# A query with at most this many postings is searched by NumPy while the compiled pass is not loaded yet
# (loading numba and its cached kernel takes most of a second; NumPy sums a million postings in milliseconds).
NUMPY_UNTIL = 1_000_000


def lucene_idf(n_docs: int, df: np.ndarray) -> np.ndarray:
    """``ln(1 + (N - n + 0.5) / (n + 0.5))``: always positive, unlike the classic Robertson idf."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class TermScore:
    """One query term's part of one chunk's score."""

    term: str
    tf: int
    df: int
    idf: float
    contribution: float


@dataclass(frozen=True)
class Postings:
    """Per-term postings: term t's rows are ``rows[indptr[t]:indptr[t + 1]]`` (ascending)."""

    indptr: np.ndarray  # int64, one more than the number of terms
    rows: np.ndarray  # int32
    scores: np.ndarray  # float64 idf(t) * weight(t, row); a segment keeps the raw int32 tf here
    bounds: list[int] = field(init=False, repr=False, compare=False)  # indptr as a list: cheap per-term look-ups

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds", self.indptr.tolist())

    def restrict(self, allowed: np.ndarray) -> Postings:
        """The postings of the allowed rows only."""
        keep = allowed[self.rows]
        kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])  # kept_before[i]: kept postings before position i
        return Postings(kept_before[self.indptr], self.rows[keep], self.scores[keep])

    def accumulate(
        self, term_ids: Sequence[int], n_rows: int, allowed: np.ndarray | None = None, best: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)``: every row holding a term, with its summed score; rows ascending.

        ``best``: only rows that can be among the ``best`` highest scores are needed (ties included);
        a large result is then cut below a floor that the ``best``-th score cannot be under.
        """
        ip = self.bounds
        spans = [(ip[t], ip[t + 1]) for t in term_ids if ip[t + 1] > ip[t]]
        rows = [self.rows[a:b] for a, b in spans]
        scores = [self.scores[a:b] for a, b in spans]
        if allowed is not None:
            keeps = [allowed[r] for r in rows]
            rows = [r[k] for r, k in zip(rows, keeps, strict=True)]
            scores = [s[k] for s, k in zip(scores, keeps, strict=True)]
        return sum_postings(rows, scores, n_rows, best)

    def top(
        self, term_ids: Sequence[int], n_rows: int, k: int, tie: np.ndarray, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` rows holding a term (allowed only), best first, ties by ``tie[row]``: what
        ``top_k`` over ``accumulate`` gives, summed and selected in one compiled pass over the
        postings of the distinct ``term_ids`` (see ``postings_kernel``). Until a process has loaded that
        pass, a query with few postings is answered by NumPy instead (the same rows and scores): a
        one-shot command would otherwise wait longer for numba than for its search. (A process that has
        answered many queries so starts loading it in the background: ``postings_kernel.answered_by_numpy``.)"""
        if not kernel_loaded():
            ip = self.bounds
            if sum(ip[t + 1] - ip[t] for t in term_ids) <= NUMPY_UNTIL:
                answered_by_numpy()
                return top_k(*self.accumulate(term_ids, n_rows, allowed, best=k), k, tie)
        return best_rows(self.indptr, self.rows, self.scores, term_ids, n_rows, k, tie, allowed)


def sum_postings(
    rows: Sequence[np.ndarray], scores: Sequence[np.ndarray], n_rows: int, best: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)``: each row of the per-term ``rows`` parts once, with its scores summed in term
    order; rows ascending. ``best``: only rows that can be among the ``best`` highest scores are
    needed (ties included), so a large result is cut below a floor the ``best``-th score cannot be under.
    """
    if not rows:
        return np.empty(0, dtype=np.int64), np.empty(0)
    if len(rows) == 1:
        return rows[0].astype(np.int64), np.asarray(scores[0], dtype=np.float64)
    flat_rows = np.concatenate(rows)
    flat_scores = np.concatenate(scores)
    if len(flat_rows) * 32 < n_rows:  # few postings in a large index: sort them rather than scan every row
        hit, where = np.unique(flat_rows, return_inverse=True)
        return hit.astype(np.int64), np.bincount(where, weights=flat_scores)
    dense = np.bincount(flat_rows, weights=flat_scores, minlength=n_rows)
    floor = 0.0
    if best is not None and len(flat_rows) > _SAMPLE * 4 and n_rows > _SAMPLE * 4:
        # the best-th score of every k-th row is at most the best-th score of all rows
        sample = dense[:: n_rows // _SAMPLE]
        if best < len(sample):
            floor = float(np.partition(sample, len(sample) - best)[len(sample) - best])
    # every posting scores > 0, so a row with a score > 0 holds a term (a boolean nonzero is fast)
    hit = (dense >= floor if floor > 0 else dense > 0).nonzero()[0]
    return hit, dense[hit]


class PostingsScorer:
    """Scoring over per-term postings, shared by the in-memory index and the memory-mapped one.

    A subclass sets ``postings`` and ``n_docs``, supplies ``term_ids`` and calls ``_reset_views``.
    """

    postings: Postings
    n_docs: int

    def term_ids(self, tokens: Sequence[str]) -> list[int]:
        raise NotImplementedError

    def _reset_views(self) -> None:
        # per mask key: (uses, restricted postings or None, whether the mask allows every row)
        self._views: OrderedDict[Hashable, tuple[int, Postings | None, bool]] = OrderedDict()

    def _postings_for(self, allowed: np.ndarray | None, key: Hashable | None) -> tuple[Postings, np.ndarray | None]:
        """The postings to read under a mask, and the mask still to apply while reading (None: none).

        A mask seen before under ``key`` gets restricted postings (built on its second use); a mask
        that allows every row is remembered as such, so an unfiltered search never scans it again.
        """
        if allowed is None:
            return self.postings, None
        if key is None:
            return (self.postings, None) if allowed.all() else (self.postings, allowed)
        uses, view, full = self._views.pop(key, (0, None, None))
        if full is None:
            full = bool(allowed.all())
        if not full and view is None and uses >= 1:
            view = self.postings.restrict(allowed)
        self._views[key] = (uses + 1, view, full)
        if len(self._views) > _CACHED_VIEWS:
            self._views.popitem(last=False)
        if full:
            return self.postings, None
        return (view, None) if view is not None else (self.postings, allowed)

    def scores(
        self,
        tokens: Sequence[str],
        allowed: np.ndarray | None = None,
        key: Hashable | None = None,
        best: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of the allowed rows that share a term with the query (scores > 0).

        Postings of rows outside ``allowed`` are dropped before any score is summed, so a forbidden
        row is never scored. ``key`` names the mask (e.g. its scope) so that restricted postings can
        be cached for it. Rows come out in ascending order. ``best``: only the rows that can rank among
        the ``best`` highest scores are needed (every such row is returned, maybe a few more).
        """
        term_ids = self.term_ids(tokens)
        if not term_ids:
            return np.empty(0, dtype=np.int64), np.empty(0)
        postings, mask = self._postings_for(allowed, key)
        return postings.accumulate(term_ids, self.n_docs, mask, best=best)

    def top(
        self,
        tokens: Sequence[str],
        k: int,
        tie: np.ndarray,
        allowed: np.ndarray | None = None,
        key: Hashable | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` allowed rows and their scores, best first, ties by ``tie[row]`` ascending:
        the same as ``top_k`` over ``scores``, with the selection done while summing."""
        term_ids = self.term_ids(tokens)
        if not term_ids:
            return np.empty(0, dtype=np.int64), np.empty(0)
        postings, mask = self._postings_for(allowed, key)
        return postings.top(term_ids, self.n_docs, k, tie, mask)


class BM25Index(PostingsScorer):
    """A BM25 index over tokenised rows; ``k1`` saturates term frequency, ``b`` normalises length."""

    def __init__(self, docs: Iterable[Sequence[str]] = (), k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = check_params(k1, b)
        self.counts = TermCounts.from_tokens(docs)
        self._refresh()

    @classmethod
    def from_counts(cls, counts: TermCounts, k1: float = 1.5, b: float = 0.75) -> BM25Index:
        """An index over term counts built elsewhere (e.g. added batch by batch from a large store)."""
        index = cls((), k1=k1, b=b)
        index.counts = counts
        index._refresh()
        return index

    # -- updates -------------------------------------------------------------------------------------
    def add(self, docs: Iterable[Sequence[str]]) -> None:
        """Append one row per tokenised document."""
        self.counts.add(docs)
        self._refresh()

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the rows where the boolean mask ``rows`` is True."""
        self.counts.keep(np.asarray(rows, dtype=bool))
        self._refresh()

    def _refresh(self) -> None:
        tf = self.counts.matrix
        self.n_docs = int(tf.shape[0])
        self.lengths = np.asarray(tf.sum(axis=1)).ravel()
        self.avgdl = float(self.lengths.mean()) if self.n_docs else 0.0
        csc = tf.tocsc()
        csc.sort_indices()
        indptr = csc.indptr.astype(np.int64)
        rows = csc.indices.astype(np.int32)
        self.df = np.diff(indptr)
        self.idf = lucene_idf(self.n_docs, self.df)
        weights = self.weight(csc.data, self.lengths[rows])
        self.postings = Postings(indptr, rows, weights * np.repeat(self.idf, self.df))
        self._reset_views()

    def weight(self, tf: np.ndarray, length: np.ndarray) -> np.ndarray:
        """The saturated, length-normalised term frequency (before idf): ``bm25_weight.term_weight``."""
        weights: np.ndarray = term_weight(tf, length, self.k1, self.b, self.avgdl)
        return weights

    # -- queries -------------------------------------------------------------------------------------
    def term_ids(self, tokens: Sequence[str]) -> list[int]:
        """The distinct known terms of a query, in first-seen order (a repeated term counts once)."""
        found = map(self.counts.vocab.get, tokens)
        return list(dict.fromkeys([t for t in found if t is not None]))

    def score_all(self, tokens: Sequence[str]) -> np.ndarray:
        """Every row's score (zero where no query term occurs): for tests and explanations."""
        rows, scores = self.postings.accumulate(self.term_ids(tokens), self.n_docs)
        out = np.zeros(self.n_docs)
        out[rows] = scores
        return out

    def explain(self, tokens: Sequence[str], row: int) -> list[TermScore]:
        """Each distinct known query term's tf, df, idf and contribution to ``row``'s score."""
        if not 0 <= row < self.n_docs:
            raise ValueError(f"row: must be in [0, {self.n_docs}), got {row}")
        p = self.postings
        out = []
        for t in self.term_ids(tokens):
            lo, hi = int(p.indptr[t]), int(p.indptr[t + 1])
            pos = lo + int(np.searchsorted(p.rows[lo:hi], row))
            found = pos < hi and int(p.rows[pos]) == row
            tf = int(self.counts.matrix[row, t]) if found else 0
            contribution = float(p.scores[pos]) if found else 0.0
            out.append(TermScore(self.counts.terms[t], tf, int(self.df[t]), float(self.idf[t]), contribution))
        return out
