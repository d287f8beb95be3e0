"""The rows of ``bm25_blocks`` in PostgreSQL's binary COPY format, written by a compiled loop.

A million-chunk store has hundreds of thousands of blocks; building each row in Python costs more
than the sort that orders the postings. Layout per row (see ``binary_rows``): a 16-bit field count,
then each field as a 32-bit length and big-endian bytes: gen (int4), tenant (text), term_id (int4),
max_w (float4), rows (bytea: int8 row ids) and ws (bytea: float4 weights).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit


@njit(cache=True, nogil=True)
def _put(out: Any, at: int, value: int, size: int) -> int:
    for i in range(size):
        out[at + i] = (value >> (8 * (size - 1 - i))) & 0xFF
    return at + size


@njit(cache=True, nogil=True)
def _rows(
    gen: int, starts: Any, ends: Any, tenant_of: Any, term_of: Any, max_w_bits: Any, rows: Any, w_bits: Any,
    names: Any, name_at: Any,
) -> npt.NDArray[np.uint8]:  # fmt: skip
    total = 0
    for b in range(len(starts)):
        n = ends[b] - starts[b]
        t = tenant_of[b]
        total += 2 + 8 + 4 + (name_at[t + 1] - name_at[t]) + 8 + 8 + 4 + 8 * n + 4 + 4 * n
    out = np.empty(total, dtype=np.uint8)
    at = 0
    for b in range(len(starts)):
        s, e, t = starts[b], ends[b], tenant_of[b]
        at = _put(out, at, 6, 2)
        at = _put(out, at, 4, 4)
        at = _put(out, at, gen, 4)
        at = _put(out, at, name_at[t + 1] - name_at[t], 4)
        for i in range(name_at[t], name_at[t + 1]):
            out[at] = names[i]
            at += 1
        at = _put(out, at, 4, 4)
        at = _put(out, at, term_of[b], 4)
        at = _put(out, at, 4, 4)
        at = _put(out, at, max_w_bits[b], 4)
        at = _put(out, at, 8 * (e - s), 4)
        for i in range(s, e):
            at = _put(out, at, rows[i], 8)
        at = _put(out, at, 4 * (e - s), 4)
        for i in range(s, e):
            at = _put(out, at, w_bits[i], 4)
    return out


def block_rows(
    gen: int, starts: np.ndarray, ends: np.ndarray, tenant_of: np.ndarray, term_of: np.ndarray,
    max_w: np.ndarray, rows: np.ndarray, w: np.ndarray, tenants: list[str],
) -> bytes:  # fmt: skip
    """The COPY rows (no header or trailer) of the blocks ``rows[starts[b]:ends[b]]``, ``w`` likewise."""
    encoded = [t.encode("utf-8") for t in tenants]
    name_at = np.zeros(len(encoded) + 1, dtype=np.int64)
    name_at[1:] = np.cumsum([len(e) for e in encoded])
    names = np.frombuffer(b"".join(encoded), dtype=np.uint8) if name_at[-1] else np.zeros(0, dtype=np.uint8)
    out = _rows(
        int(gen), starts.astype(np.int64), ends.astype(np.int64), tenant_of.astype(np.int64),
        term_of.astype(np.int64), max_w.astype(np.float32).view(np.uint32).astype(np.int64),
        rows.astype(np.int64), w.astype(np.float32).view(np.uint32).astype(np.int64), names, name_at,
    )  # fmt: skip
    return bytes(out.tobytes())
