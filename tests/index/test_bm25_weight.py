"""The BM25 term weight has one home (``index.bm25_weight``): the in-memory index, the compiled
segment kernels and the PostgreSQL encoder all give exactly its numbers (the SQL copy is pinned in
tests/backends/test_bm25_weight_pg.py)."""

from __future__ import annotations

import numpy as np
import pytest

from evidencedesk.index.bm25 import BM25Index
from evidencedesk.index.bm25_weight import check_params, length_norms, saturate, term_weight
from evidencedesk.index.postings_kernel import best_rows_tf


def test_the_formula_by_hand() -> None:
    # tf 2 in a chunk twice the average length, k1 1.2, b 0.75: 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 2))
    assert term_weight(2.0, 20.0, 1.2, 0.75, 10.0) == pytest.approx(4.4 / 4.1, rel=1e-15)
    assert float(term_weight(3.0, 7.0, 1.2, 0.75, 0.0)) == pytest.approx(3 * 2.2 / (3 + 1.2), rel=1e-15)  # no avgdl
    assert saturate(2.0, 1.2 * (0.25 + 0.75 * 2), 1.2) == term_weight(2.0, 20.0, 1.2, 0.75, 10.0)
    per_row = length_norms(np.array([5.0, 10.0]), 1.5, 0.75, np.array([10.0, 5.0]))  # an average per row
    assert per_row.tolist() == [1.5 * (0.25 + 0.75 * 0.5), 1.5 * (0.25 + 0.75 * 2.0)]


@pytest.mark.parametrize(("k1", "b", "field"), [(-1.0, 0.5, "k1"), (float("nan"), 0.5, "k1"), (True, 0.5, "k1"),
                                               (1.2, 1.5, "b"), (1.2, "x", "b")])  # fmt: skip
def test_bad_parameters_name_the_parameter(k1: object, b: object, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        check_params(k1, b)


def _corpus(seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(60)]
    p = 1.0 / np.arange(1, 61) ** 0.8
    return [list(rng.choice(words, size=int(rng.integers(1, 30)), p=p / p.sum())) for _ in range(400)]


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (0.9, 0.4), (2.0, 1.0), (1.2, 0.0)])
def test_the_in_memory_index_and_the_compiled_kernel_score_alike_bit_for_bit(k1: float, b: float) -> None:
    """The in-memory index stores NumPy's ``term_weight * idf``; the numba kernel computes each posting's
    weight from raw counts with the compiled ``saturate``: the scores must be the same floats."""
    index = BM25Index(_corpus(7), k1=k1, b=b)
    assert np.array_equal(index.weight(np.array([1.0, 3.0]), np.array([4.0, 40.0])),
                          term_weight(np.array([1.0, 3.0]), np.array([4.0, 40.0]), k1, b, index.avgdl))  # fmt: skip
    csc = index.counts.matrix.tocsc()
    csc.sort_indices()
    indptr, rows, tf = csc.indptr.astype(np.int64), csc.indices.astype(np.int32), csc.data.astype(np.int32)
    norms = length_norms(index.lengths, k1, b, index.avgdl)
    tie = np.arange(index.n_docs, dtype=np.int64)
    rng = np.random.default_rng(1)
    for _ in range(30):
        query = [f"w{i}" for i in rng.integers(0, 60, size=int(rng.integers(1, 6)))]
        terms = index.term_ids(query)
        found_rows, found_scores = best_rows_tf(indptr, rows, tf, terms, index.idf[terms], k1, norms, 50, tie)
        expected = index.score_all(query)
        assert len(found_rows) > 0
        assert np.array_equal(found_scores, expected[found_rows]), query


def test_the_postgres_encoder_uses_the_same_weight() -> None:
    pytest.importorskip("pgvector", reason="the pgvector package is not installed")
    from evidencedesk.backends.postgres.bm25_blocks import weights
    from evidencedesk.backends.postgres.bm25_sparse import BM25Encoder

    enc = BM25Encoder(k1=1.1, b=0.6)
    tf, dl = np.array([1, 2, 7, 1]), np.array([3, 12, 40, 1])
    expected = term_weight(tf.astype(np.float64), dl.astype(np.float64), 1.1, 0.6, 9.5)
    assert [enc.weight(int(f), int(d), 9.5) for f, d in zip(tf, dl, strict=True)] == expected.tolist()
    assert np.array_equal(weights(tf, dl, 1.1, 0.6, 9.5), expected.astype(np.float32))
