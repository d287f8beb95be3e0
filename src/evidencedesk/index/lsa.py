"""LSA: a truncated SVD of the TF-IDF matrix; rows and queries compared by cosine in that space.

The rank is capped at ``min(rank, n_docs - 1, n_terms - 1)``: a truncated SVD needs fewer
components than either side of the matrix, and more would add no information anyway. With fewer
than two rows or two terms there is nothing to reduce and the TF-IDF vectors are used as they are.

The SVD is refitted after every update (the factors depend on every row). It is fitted on the
rows sorted by chunk id and the columns sorted by term with a fixed seed, so an updated index
gives the same vectors as a fresh build over the same chunks, whatever order they arrived in.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from numbers import Integral

import numpy as np

from evidencedesk.index.tfidf import Analyzer, TfidfIndex

DEFAULT_RANK = 100
SEED = 0
SMALL = 5000  # rows below which the SVD runs on one BLAS thread


def capped_rank(rank: int, n_docs: int, n_terms: int) -> int:
    """The rank actually used (0 = no reduction possible)."""
    return max(0, min(rank, n_docs - 1, n_terms - 1))


def _unit_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return unit


class LsaIndex:
    """Unit vectors of every row in the reduced space, and the map from term weights into it."""

    def __init__(
        self,
        texts: Sequence[str] = (),
        ids: Sequence[str] = (),
        rank: int = DEFAULT_RANK,
        analyzer: Analyzer | None = None,
    ) -> None:
        if not isinstance(rank, Integral) or isinstance(rank, bool) or rank < 1:
            raise ValueError(f"rank: must be an integer >= 1, got {rank!r}")
        if len(texts) != len(ids):
            raise ValueError(f"ids: {len(ids)} ids for {len(texts)} texts")
        self.rank: int = int(rank)
        self.ids: list[str] = list(ids)
        self.tfidf: TfidfIndex = TfidfIndex(texts, analyzer)
        self.refit()

    def add(self, texts: Sequence[str], ids: Sequence[str], refit: bool = True) -> None:
        """Append rows; ``refit=False`` defers the SVD to an explicit ``refit()`` (batching updates)."""
        if len(texts) != len(ids):
            raise ValueError(f"ids: {len(ids)} ids for {len(texts)} texts")
        self.tfidf.add(texts)
        self.ids.extend(ids)
        if refit:
            self.refit()

    def keep(self, rows: np.ndarray, refit: bool = True) -> None:
        """Keep the rows where the boolean mask is True; ``refit=False`` defers the SVD."""
        rows = np.asarray(rows, dtype=bool)
        self.tfidf.keep(rows)
        self.ids = [i for i, k in zip(self.ids, rows, strict=True) if k]
        if refit:
            self.refit()

    def refit(self) -> None:
        """Fit the SVD to the current TF-IDF matrix (rank capped, canonical order, fixed seed)."""
        x = self.tfidf.matrix
        n_docs, n_terms = x.shape
        self.used_rank = capped_rank(self.rank, n_docs, n_terms)
        if self.used_rank == 0:
            self.components = None  # identity: the TF-IDF space itself
            self.vectors = _unit_rows(x.toarray())
            return
        row_order = np.array(sorted(range(n_docs), key=self.ids.__getitem__), dtype=np.int64)
        col_order = np.array(sorted(range(n_terms), key=self.tfidf.counts.terms.__getitem__), dtype=np.int64)
        canonical = x[row_order][:, col_order]
        from sklearn.decomposition import TruncatedSVD  # scikit-learn loads only when LSA is used
        from threadpoolctl import threadpool_limits

        svd = TruncatedSVD(n_components=self.used_rank, algorithm="randomized", random_state=SEED)
        # On a small matrix, BLAS threads cost more than they save (and far more on a busy machine).
        # When every row is the same (total variance 0), scikit-learn divides by zero for its
        # explained-variance ratio, which is not used here; the components are still valid.
        with (
            threadpool_limits(limits=1, user_api="blas") if n_docs < SMALL else nullcontext(),
            np.errstate(divide="ignore", invalid="ignore"),
        ):
            svd.fit(canonical)
        components = np.empty_like(svd.components_)
        components[:, col_order] = svd.components_  # back to this index's own column order
        self.components = components
        self.vectors = _unit_rows(np.asarray(x @ components.T))

    def query_vector(self, query: str) -> np.ndarray | None:
        """The query's unit vector in the reduced space, or None when it shares no term."""
        ids, w = self.tfidf.query_vector(query)
        if not len(ids):
            return None
        if self.components is None:
            v = np.zeros(self.tfidf.n_terms)
            v[ids] = w
        else:
            v = self.components[:, ids] @ w
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else None

    def scores(self, query: str, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosines)`` of the allowed rows with a positive cosine; rows ascending."""
        q = self.query_vector(query)
        if q is None:
            return np.empty(0, dtype=np.int64), np.empty(0)
        rows = np.flatnonzero(allowed) if allowed is not None else np.arange(len(self.vectors))
        cos = self.vectors[rows] @ q
        hit = cos > 0
        return rows[hit], cos[hit]
