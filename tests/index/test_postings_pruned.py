"""The pruned BM25 pass over raw term frequencies returns exactly what the full pass returns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from evidencedesk.index import postings_kernel
from evidencedesk.index.bm25_segment import query_idf
from evidencedesk.index.postings_kernel import _scratch, best_rows_tf, kernel


def _segment(seed: int, n_rows: int = 3_000, n_terms: int = 400) -> tuple[sp.csc_matrix, np.ndarray]:
    """Raw counts with Zipf-like term frequencies (a few very common terms, many rare ones) and
    many duplicated rows, so that scores tie."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_terms + 1) ** 0.9
    popularity /= popularity.sum()
    lengths = rng.integers(3, 40, size=n_rows)
    rows = np.repeat(np.arange(n_rows), lengths)
    cols = rng.choice(n_terms, size=len(rows), p=popularity)
    counts = sp.coo_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n_rows, n_terms)).tocsr()
    counts.sum_duplicates()
    dense = counts.toarray()
    dense[n_rows // 2 : n_rows // 2 + 200] = dense[:200]  # 200 rows repeated: equal scores, tie keys decide
    counts = sp.csr_matrix(dense)
    csc = sp.csc_matrix(counts)
    csc.sort_indices()
    return csc, np.asarray(counts.sum(axis=1)).ravel()


def _run(name: str, csc: sp.csc_matrix, terms: list[int], idf: list[float], norms: np.ndarray, k: int,
         tie: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    acc, touched = _scratch(len(norms))
    mask = allowed if allowed is not None else np.ones(1, dtype=bool)
    indptr, rows, tf = csc.indptr.astype(np.int64), csc.indices.astype(np.int32), csc.data.astype(np.int32)
    found: tuple[np.ndarray, np.ndarray] = getattr(kernel(), name)(
        indptr, rows, tf, np.asarray(terms, dtype=np.int64), np.asarray(idf), 1.5, norms, k, tie, mask,
        allowed is not None, acc, touched,
    )  # fmt: skip
    assert not acc.any(), "the scratch scores must be left zeroed"
    return found


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_pass_equals_the_full_pass(seed: int) -> None:
    csc, lengths = _segment(seed)
    n_rows, n_terms = csc.shape
    rng = np.random.default_rng(100 + seed)
    norms = 1.5 * (1 - 0.75 + 0.75 * lengths / lengths.mean())
    tie = rng.permutation(n_rows).astype(np.int64)
    df = np.diff(csc.indptr)
    masks = [None, rng.random(n_rows) < 0.1, rng.random(n_rows) < 0.5]
    checked = 0
    for _ in range(60):
        n_q = int(rng.integers(2, 9))
        # mix common and rare terms, as real queries do
        terms = sorted(set(rng.choice(n_terms, size=n_q, replace=False).tolist()) | {int(rng.integers(0, 5))})
        rng.shuffle(terms)
        idf = query_idf(n_rows, df[terms].tolist())
        for k in (1, 10, 100, 5_000):
            for allowed in masks:
                args = (csc, terms, idf, norms, k, tie, allowed)
                full_rows, full_scores = _run("best_rows_tf", *args)
                rows, scores = _run("best_rows_tf_pruned", *args)
                assert rows.tolist() == full_rows.tolist()
                assert scores.tolist() == full_scores.tolist()  # bit for bit: same summation order
                checked += 1
    assert checked == 60 * 4 * 3


def test_large_queries_take_the_pruned_pass_with_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    csc, lengths = _segment(7)
    n_rows = csc.shape[0]
    norms = 1.5 * (1 - 0.75 + 0.75 * lengths / lengths.mean())
    tie = np.arange(n_rows, dtype=np.int64)
    indptr, rows, tf = csc.indptr.astype(np.int64), csc.indices.astype(np.int32), csc.data.astype(np.int32)
    terms = [0, 1, 57, 300]
    idf = query_idf(n_rows, np.diff(csc.indptr)[terms].tolist())
    full = best_rows_tf(indptr, rows, tf, terms, idf, 1.5, norms, 10, tie)
    monkeypatch.setattr(postings_kernel, "PRUNE_FROM", 1)  # every query with two terms or more is pruned
    pruned = best_rows_tf(indptr, rows, tf, terms, idf, 1.5, norms, 10, tie)
    assert pruned[0].tolist() == full[0].tolist() and pruned[1].tolist() == full[1].tolist()
    assert len(full[0]) == 10
