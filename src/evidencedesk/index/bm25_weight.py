"""The BM25 term weight, written once.

For a term occurring ``tf`` times in a chunk of ``|d|`` terms, in a corpus whose chunks average
``avgdl`` terms::

    norm(d)      = k1 * (1 - b + b * |d| / avgdl)        (1 when avgdl is 0: an empty corpus)
    weight(t, d) = tf * (k1 + 1) / (tf + norm(d))

Every scorer computes it through these functions, in this order of operations, so their scores
agree bit for bit: the in-memory index (``bm25``), the segments (``bm25_segment``), the compiled
kernels (``postings_jit`` compiles ``saturate`` itself) and the PostgreSQL encoder. The one copy
that cannot call them, the SQL function ``bm25_weights`` in ``backends/postgres/schema.py``, is
pinned to ``term_weight`` by tests/backends/test_bm25_weight_pg.py.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75


def check_params(k1: object, b: object) -> tuple[float, float]:
    """``(k1, b)`` as floats; ValueError naming the parameter when one is not a usable number."""
    if isinstance(k1, bool) or not isinstance(k1, Real) or not math.isfinite(float(k1)) or float(k1) < 0:
        raise ValueError(f"k1: must be a finite number >= 0, got {k1!r}")
    if isinstance(b, bool) or not isinstance(b, Real) or not 0 <= float(b) <= 1:
        raise ValueError(f"b: must be a number between 0 and 1, got {b!r}")
    return float(k1), float(b)


def length_norms(lengths: Any, k1: float, b: float, avgdl: Any) -> Any:
    """``k1 * (1 - b + b * |d| / avgdl)`` for each length; ``avgdl`` a number, or an array of one per
    length (each tenant's own average). A scalar ``avgdl`` of 0 (no terms at all) counts every length
    as average."""
    empty = np.ndim(avgdl) == 0 and not avgdl > 0
    rel = np.ones_like(lengths, dtype=np.float64) if empty else lengths / avgdl
    return k1 * (1 - b + b * rel)


def saturate(tf: Any, norm: Any, k1: float) -> Any:
    """``tf * (k1 + 1) / (tf + norm)``: the saturated term frequency, given the length norm. Plain
    arithmetic, so that it works on numbers and arrays and numba compiles it as it stands."""
    return tf * (k1 + 1) / (tf + norm)


def term_weight(tf: Any, length: Any, k1: float, b: float, avgdl: Any) -> Any:
    """The BM25 weight (before idf) of term frequencies ``tf`` in chunks of ``length`` terms."""
    return saturate(tf, length_norms(length, k1, b, avgdl), k1)


__all__ = ["DEFAULT_B", "DEFAULT_K1", "check_params", "length_norms", "saturate", "term_weight"]
