"""The SQL copy of the BM25 term weight (``bm25_weights`` in the store's schema, which the server runs
when it re-encodes every chunk) gives the numbers of ``index.bm25_weight.term_weight``, as float32
sparse vectors store them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from evidencedesk.index.bm25_weight import term_weight


@pytest.mark.parametrize(("k1", "b", "avgdl"), [(1.5, 0.75, 11.3), (0.9, 0.4, 3.0), (2.0, 1.0, 250.0),
                                                (1.2, 0.0, 7.7), (1.5, 0.75, 0.0)])  # fmt: skip
def test_sql_weights_equal_the_python_formula(
    make_store: Callable[..., Any], k1: float, b: float, avgdl: float
) -> None:
    store = make_store()
    rng = np.random.default_rng(3)
    for dl in (1, 4, 17, 90, 600):
        tfs = sorted(set(rng.integers(1, min(dl, 30) + 1, size=6).tolist()))
        terms = list(range(1, len(tfs) + 1))
        with store.pool.connection() as conn:
            row = conn.execute(
                "SELECT bm25_weights(%s::integer[], %s::integer[], %s, %s, %s, %s, %s)",
                (terms, tfs, dl, k1, b, avgdl, 1000),
            ).fetchone()
        assert row is not None
        stored = np.asarray(row[0].values(), dtype=np.float32)
        expected = term_weight(np.asarray(tfs, dtype=np.float64), float(dl), k1, b, avgdl).astype(np.float32)
        assert row[0].indices() == [t - 1 for t in terms]
        assert np.array_equal(stored, expected), (dl, tfs)
