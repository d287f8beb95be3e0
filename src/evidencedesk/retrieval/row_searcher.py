"""RowSearcher: the shared frame of every in-memory searcher (one index row per chunk).

A subclass supplies ``_score(query, allowed) -> (rows, scores)`` for the allowed rows with a
positive score, plus ``_add_rows`` and ``_keep_rows`` for updates; this class turns the scope into
a mask before any scoring, picks the top k among what matched and numbers the candidates.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, candidate
from evidencedesk.retrieval.rows import RowMasks, id_ranks, top_k
from evidencedesk.retrieval.scope import Scope


def check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k: must be an integer >= 1, got {k!r}")
    return int(k)


def check_chunks(chunks: Iterable[Chunk]) -> list[Chunk]:
    chunks = list(chunks)
    seen: set[str] = set()
    for c in chunks:
        if not isinstance(c, Chunk):
            raise ValueError(f"chunks: expected Chunk objects, got {type(c).__name__}")
        if c.id in seen:
            raise ValueError(f"chunks: duplicate chunk id {c.id!r}")
        seen.add(c.id)
    return chunks


class RowSearcher:
    """Chunks in row order, their scope masks, and the search/update protocol."""

    name = "rows"

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.chunks: list[Chunk] = check_chunks(chunks)
        self._reindex()

    # -- subclass hooks ------------------------------------------------------------------------------
    def _score(
        self, query: str, allowed: np.ndarray, key: Hashable, best: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of the allowed rows with a positive score; ``key`` names the mask. With
        ``best``, rows that cannot rank among the ``best`` highest scores may be left out."""
        raise NotImplementedError

    def _top(self, query: str, allowed: np.ndarray, key: Hashable, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` allowed rows and their scores, best first (ties by chunk id). A searcher that
        can select while it scores overrides this; the default scores, then selects."""
        rows, scores = self._score(query, allowed, key, k)
        return top_k(rows, scores, k, self._tie) if len(rows) else (rows, scores)

    def _add_rows(self, chunks: Sequence[Chunk]) -> None:
        raise NotImplementedError

    def _keep_rows(self, keep: np.ndarray) -> None:
        raise NotImplementedError

    def _commit(self) -> None:
        """Called once after an update's removals and additions (a place for an expensive refit)."""

    # -- shared ----------------------------------------------------------------------------------------
    def _reindex(self) -> None:
        self.row_of = {c.id: n for n, c in enumerate(self.chunks)}
        # whether some chunk lies on a page (when none does, collapsing by page cannot change a ranking)
        self.paged = any(c.location.pages for c in self.chunks)
        self.masks = RowMasks(self.chunks)
        self._tie = id_ranks([c.id for c in self.chunks])

    def __len__(self) -> int:
        return len(self.chunks)

    def allowed(self, scope: Scope | None = None) -> np.ndarray:
        """The boolean row mask of ``scope`` (None = the default scope)."""
        return self.masks.mask(scope)

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        """The top ``k`` chunks inside ``scope`` that match ``query`` (never padded)."""
        k = check_k(k)
        if not isinstance(query, str):
            raise ValueError(f"query: must be a string, got {type(query).__name__}")
        if not self.chunks or not query.strip():
            return []
        key = self.masks.key(scope)
        rows, scores = self._top(query, self.masks.mask_for(key), key, k)
        if not len(rows):
            return []
        chunks, name = self.chunks, self.name
        pairs = zip(rows.tolist(), scores.tolist(), strict=True)
        return [candidate(chunks[r], s, n, name) for n, (r, s) in enumerate(pairs, 1)]

    def scores(self, query: str, scope: Scope | None = None) -> dict[str, float]:
        """Every matching allowed chunk's score by chunk id (for tests and diagnosis)."""
        if not self.chunks or not query.strip():
            return {}
        rows, scores = self._score(query, self.masks.mask(scope), self.masks.key(scope))
        return {self.chunks[r].id: s for r, s in zip(rows.tolist(), scores.tolist(), strict=True)}

    def add(self, chunks: Iterable[Chunk]) -> None:
        """Index new chunks; a chunk whose id is already indexed replaces the old one."""
        chunks = check_chunks(chunks)
        if not chunks:
            return
        replaced = {c.id for c in chunks} & self.row_of.keys()
        if replaced:
            self._drop(np.array([c.id not in replaced for c in self.chunks], dtype=bool))
        self._add_rows(chunks)
        self.chunks.extend(chunks)
        self._commit()
        self._reindex()

    def remove(self, doc_ids: Iterable[str]) -> int:
        """Remove every chunk of the given documents; returns how many chunks left the index."""
        if isinstance(doc_ids, str):
            raise ValueError("doc_ids: must be a list of document ids, not one string")
        gone = set(doc_ids)
        keep = np.array([c.doc_id not in gone for c in self.chunks], dtype=bool)
        removed = int((~keep).sum())
        if removed:
            self._drop(keep)
            self._commit()
            self._reindex()
        return removed

    def _drop(self, keep: np.ndarray) -> None:
        self._keep_rows(keep)
        self.chunks = [c for c, k in zip(self.chunks, keep, strict=True) if k]
