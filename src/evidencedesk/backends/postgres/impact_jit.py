"""Compiled steps of the impact-ordered BM25 search: gathering postings per chunk row, and their bounds.

``Gather`` keeps, for every chunk row met in the postings read so far, its stored score from those
postings (``low``) and which query terms it was met in (a bit per term, up to 64 terms). Rows are
found through an open-addressing hash table (linear probing) that doubles when half full, so its
size follows the rows met, not the largest row id.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

MAX_TERMS = 64  # one bit per query term
_EMPTY = -1


@njit(cache=True, nogil=True)
def _slot(keys: Any, row: int) -> int:
    mask = len(keys) - 1
    h = (row * 0x9E3779B1) & mask
    while keys[h] != _EMPTY and keys[h] != row:
        h = (h + 1) & mask
    return h


@njit(cache=True, nogil=True)
def _add(keys: Any, where: Any, rows: Any, low: Any, met: Any, n: int, new_rows: Any, scores: Any, bit: Any) -> int:
    for i in range(len(new_rows)):
        row = new_rows[i]
        h = _slot(keys, row)
        if keys[h] == _EMPTY:
            keys[h] = row
            where[h] = n
            rows[n] = row
            low[n] = 0.0
            met[n] = 0
            n += 1
        s = where[h]
        low[s] += scores[i]
        met[s] |= bit
    return n


@njit(cache=True, nogil=True)
def _rehash(keys: Any, where: Any, rows: Any, n: int) -> None:
    for s in range(n):
        h = _slot(keys, rows[s])
        keys[h] = rows[s]
        where[h] = s


@njit(cache=True, nogil=True)
def _high(
    low: npt.NDArray[np.float64], met: npt.NDArray[np.uint64], n: int, caps: npt.NDArray[np.float64], unseen: float
) -> npt.NDArray[np.float64]:
    """low plus the caps of every term a row was not met in."""
    out = np.empty(n, dtype=np.float64)
    for s in range(n):
        h = low[s] + unseen
        m = met[s]
        j = 0
        while m:
            if m & 1:
                h -= caps[j]
            m >>= 1
            j += 1
        out[s] = h
    return out


class Gather:
    """The rows met in the postings read so far, with their partial scores and the terms they were met in."""

    def __init__(self, expected: int = 1024) -> None:
        cap = 1 << max(10, int(2 * expected - 1).bit_length())
        self.keys = np.full(cap, _EMPTY, dtype=np.int64)
        self.where = np.zeros(cap, dtype=np.int64)
        self.rows = np.zeros(cap // 2, dtype=np.int64)
        self.low = np.zeros(cap // 2, dtype=np.float64)
        self.met = np.zeros(cap // 2, dtype=np.uint64)
        self.n = 0

    def add(self, term: int, rows: np.ndarray, scores: np.ndarray) -> None:
        """Term ``term``'s postings: ``rows`` (each once) with their scores (idf times stored weight)."""
        if not 0 <= term < MAX_TERMS:
            raise ValueError(f"term: at most {MAX_TERMS} query terms, got index {term}")
        need = self.n + len(rows)
        if 2 * need > len(self.keys):
            cap = 1 << int(2 * need - 1).bit_length()
            self.keys = np.full(cap, _EMPTY, dtype=np.int64)
            self.where = np.zeros(cap, dtype=np.int64)
            _rehash(self.keys, self.where, self.rows, self.n)
            self.rows = np.resize(self.rows, cap // 2)
            self.low = np.resize(self.low, cap // 2)
            self.met = np.resize(self.met, cap // 2)
        self.n = _add(
            self.keys, self.where, self.rows, self.low, self.met, self.n,
            np.ascontiguousarray(rows, dtype=np.int64), np.ascontiguousarray(scores, dtype=np.float64),
            np.uint64(1 << term),
        )  # fmt: skip

    def bounds(self, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(rows, low, high, unseen) with ``caps[j]`` the most term j's unread postings can add."""
        unseen = float(caps.sum())
        n = self.n
        high = _high(self.low, self.met, n, np.ascontiguousarray(caps, dtype=np.float64), unseen)
        return self.rows[:n], self.low[:n], high, unseen


def warm() -> None:
    """Compile the kernels (numba caches them on disk for later processes)."""
    g = Gather(4)
    g.add(0, np.array([3, 5, 3 + 1024], dtype=np.int64), np.ones(3))
    g.add(1, np.arange(2000, dtype=np.int64), np.ones(2000))
    g.bounds(np.array([0.5, 0.25]))
