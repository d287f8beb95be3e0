"""The compiled inner loop of BM25 search: sum a query's postings and keep the best k in one pass.

NumPy needs a dozen array passes per query (concatenate, bincount over every row, a partition, a
nonzero), each with its own call overhead; on a small index that overhead is most of a query's
cost, and on a large one the passes over every row are. This kernel (compiled by numba on first
use, cached on disk) reads only the query terms' postings, accumulates into a scratch array that it
leaves zeroed again, and keeps the best k in a binary heap, sorted best first before it returns.
Ties are broken as ``top_k`` breaks them: the lower ``tie`` key wins. Sums are made in the same
order as NumPy's (term by term), so the scores are bit-for-bit those of ``Postings.accumulate``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

_local = threading.local()  # per thread: scratch arrays, grown to the largest index seen
_NO_MASK = np.ones(1, dtype=bool)  # passed (and never read) when every row is allowed


def _compile() -> Any:
    from numba import njit

    @njit(cache=True, nogil=True)
    def worse(s_a: float, t_a: int, s_b: float, t_b: int) -> bool:
        """Whether (score a, tie a) ranks below (score b, tie b)."""
        return s_a < s_b or (s_a == s_b and t_a > t_b)

    @njit(cache=True, nogil=True)
    def sift_down(h_s: Any, h_r: Any, h_t: Any, size: int, i: int) -> None:
        while True:
            low = i
            left = 2 * i + 1
            right = left + 1
            if left < size and worse(h_s[left], h_t[left], h_s[low], h_t[low]):
                low = left
            if right < size and worse(h_s[right], h_t[right], h_s[low], h_t[low]):
                low = right
            if low == i:
                return
            h_s[i], h_s[low] = h_s[low], h_s[i]
            h_r[i], h_r[low] = h_r[low], h_r[i]
            h_t[i], h_t[low] = h_t[low], h_t[i]
            i = low

    @njit(cache=True, nogil=True)
    def best_rows(
        indptr: Any,
        rows: Any,
        scores: Any,
        terms: Any,
        k: int,
        tie: Any,
        allowed: Any,
        use_mask: bool,
        acc: Any,
        touched: Any,
    ) -> tuple[Any, Any]:
        n = 0
        for t in terms:
            for p in range(indptr[t], indptr[t + 1]):
                r = rows[p]
                if use_mask and not allowed[r]:
                    continue
                if acc[r] == 0.0:  # every posting scores > 0: zero means not reached yet
                    touched[n] = r
                    n += 1
                acc[r] += scores[p]
        size = min(k, n)
        h_s = np.empty(size, np.float64)
        h_r = np.empty(size, np.int64)
        h_t = np.empty(size, np.int64)
        m = 0
        for j in range(n):
            r = touched[j]
            s = acc[r]
            acc[r] = 0.0
            tr = tie[r]
            if m < size:  # fill, then heapify once full
                h_s[m] = s
                h_r[m] = r
                h_t[m] = tr
                m += 1
                if m == size:
                    for i in range(size // 2 - 1, -1, -1):
                        sift_down(h_s, h_r, h_t, size, i)
            elif worse(h_s[0], h_t[0], s, tr):  # better than the worst kept: replace it
                h_s[0] = s
                h_r[0] = r
                h_t[0] = tr
                sift_down(h_s, h_r, h_t, size, 0)
        for end in range(m - 1, 0, -1):  # heap sort: the worst goes last, so the rows end up best first
            h_s[0], h_s[end] = h_s[end], h_s[0]
            h_r[0], h_r[end] = h_r[end], h_r[0]
            h_t[0], h_t[end] = h_t[end], h_t[0]
            sift_down(h_s, h_r, h_t, end, 0)
        return h_r[:m], h_s[:m]

    return best_rows


_kernel: Any = None
_kernel_lock = threading.Lock()


def kernel() -> Any:
    """The compiled function (compiled, or loaded from numba's cache, once per process)."""
    global _kernel
    if _kernel is None:
        with _kernel_lock:
            if _kernel is None:
                _kernel = _compile()
    return _kernel


def _scratch(n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    acc = getattr(_local, "acc", None)
    if acc is None or len(acc) < n_rows:
        _local.acc = acc = np.zeros(max(n_rows, 1), dtype=np.float64)
        _local.touched = np.empty(max(n_rows, 1), dtype=np.int64)
    return acc, _local.touched


def best_rows(
    indptr: np.ndarray,
    rows: np.ndarray,
    scores: np.ndarray,
    term_ids: Sequence[int],
    n_rows: int,
    k: int,
    tie: np.ndarray,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)`` of the best ``k`` rows holding a query term (allowed only), best first,
    ties by ``tie[row]`` ascending. ``term_ids`` must be distinct."""
    acc, touched = _scratch(n_rows)
    terms = np.asarray(term_ids, dtype=np.int64)
    mask = allowed if allowed is not None else _NO_MASK
    found: tuple[np.ndarray, np.ndarray] = (_kernel or kernel())(
        indptr, rows, scores, terms, k, tie, mask, allowed is not None, acc, touched
    )
    return found


__all__ = ["best_rows", "kernel"]
