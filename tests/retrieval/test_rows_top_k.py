"""top_k: the best k rows by score, ties broken by the tie key, whatever the number of rows."""

from __future__ import annotations

import numpy as np
import pytest

from evidencedesk.retrieval.rows import top_k


def reference(rows: np.ndarray, scores: np.ndarray, k: int, tie: np.ndarray) -> list[int]:
    return [int(r) for _, _, r in sorted(zip(-scores, tie[rows], rows, strict=True))[:k]]


@pytest.mark.parametrize("n", [5, 300, 1500, 20_000])
@pytest.mark.parametrize("k", [1, 10, 100])
def test_matches_a_full_sort_with_many_ties(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    rows = np.sort(rng.choice(50_000, size=n, replace=False)).astype(np.int64)
    scores = rng.integers(1, 40, size=n).astype(np.float64) / 7  # few distinct values: ties at the cut
    tie = rng.permutation(50_000)
    got_rows, got_scores = top_k(rows, scores, k, tie)
    assert got_rows.tolist() == reference(rows, scores, k, tie)
    assert got_scores.tolist() == sorted(scores.tolist(), reverse=True)[: min(k, n)]


def test_skewed_scores_keep_the_true_best() -> None:
    # the sampled floor comes from every 8th row; the best rows sit between the sampled ones
    n = 4096
    scores = np.ones(n)
    scores[1::8] = 50.0 + np.arange(n // 8)
    rows = np.arange(n, dtype=np.int64)
    got_rows, _ = top_k(rows, scores, 10, np.arange(n))
    assert got_rows.tolist() == reference(rows, scores, 10, np.arange(n))
