"""BM25 weights encoded at a remembered avgdl, and the bound that keeps the ranking exact when it drifts.

A chunk's stored weights use ``encoded_avgdl`` (in ``bm25_stats``), not the live average length.
An ingest encodes only its new chunks, at that value, and rewrites every row only when the live
avgdl has drifted more than ``DRIFT`` from it (or k1, b or the tokenizer changed). Searches stay
exact because the drift is bounded: for one term,

    w(tf, dl, A) = tf * (k1 + 1) / (tf + k1 * (1 - b) + k1 * b * dl / A)

and with ``r = avgdl / encoded_avgdl`` the true weight lies between ``min(1, r)`` and
``max(1, r)`` times the stored one, for every tf and dl; so does a score, a sum of such weights
times positive idfs. A search reads the top rows by stored score, rescores them exactly in float64
and accepts its top k only when the k-th exact score beats ``max(1, r)`` times the last stored
score read (plus float32 rounding slack); otherwise it reads more rows.
"""

from __future__ import annotations

from collections.abc import Sequence

DRIFT = 0.02  # re-encode every row when the live avgdl is more than 2% away from the encoded one
FLOAT32_SLACK = 1e-5  # relative error of pgvector's float32 weights and inner product, with room to spare


def drifted(avgdl: float, encoded: float | None) -> bool:
    """True when weights encoded at ``encoded`` must be rewritten for a corpus whose avgdl is ``avgdl``."""
    if encoded is None or encoded <= 0:
        return True
    return avgdl > 0 and abs(avgdl / encoded - 1.0) > DRIFT


def upper_ratio(avgdl: float, encoded: float | None, b: float) -> float:
    """The largest factor by which a true score can exceed its stored score."""
    if b == 0 or encoded is None or encoded <= 0 or avgdl <= 0:
        return 1.0
    return max(1.0, avgdl / encoded)


def cut_is_exact(exact_desc: Sequence[float], k: int, last_stored: float, ratio: float) -> bool:
    """True when no unread row can enter the top ``k``: the k-th best exact score (``exact_desc`` sorted
    best first) beats every score an unread row can have (at most ``ratio`` times ``last_stored``)."""
    if len(exact_desc) < k:
        return False
    return exact_desc[k - 1] > ratio * last_stored * (1 + FLOAT32_SLACK)
