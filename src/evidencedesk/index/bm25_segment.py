"""BM25 over immutable segments: raw term frequencies on disk, idf and length norms at query time.

One segment's files (in its ``bm25/`` folder):

- ``terms.bin`` (+ ``.offsets.npy``): the segment's vocabulary, sorted, so a term's position is its
  column and a query term is found by binary search without a dict;
- ``postings.indptr.npy``, ``postings.rows.npy``, ``postings.tf.npy``: per-term postings (rows
  ascending) with the raw term frequency of each;
- ``lengths.npy``: each row's length in tokens.

Nothing in a segment depends on the other segments: ``idf`` needs the number of live rows holding a
term across every segment, and the length norm needs the average length of every live row, so both
are computed when a query runs (``CorpusStats``). The arithmetic is exactly the in-memory
``BM25Index``'s, operation for operation, so a set of segments scores every row exactly as one index
built over the same rows would.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evidencedesk.index.bm25 import Postings, PostingsScorer, lucene_idf
from evidencedesk.index.bm25_weight import length_norms
from evidencedesk.index.postings_kernel import best_rows_tf
from evidencedesk.index.string_table import StringTable, load_mapped, write_strings

_ARRAYS = ("indptr", "rows", "tf")
_DF_CACHE = 65_536  # live document frequencies remembered per segment with deletions


def save_segment_bm25(matrix: sp.csr_matrix, terms: Sequence[str], directory: str | Path) -> Path:
    """Write the raw counts ``matrix`` (rows x ``terms``, int) into ``directory``, columns sorted by term."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    order = np.asarray(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
    csc = sp.csc_matrix(matrix, dtype=np.int32)[:, order] if len(terms) else sp.csc_matrix(matrix.shape, dtype=np.int32)
    csc.sort_indices()
    np.save(directory / "postings.indptr.npy", csc.indptr.astype(np.int64))
    np.save(directory / "postings.rows.npy", csc.indices.astype(np.int32))
    np.save(directory / "postings.tf.npy", csc.data.astype(np.int32))
    np.save(directory / "lengths.npy", np.asarray(matrix.sum(axis=1), dtype=np.int64).ravel())
    write_strings(directory / "terms.bin", (terms[int(i)] for i in order))
    return directory


@dataclass(frozen=True)
class CorpusStats:
    """What BM25 needs from every live row of every segment: the row count and the average length."""

    n_docs: int
    avgdl: float

    @classmethod
    def of(cls, n_docs: int, total_length: int) -> CorpusStats:
        # a mean of integer lengths is their exact sum divided once, as ``np.mean`` computes it
        return cls(n_docs, float(np.float64(total_length) / n_docs) if n_docs else 0.0)


class SegmentBM25(PostingsScorer):
    """One segment's raw postings, memory-mapped. ``Postings.scores`` holds the term frequencies here."""

    def __init__(self, directory: str | Path, n_rows: int) -> None:
        directory = Path(directory)
        arrays = [load_mapped(directory / f"postings.{name}.npy") for name in _ARRAYS]
        self.postings = Postings(*arrays)
        self.lengths = load_mapped(directory / "lengths.npy")
        self.terms = StringTable(directory / "terms.bin")
        self.n_docs = n_rows
        if len(self.lengths) != n_rows:
            raise ValueError(f"{directory}: {len(self.lengths)} row lengths for a segment of {n_rows} rows")
        if len(self.postings.indptr) != len(self.terms) + 1:
            raise ValueError(f"{directory}: the vocabulary and the postings disagree on the number of terms")
        self._norms: tuple[tuple[float, float, float], np.ndarray] | None = None
        self._live_df: dict[tuple[Hashable, int], int] = {}
        self._reset_views()

    def columns(self, tokens: Sequence[str]) -> list[int | None]:
        """Each token's column in this segment (None where the segment lacks it)."""
        return [self.terms.find(t) for t in tokens]

    def df(self, column: int, live: np.ndarray | None, key: Hashable = None) -> int:
        """How many live rows hold the term in ``column`` (``live`` None: every row is live). ``key``
        names the mask ``live`` when it is not the segment's own live rows (a tenant's, say)."""
        lo, hi = self.postings.bounds[column], self.postings.bounds[column + 1]
        if live is None:
            return hi - lo
        found = self._live_df.get((key, column))
        if found is None:
            found = int(np.count_nonzero(live[self.postings.rows[lo:hi]]))
            if len(self._live_df) >= _DF_CACHE:
                self._live_df.clear()
            self._live_df[(key, column)] = found
        return found

    def norms(self, k1: float, b: float, avgdl: float) -> np.ndarray:
        """``k1 * (1 - b + b * |d| / avgdl)`` per row, kept for the statistics last asked for."""
        key = (k1, b, avgdl)
        if self._norms is None or self._norms[0] != key:
            self._norms = (key, length_norms(self.lengths, k1, b, avgdl))
        return self._norms[1]

    def norms_by_row(self, k1: float, b: float, avgdl: np.ndarray) -> np.ndarray:
        """``norms`` with an average length per row (``avgdl[row]``, > 0): each tenant's own, when
        every tenant is scored with its own statistics. The same arithmetic, row by row."""
        norms: np.ndarray = length_norms(self.lengths, k1, b, avgdl)
        return norms

    def top(  # type: ignore[override]  # a segment is scored by term columns, not by query tokens
        self,
        columns: Sequence[int],
        idf: Sequence[float],
        k1: float,
        norms: np.ndarray,
        k: int,
        tie: np.ndarray,
        allowed: np.ndarray | None,
        key: Hashable | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` allowed rows holding a query term (``columns``, with their ``idf``), best
        first, ties by ``tie[row]``: scored and selected in one compiled pass (``postings_kernel``),
        with the in-memory index's arithmetic, ``weight(tf, |d|) * idf``, in its order."""
        if not columns:
            return np.empty(0, dtype=np.int64), np.empty(0)
        postings, allowed = self._postings_for(allowed, key)
        return best_rows_tf(postings.indptr, postings.rows, postings.scores, columns, idf, k1, norms, k, tie, allowed)

    def term_ids(self, tokens: Sequence[str]) -> list[int]:
        return [c for c in self.columns(tokens) if c is not None]


def query_idf(n_docs: int, dfs: Sequence[int]) -> list[float]:
    """Lucene idf of each query term from its live document frequency across every segment."""
    return [float(x) for x in lucene_idf(n_docs, np.asarray(dfs, dtype=np.int64))]
