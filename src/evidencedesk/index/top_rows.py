"""top_k: the best k of some rows by score, ties broken by a per-row key (chunk id order).

Shared by the BM25 postings (which select while they sum) and every in-memory searcher, so that a
result never depends on row order.
"""

from __future__ import annotations

import numpy as np

_SAMPLE = 256  # rows sampled to find a floor under the k-th best score
_SAMPLED = 4 * _SAMPLE  # ... when more rows than this compete


def top_k(rows: np.ndarray, scores: np.ndarray, k: int, tie: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of ``rows`` by score (descending), ties broken by ``tie[row]`` (ascending).

    Only the given rows are partitioned (never a mostly-zero array over the whole corpus).
    """
    if k < 1:
        raise ValueError(f"k: must be at least 1, got {k}")
    if len(rows) > _SAMPLED and k * 16 < len(rows):
        # The k-th best score of any subset is at most the k-th best of all rows, so every row of the
        # top k (ties included) scores at least that much: keep only those before the exact selection.
        sample = scores[:: len(rows) // _SAMPLE]
        floor = np.partition(sample, len(sample) - k)[len(sample) - k]
        keep = (scores >= floor).nonzero()[0]
        rows, scores = rows[keep], scores[keep]
    if len(rows) > k:
        best = np.argpartition(-scores, k - 1)[:k]
        kth = scores[best].min()
        if np.count_nonzero(scores >= kth) > k:
            # rows tied with the k-th score lie on both sides of the cut: keep the lowest tie keys
            level = np.flatnonzero(scores == kth)
            level = level[np.argsort(tie[rows[level]], kind="stable")]
            best = np.concatenate([np.flatnonzero(scores > kth), level])[:k]
        rows, scores = rows[best], scores[best]
    order = np.lexsort((tie[rows], -scores))
    return rows[order], scores[order]
