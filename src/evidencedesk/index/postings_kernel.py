"""The compiled inner loop of BM25 search: sum a query's postings and keep the best k in one pass.

NumPy needs a dozen array passes per query (concatenate, bincount over every row, a partition, a
nonzero), each with its own call overhead; on a small index that overhead is most of a query's
cost, and on a large one the passes over every row are. This kernel (in ``postings_jit``, compiled
by numba on first use and cached on disk) reads only the query terms' postings, accumulates into a
scratch array that it leaves zeroed again, and keeps the best k in a binary heap, sorted best
first before it returns. Ties are broken as ``top_k`` breaks them: the lower ``tie`` key wins.
Sums are made in the same order as NumPy's (term by term), so the scores are bit-for-bit those of
``Postings.accumulate``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

_local = threading.local()  # per thread: scratch arrays, grown to the largest index seen
_NO_MASK = np.ones(1, dtype=bool)  # passed (and never read) when every row is allowed
# A query whose terms hold at least this many postings (in one segment) is searched by the pruned pass
# (``postings_jit.best_rows_tf_pruned``): below it, reading every posting is as fast (bench/scale.py).
PRUNE_FROM = 100_000


def _compile() -> Any:
    from evidencedesk.index import postings_jit

    return postings_jit


_kernel: Any = None
_kernel_lock = threading.Lock()


def kernel() -> Any:
    """The module of compiled functions (each compiled, or loaded from numba's cache, once per process)."""
    global _kernel
    if _kernel is None:
        with _kernel_lock:
            if _kernel is None:
                _kernel = _compile()
    return _kernel


def kernel_loaded() -> bool:
    """Whether this process has the compiled functions already (``kernel`` or ``warm`` was called, or
    the background load that ``warm_in_background`` started has finished)."""
    return _kernel is not None


# The compiled pass pays off once a process searches often: loading it costs most of a second (numba's
# import and its disk cache), a NumPy search of a small query some 30 us more than the compiled one. A
# process that has answered WARM_AFTER queries by NumPy loads it in a thread while it goes on searching
# by NumPy; a one-shot command never loads it (nor waits for it at exit).
WARM_AFTER = 256
_numpy_queries = 0
_loader: threading.Thread | None = None


def warm_in_background() -> None:
    """Start loading the compiled pass in a thread (once per process); searches switch to it when it
    is loaded. The thread is not a daemon: a process that ends first waits for it, rather than
    leaving numba half-loaded at exit."""
    global _loader
    if _kernel is not None or _loader is not None:
        return
    with _kernel_lock:
        if _kernel is None and _loader is None:
            _loader = threading.Thread(target=_load_quietly, name="evidencedesk-postings-kernel", daemon=False)
            _loader.start()


def answered_by_numpy() -> None:
    """Count a query that NumPy answered because the compiled pass was not loaded; the WARM_AFTER-th
    starts loading it in the background."""
    global _numpy_queries
    _numpy_queries += 1
    if _numpy_queries >= WARM_AFTER and _loader is None:
        warm_in_background()


def wait_loaded(timeout: float | None = None) -> bool:
    """Wait (at most ``timeout`` seconds) for a background load that has started; whether the compiled
    pass is loaded now."""
    loader = _loader
    if loader is not None:
        loader.join(timeout)
    return kernel_loaded()


def _load_quietly() -> None:
    global _kernel
    try:
        compiled = _compile()
        _load(compiled)
    except Exception:  # noqa: BLE001 - searches stay on NumPy, which gives the same results
        return
    with _kernel_lock:
        if _kernel is None:
            _kernel = compiled


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
    found: tuple[np.ndarray, np.ndarray] = (_kernel or kernel()).best_rows(
        indptr, rows, scores, terms, k, tie, mask, allowed is not None, acc, touched
    )
    return found


def best_rows_tf(
    indptr: np.ndarray,
    rows: np.ndarray,
    tf: np.ndarray,
    term_ids: Sequence[int],
    idf: Sequence[float],
    k1: float,
    norms: np.ndarray,
    k: int,
    tie: np.ndarray,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The same over postings of raw term frequencies (a segment): each posting scores
    ``bm25_weight.saturate(tf, norms[row], k1) * idf`` of its term, exactly as NumPy computes it. Queries
    with many postings take the pruned pass, which returns the same rows and scores."""
    acc, touched = _scratch(len(norms))
    terms = np.asarray(term_ids, dtype=np.int64)
    weights = np.asarray(idf, dtype=np.float64)
    mask = allowed if allowed is not None else _NO_MASK
    compiled = _kernel or kernel()
    search = compiled.best_rows_tf
    if len(terms) > 1 and int((indptr[terms + 1] - indptr[terms]).sum()) >= PRUNE_FROM:
        search = compiled.best_rows_tf_pruned
    found: tuple[np.ndarray, np.ndarray] = search(
        indptr, rows, tf, terms, weights, k1, norms, k, tie, mask, allowed is not None, acc, touched
    )
    return found


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _load(compiled: Any) -> None:
    """Call each compiled function of ``compiled`` once with every array type searches pass, so that
    numba compiles them (or loads them from its cache) now."""
    indptr, rows, tie = np.array([0, 1], dtype=np.int64), np.array([0], dtype=np.int32), np.zeros(1, dtype=np.int64)
    tf, one, terms1 = np.array([1], dtype=np.int32), np.ones(1), np.zeros(1, dtype=np.int64)
    scope_mask = _read_only(np.ones(1, dtype=bool))  # a scope's mask (``RowMasks`` hands them out read-only)
    for mask in _NO_MASK, scope_mask:
        compiled.best_rows(indptr, rows, np.array([1.0]), terms1, 1, tie, mask, False, *_scratch(1))
    mapped = [_read_only(a.copy()) for a in (indptr, rows, tf, tie)]
    for a in (indptr, rows, tf, tie), mapped, (indptr, rows, tf, mapped[3]):  # memory; a segment's files; filtered
        for mask in _NO_MASK, scope_mask:
            compiled.best_rows_tf(a[0], a[1], a[2], terms1, one, 1.5, one, 1, a[3], mask, False, *_scratch(1))
    terms, idf = np.array([0, 0], dtype=np.int64), np.ones(2)
    # the pruned pass, over restricted postings in memory and over a segment's memory maps
    for a in (indptr, rows, tf, mapped[3]), mapped:
        compiled.best_rows_tf_pruned(a[0], a[1], a[2], terms, idf, 1.5, one, 1, a[3], _NO_MASK, False, *_scratch(1))


def warm() -> None:
    """Compile (or load from numba's cache) the kernels now, with the array types searches pass
    (segments pass read-only memory maps), so that the first search does not wait for them: a
    service calls this before it takes requests."""
    _load(kernel())
    from evidencedesk.index.dense_jit import all_best, masked_best, rows_dot  # exact dense search, memory maps too

    vectors, q = np.ones((1, 2), dtype=np.float32), np.ones(2, dtype=np.float32)
    rows_dot(vectors, np.zeros(1, dtype=np.int64), q)
    rows_dot(_read_only(vectors.copy()), np.zeros(1, dtype=np.int64), q)
    for matrix in vectors, _read_only(vectors.copy()):
        masked_best(matrix, np.ones(1, dtype=bool), q, 1)
        all_best(matrix, q, 1)


__all__ = [
    "answered_by_numpy",
    "best_rows",
    "best_rows_tf",
    "kernel",
    "kernel_loaded",
    "wait_loaded",
    "warm",
    "warm_in_background",
]
