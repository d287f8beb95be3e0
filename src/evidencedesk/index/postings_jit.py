"""The numba-compiled functions behind ``postings_kernel`` (imported only when a search first needs them).

They live at module level so that numba's on-disk cache finds them again in the next process: a
function defined inside another one is compiled afresh every time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from evidencedesk.index.bm25_weight import saturate
from evidencedesk.index.min_heap_jit import replace_min

# The BM25 term weight of ``bm25_weight``, compiled from the same function (one formula for NumPy and numba).
saturate_jit = njit(cache=True, nogil=True, inline="always")(saturate)


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
        if m < size:  # fill, then heapify once full
            h_s[m] = s
            h_r[m] = r
            h_t[m] = tie[r]
            m += 1
            if m == size:
                for i in range(size // 2 - 1, -1, -1):
                    sift_down(h_s, h_r, h_t, size, i)
        elif s >= h_s[0] and worse(h_s[0], h_t[0], s, tie[r]):  # better than the worst kept: replace it
            h_s[0] = s
            h_r[0] = r
            h_t[0] = tie[r]
            sift_down(h_s, h_r, h_t, size, 0)
    for end in range(m - 1, 0, -1):  # heap sort: the worst goes last, so the rows end up best first
        h_s[0], h_s[end] = h_s[end], h_s[0]
        h_r[0], h_r[end] = h_r[end], h_r[0]
        h_t[0], h_t[end] = h_t[end], h_t[0]
        sift_down(h_s, h_r, h_t, end, 0)
    return h_r[:m], h_s[:m]


# Two ways to find the rows a query reached. Sparse: note each row the first time a posting reaches
# it (a branch per posting), then select among the noted rows. Dense: add every posting without
# the branch, then scan every row of the index for a nonzero sum. The dense pass is the faster one
# when the query's postings are not much fewer than the index's rows (a small index, or common
# terms). On SciFact (5,183 rows, about 3,700 postings a query) the dense pass with the branch-free
# ``reached`` and the heap's early test took the kernel from 42 to 23 us a query.
DENSE_ROWS_PER_POSTING = 4


@njit(cache=True, nogil=True)
def dense_pass(indptr: Any, terms: Any, n_rows: int) -> bool:
    """Whether to sum densely: the index has at most ``DENSE_ROWS_PER_POSTING`` rows per posting read."""
    total = 0
    for t in terms:
        total += indptr[t + 1] - indptr[t]
    return n_rows <= DENSE_ROWS_PER_POSTING * total


@njit(cache=True, nogil=True)
def reached(acc: Any, n_rows: int, touched: Any) -> int:
    """Write the rows with a nonzero sum into ``touched`` in ascending order; return how many.
    Branch-free: about half the rows are reached, in no pattern a branch predictor could learn."""
    n = 0
    for r in range(n_rows):
        touched[n] = r
        n += acc[r] != 0.0  # every posting scores > 0
    return n


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
    dense = dense_pass(indptr, terms, len(tie))
    n = 0
    for t in terms:
        for p in range(indptr[t], indptr[t + 1]):
            r = rows[p]
            if use_mask and not allowed[r]:
                continue
            if not dense and acc[r] == 0.0:  # every posting scores > 0: zero means not reached yet
                touched[n] = r
                n += 1
            acc[r] += scores[p]
    if dense:
        n = reached(acc, len(tie), touched)
    return select(acc, touched, n, k, tie)


@njit(cache=True, nogil=True, inline="always")
def add_term_tf(
    indptr: Any,
    rows: Any,
    tf: Any,
    t: int,
    w: float,
    k1: float,
    norms: Any,
    allowed: Any,
    use_mask: bool,
    note: bool,
    acc: Any,
    touched: Any,
    n: int,
) -> int:
    """Add the postings of term ``t`` (raw term frequencies, term weight ``w``) to ``acc``, each posting's
    BM25 score made as NumPy makes it (``saturate(tf, norm, k1) * idf``, in that order). With ``note``,
    each row reached for the first time is written to ``touched[n]`` and counted: returns the new count.
    Inlined into both passes over raw term frequencies (full and pruned), so it costs no call."""
    for p in range(indptr[t], indptr[t + 1]):
        r = rows[p]
        if use_mask and not allowed[r]:
            continue
        f = np.float64(tf[p])
        score = saturate_jit(f, norms[r], k1) * w
        if note and acc[r] == 0.0:  # every posting scores > 0: zero means not reached yet
            touched[n] = r
            n += 1
        acc[r] += score
    return n


@njit(cache=True, nogil=True)
def best_rows_tf(
    indptr: Any,
    rows: Any,
    tf: Any,
    terms: Any,
    idf: Any,
    k1: float,
    norms: Any,
    k: int,
    tie: Any,
    allowed: Any,
    use_mask: bool,
    acc: Any,
    touched: Any,
) -> tuple[Any, Any]:
    """Postings that hold raw term frequencies (a segment): each posting's BM25 score is made here, as
    NumPy makes it (``saturate(tf, norm, k1) * idf``, in that order), then summed per row."""
    dense = dense_pass(indptr, terms, len(norms))
    n = 0
    for j in range(len(terms)):
        n = add_term_tf(indptr, rows, tf, terms[j], idf[j], k1, norms, allowed, use_mask, not dense, acc, touched, n)
    if dense:
        n = reached(acc, len(norms), touched)
    return select(acc, touched, n, k, tie)


# -- pruned search over raw term frequencies (large segments) -----------------------------------------
# The full pass above reads every posting of every query term. On a large segment most of that work
# goes to common terms whose postings cannot lift a row into the top k. The pruned pass reads the
# terms in order of their score bound (idf x (k1 + 1), which no posting's score reaches: norms > 0),
# rarest first, and stops reading whole terms once the k-th best partial sum beats what every unread
# term together could add to a row it has not seen (MaxScore). The rows already seen that could
# still reach the top k are then completed term by term, by search in the remaining postings, and
# dropped as soon as they cannot. The survivors are scored afresh in the query's term order, so the
# scores are the full pass's, bit for bit, and so is the ranking. Pruning compares with a margin
# (_SLACK) far wider than the rounding differences between summation orders.

_SLACK = 1e-9


@njit(cache=True, nogil=True)
def kth_largest(values: Any, n: int, k: int) -> float:
    """The ``k``-th largest of ``values[:n]`` (-1.0 when there are fewer than ``k``)."""
    if n < k:
        return -1.0
    heap = np.sort(values[:k])  # ascending: a valid min-heap
    for j in range(k, n):
        if values[j] > heap[0]:
            replace_min(heap, k, values[j])
    return float(heap[0])


@njit(cache=True, nogil=True)
def kth_largest_at(acc: Any, touched: Any, n: int, k: int) -> float:
    """The ``k``-th largest ``acc[r]`` over the ``n`` rows in ``touched`` (-1.0 when fewer)."""
    if n < k:
        return -1.0
    values = np.empty(n, np.float64)
    for j in range(n):
        values[j] = acc[touched[j]]
    return kth_largest(values, n, k)


@njit(cache=True, nogil=True)
def search_sorted(rows: Any, lo: int, hi: int, r: int) -> int:
    """The first position in ``rows[lo:hi]`` (ascending) holding a row >= ``r`` (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if rows[mid] < r:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def gallop(rows: Any, lo: int, hi: int, r: int) -> int:
    """``search_sorted`` for a row expected near ``lo``: doubling steps forward, then bisection."""
    step = 1
    while lo + step < hi and rows[lo + step] < r:
        lo += step
        step <<= 1
    return search_sorted(rows, lo, min(lo + step + 1, hi), r)


@njit(cache=True, nogil=True)
def cut_below(theta: float) -> float:
    return theta - _SLACK * max(1.0, theta)


@njit(cache=True, nogil=True)
def best_rows_tf_pruned(
    indptr: Any,
    rows: Any,
    tf: Any,
    terms: Any,
    idf: Any,
    k1: float,
    norms: Any,
    k: int,
    tie: Any,
    allowed: Any,
    use_mask: bool,
    acc: Any,
    touched: Any,
) -> tuple[Any, Any]:
    """What ``best_rows_tf`` returns, reading fewer postings (see the comment above)."""
    m = len(terms)
    order = np.argsort(-idf, kind="mergesort")
    bound = np.empty(m + 1, np.float64)  # bound[j]: the most the terms order[j:] can add to a row
    bound[m] = 0.0
    for j in range(m - 1, -1, -1):
        bound[j] = bound[j + 1] + idf[order[j]] * (k1 + 1)
    # 1. whole terms, best bound first, while an unseen row could still reach the k-th best
    n = 0
    theta = -1.0
    read = 0
    for jj in range(m):
        if jj > 0 and n >= k and bound[0] - bound[jj] > bound[jj]:  # (else no partial sum can beat bound[jj])
            theta = kth_largest_at(acc, touched, n, k)
            if bound[jj] < cut_below(theta):
                break
        j = order[jj]
        n = add_term_tf(indptr, rows, tf, terms[j], idf[j], k1, norms, allowed, use_mask, True, acc, touched, n)
        read = jj + 1
    if read == m:
        theta = kth_largest_at(acc, touched, n, k)
    # 2. the rows seen that can still reach the k-th best, ascending, with their partial sums
    cut = cut_below(theta)
    nc = 0
    for j in range(n):
        r = touched[j]
        if acc[r] + bound[read] >= cut:
            touched[nc] = r
            nc += 1
        else:
            acc[r] = 0.0
    cand = np.sort(touched[:nc])
    partial = np.empty(nc, np.float64)
    for c in range(nc):
        partial[c] = acc[cand[c]]
        acc[cand[c]] = 0.0
    # 3. the unread terms, looked up for those rows only; rows that fall out of reach are dropped
    for jj in range(read, m):
        j = order[jj]
        w = idf[j]
        lo, hi = indptr[terms[j]], indptr[terms[j] + 1]
        for c in range(nc):
            r = cand[c]
            lo = gallop(rows, lo, hi, r)
            if lo >= hi:
                break
            if rows[lo] == r:
                f = np.float64(tf[lo])
                partial[c] += saturate_jit(f, norms[r], k1) * w
        if nc >= k:
            cut = cut_below(kth_largest(partial, nc, k))
            keep = 0
            for c in range(nc):
                if partial[c] + bound[jj + 1] >= cut:
                    cand[keep] = cand[c]
                    partial[keep] = partial[c]
                    keep += 1
            nc = keep
    # 4. the survivors scored afresh, term by term in the query's order, as the full pass sums them
    for c in range(nc):
        r = cand[c]
        s = 0.0
        for j in range(m):
            lo, hi = indptr[terms[j]], indptr[terms[j] + 1]
            p = search_sorted(rows, lo, hi, r)
            if p < hi and rows[p] == r:
                f = np.float64(tf[p])
                s += saturate_jit(f, norms[r], k1) * idf[j]
        acc[r] = s
    return select(acc, cand, nc, k, tie)
