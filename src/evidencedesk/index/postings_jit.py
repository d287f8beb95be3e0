"""The numba-compiled functions behind ``postings_kernel`` (imported only when a search first needs them).

They live at module level so that numba's on-disk cache finds them again in the next process: a
function defined inside another one is compiled afresh every time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
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
def select(acc: Any, touched: Any, n: int, k: int, tie: Any) -> tuple[Any, Any]:
    """The best ``k`` of the ``n`` touched rows by ``acc`` (ties: lower ``tie`` first), best first;
    leaves ``acc`` zeroed."""
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
    """Postings that hold final scores (the in-memory index): sum them per row, keep the best k."""
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
    return select(acc, touched, n, k, tie)


@njit(cache=True, nogil=True)
def best_rows_tf(
    indptr: Any,
    rows: Any,
    tf: Any,
    terms: Any,
    idf: Any,
    k1_plus_1: float,
    norms: Any,
    k: int,
    tie: Any,
    allowed: Any,
    use_mask: bool,
    acc: Any,
    touched: Any,
) -> tuple[Any, Any]:
    """Postings that hold raw term frequencies (a segment): each posting's BM25 score is made here, as
    NumPy makes it (``tf * (k1 + 1) / (tf + norm) * idf``, in that order), then summed per row."""
    n = 0
    for j in range(len(terms)):
        t = terms[j]
        w = idf[j]
        for p in range(indptr[t], indptr[t + 1]):
            r = rows[p]
            if use_mask and not allowed[r]:
                continue
            f = np.float64(tf[p])
            score = f * k1_plus_1 / (f + norms[r]) * w
            # the same bookkeeping as best_rows, written out: a shared helper measured 3x slower here
            if acc[r] == 0.0:  # every posting scores > 0: zero means not reached yet
                touched[n] = r
                n += 1
            acc[r] += score
    return select(acc, touched, n, k, tie)
