"""Both ways the BM25 kernels find the rows a query reached (note each row as a posting reaches it,
or sum densely and scan every row) give the same rows, scores and tie order as a NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

from evidencedesk.index.bm25_weight import saturate
from evidencedesk.index.postings_kernel import _scratch, kernel
from tests.index.test_postings_pruned import _segment


def _reference(csc, terms, weights, allowed, k, tie):  # type: ignore[no-untyped-def]
    """Sum each term's posting weights per row in the query's term order, then rank by score
    (descending) and tie key (ascending)."""
    acc = np.zeros(csc.shape[0])
    for t in terms:
        lo, hi = csc.indptr[t], csc.indptr[t + 1]
        rows = csc.indices[lo:hi]
        acc[rows] += weights[lo:hi]
    if allowed is not None:
        acc[~allowed] = 0.0
    reached = np.flatnonzero(acc)
    order = np.lexsort((tie[reached], -acc[reached]))[:k]
    return reached[order], acc[reached[order]]


@pytest.mark.parametrize("seed", [0, 1])
def test_dense_and_sparse_passes_match_the_reference(seed: int) -> None:
    csc, lengths = _segment(seed, n_rows=4_000, n_terms=6_000)
    n_rows, n_terms = csc.shape
    rng = np.random.default_rng(200 + seed)
    norms = 1.5 * (1 - 0.75 + 0.75 * lengths / lengths.mean())
    tie = rng.permutation(n_rows).astype(np.int64)
    indptr = csc.indptr.astype(np.int64)
    rows = csc.indices.astype(np.int32)
    tf = csc.data.astype(np.int32)
    df = np.diff(indptr)
    compiled = kernel()
    paths = set()
    for n in range(80):
        # rare terms alone (few postings: the sparse pass), or with the most common ones (the dense pass)
        rare = rng.choice(np.flatnonzero((df > 0) & (df < 60)), size=3, replace=False).tolist()
        terms = np.array(rare + ([0, 1, 2] if n % 2 else []), dtype=np.int64)
        idf = rng.uniform(0.5, 3.0, size=len(terms))
        allowed = [None, rng.random(n_rows) < 0.3][n % 4 // 2]
        mask = allowed if allowed is not None else np.ones(1, dtype=bool)
        paths.add(bool(compiled.dense_pass(indptr, terms, n_rows)))
        k = int(rng.integers(1, 25))
        # postings holding final scores (the in-memory index)
        final = np.empty(len(tf))
        for j, t in enumerate(terms):
            lo, hi = indptr[t], indptr[t + 1]
            f = tf[lo:hi].astype(np.float64)
            final[lo:hi] = saturate(f, norms[rows[lo:hi]], 1.5) * idf[j]  # the NumPy side of the formula
        acc, touched = _scratch(n_rows)
        got = compiled.best_rows(indptr, rows, final, terms, k, tie, mask, allowed is not None, acc, touched)
        assert not acc.any(), "the scratch scores must be left zeroed"
        want = _reference(csc, terms, final, allowed, k, tie)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        # postings holding raw term frequencies (a segment): the same rows and scores
        got_tf = compiled.best_rows_tf(
            indptr, rows, tf, terms, idf, 1.5, norms, k, tie, mask, allowed is not None, acc, touched
        )
        assert not acc.any()
        np.testing.assert_array_equal(got_tf[0], want[0])
        np.testing.assert_array_equal(got_tf[1], want[1])
    assert paths == {True, False}, "the queries must take both passes"
