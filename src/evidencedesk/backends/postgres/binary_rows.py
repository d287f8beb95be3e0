"""BM25 term rows in PostgreSQL's binary COPY format, built with numpy.

Dumping ``int4[]`` arrays and ``sparsevec`` values one Python object at a time costs more than
everything else an ingest does on the client; here each row's arrays are sliced out of batch-wide
numpy arrays and written as bytes. Formats: the COPY BINARY file layout (signature, 16-bit field
count per tuple, 32-bit length before each field, -1 for NULL, trailer), ``int4[]`` as PostgreSQL's
array_send writes it, ``sparsevec`` as pgvector's sparsevec_send writes it (dimension, count, a
zero, 0-based indices, float4 values), ``vector`` as vector_send writes it (dimension, a zero, float4
values), dates as days since 2000-01-01.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
NULL = struct.pack(">i", -1)
INT4_OID = 23
_EPOCH = date(2000, 1, 1).toordinal()
_INT = struct.Struct(">i")


def text(value: str) -> bytes:
    data = value.encode("utf-8")
    return _INT.pack(len(data)) + data


def day(value: date | None) -> bytes:
    return NULL if value is None else struct.pack(">ii", 4, value.toordinal() - _EPOCH)


def int4(value: int) -> bytes:
    return struct.pack(">ii", 4, value)


def int8(value: int) -> bytes:
    return struct.pack(">iq", 8, value)


def int4_array(values: np.ndarray) -> bytes:
    n = len(values)
    if n == 0:
        return struct.pack(">iiii", 12, 0, 0, INT4_OID)
    body = np.empty(2 * n, dtype=">i4")
    body[0::2] = 4
    body[1::2] = values
    return struct.pack(">iiiiii", 20 + 8 * n, 1, 0, INT4_OID, n, 1) + body.tobytes()


def sparsevec(indices: np.ndarray, values: np.ndarray, dim: int) -> bytes:
    """``indices`` count from 0, strictly increasing; ``values`` non-zero."""
    n = len(indices)
    return (
        struct.pack(">iiii", 12 + 8 * n, dim, n, 0)
        + np.asarray(indices, dtype=">i4").tobytes()
        + np.asarray(values, dtype=">f4").tobytes()
    )


def vectors(values: np.ndarray) -> list[bytes]:
    """Each row of ``values`` as a ``vector`` field (pgvector's vector_send: dimension, a zero, float4s)."""
    values = np.asarray(values, dtype=">f4")
    dim = values.shape[1]
    head = struct.pack(">ihh", 4 + 4 * dim, dim, 0)
    return [head + row.tobytes() for row in values]


def copy_data(rows: Iterable[Sequence[bytes]]) -> bytes:
    """A whole COPY BINARY stream from rows of already encoded fields."""
    parts = [SIGNATURE]
    for fields in rows:
        parts.append(struct.pack(">h", len(fields)))
        parts.extend(fields)
    parts.append(TRAILER)
    return b"".join(parts)
