"""Row helpers every in-memory searcher shares: scope masks over its rows and top-k among allowed rows.

``RowMasks`` turns a Scope into the same boolean mask as ``Scope.mask`` but from integer-coded
metadata columns (no Python loop over chunks per query) and caches the last few masks, so a
search with the default scope costs a dictionary look-up. ``top_k`` (from ``index.top_rows``) picks
the best k of the rows it is given, ties broken by chunk id, so the result never depends on row order.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import date

import numpy as np

from evidencedesk.documents import Chunk, Metadata
from evidencedesk.index.top_rows import top_k as top_k  # re-exported: searchers select with it
from evidencedesk.retrieval.scope import Scope

_NO_DAY = -(2**62)
_MAX_CACHED = 32


class _Column:
    """One text metadata field as integer codes into its distinct values."""

    def __init__(self, values: Sequence[str], codes: np.ndarray) -> None:
        self.values = list(values)
        self.codes = codes
        self.index = {v: n for n, v in enumerate(self.values)}

    @classmethod
    def of(cls, values: Sequence[str]) -> _Column:
        distinct, codes = np.unique(np.asarray(values, dtype=object), return_inverse=True)
        return cls([str(v) for v in distinct], codes.astype(np.int32))

    def allowed(self, allowed: frozenset[str]) -> np.ndarray:
        table = np.zeros(len(self.values), dtype=bool)
        for v in allowed:
            n = self.index.get(v)
            if n is not None:
                table[n] = True
        allowed_rows: np.ndarray = table[self.codes]
        return allowed_rows


COLUMNS = ("statuses", "audiences", "langs", "tenants", "doc_ids")


class RowMasks:
    """Boolean masks over ``chunks`` (one row each) for any Scope, cached by scope and day.

    ``to_arrays``/``from_arrays`` save and reopen the coded columns (memory-mapped arrays work), so a
    large index can build masks without any Chunk objects.
    """

    def __init__(self, chunks: Sequence[Chunk] = ()) -> None:
        metas = [c.metadata for c in chunks]
        values = {
            "statuses": [m.status for m in metas],
            "audiences": [m.audience for m in metas],
            "langs": [m.lang for m in metas],
            "tenants": [m.tenant for m in metas],
            "doc_ids": [c.doc_id for c in chunks],
        }
        days = np.array([self.days(m) for m in metas], dtype=np.int64).reshape(-1, 2)
        built = self.from_values(values, days[:, 0], days[:, 1])
        self._set(built.n, built._cols, built._from, built._to)

    @staticmethod
    def days(meta: Metadata) -> tuple[int, int]:
        """A row's validity as ordinal days (open ends become far past / far future)."""
        return (
            meta.valid_from.toordinal() if meta.valid_from else _NO_DAY,
            meta.valid_to.toordinal() if meta.valid_to else -_NO_DAY,
        )

    @classmethod
    def from_values(cls, values: Mapping[str, Sequence[str]], valid_from: np.ndarray, valid_to: np.ndarray) -> RowMasks:
        """Masks from plain per-row columns (the keys of ``COLUMNS``) and validity days."""
        masks = cls.__new__(cls)
        cols = {name: _Column.of(values[name]) for name in COLUMNS}
        masks._set(len(valid_from), cols, np.asarray(valid_from, np.int64), np.asarray(valid_to, np.int64))
        return masks

    def _set(self, n: int, cols: dict[str, _Column], valid_from: np.ndarray, valid_to: np.ndarray) -> None:
        self.n = n
        self._cols = cols
        self._from = valid_from
        self._to = valid_to
        self._cache: OrderedDict[tuple[Scope, date | None], np.ndarray] = OrderedDict()

    def to_arrays(self) -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
        """``(values, arrays)``: each column's distinct values, and its codes plus the validity days."""
        arrays = {name: col.codes for name, col in self._cols.items()}
        return {name: col.values for name, col in self._cols.items()}, {
            **arrays,
            "valid_from": self._from,
            "valid_to": self._to,
        }

    @classmethod
    def from_arrays(cls, values: dict[str, list[str]], arrays: dict[str, np.ndarray]) -> RowMasks:
        masks = cls.__new__(cls)
        cols = {name: _Column(values[name], arrays[name]) for name in COLUMNS}
        masks._set(len(arrays["valid_from"]), cols, arrays["valid_from"], arrays["valid_to"])
        return masks

    def columns(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """Each text column as ``(distinct values, per-row codes into them)``."""
        return {name: (col.values, col.codes) for name, col in self._cols.items()}

    @property
    def valid_from(self) -> np.ndarray:
        return self._from

    @property
    def valid_to(self) -> np.ndarray:
        return self._to

    @staticmethod
    def key(scope: Scope | None) -> tuple[Scope, date | None]:
        """What a mask depends on: the scope and, when validity is checked, the day it resolves to."""
        scope = scope if scope is not None else Scope()
        return scope, scope.day if scope.check_validity else None

    def mask(self, scope: Scope | None = None) -> np.ndarray:
        """True where the row is inside ``scope`` (None = the default ``Scope()``). Read-only array."""
        return self.mask_for(self.key(scope))

    def mask_for(self, key: tuple[Scope, date | None]) -> np.ndarray:
        """The mask of a ``key`` made by ``key()`` (a search computes the key once and uses it twice)."""
        scope = key[0]
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        out = np.ones(self.n, dtype=bool)
        for name, col in self._cols.items():
            allowed = getattr(scope, name)
            if allowed is not None:
                out &= col.allowed(allowed)
        if scope.check_validity:
            day = scope.day.toordinal()
            out &= (self._from <= day) & (day <= self._to)
        out.flags.writeable = False
        self._cache[key] = out
        if len(self._cache) > _MAX_CACHED:
            self._cache.popitem(last=False)
        return out


def id_ranks(ids: Sequence[str]) -> np.ndarray:
    """Each row's position in sorted id order: the tie-break that does not depend on row order."""
    order = sorted(range(len(ids)), key=ids.__getitem__)
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[order] = np.arange(len(ids))
    return ranks
