"""TermCounts: a growing vocabulary and a sparse term-frequency matrix (rows = chunks, CSR).

Rows are added from already tokenised text and removed by a keep-mask, so an update never
re-tokenises the rows that stay. Both the BM25 and the TF-IDF index are built on it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np
import scipy.sparse as sp

_INDEX = np.int32


def _csr(ids: np.ndarray, lengths: np.ndarray, n_cols: int) -> sp.csr_matrix:
    """Count each term id per row (duplicates summed) from the rows' ids laid end to end."""
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    data = np.ones(len(ids), dtype=np.int32)
    m = sp.csr_matrix((data, ids.astype(_INDEX, copy=False), indptr), shape=(len(lengths), n_cols))
    m.sum_duplicates()  # also sorts the column indices of each row
    return m


class TermCounts:
    """``vocab`` maps a term to its column; ``matrix`` holds raw counts (int32, CSR)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.terms: list[str] = []
        self.matrix: sp.csr_matrix = sp.csr_matrix((0, 0), dtype=np.int32)

    @classmethod
    def from_tokens(cls, docs: Iterable[Sequence[str]]) -> TermCounts:
        counts = cls()
        counts.add(docs)
        return counts

    @property
    def n_rows(self) -> int:
        return int(self.matrix.shape[0])

    def ids(self, tokens: Sequence[str], grow: bool = False) -> list[int]:
        """Column ids of ``tokens``; unknown tokens get a new column when ``grow``, else are skipped."""
        vocab = self.vocab
        if not grow:
            return [vocab[t] for t in tokens if t in vocab]
        size = len(vocab)
        out = [vocab.setdefault(t, len(vocab)) for t in tokens]  # a new term gets the next id
        if len(vocab) > size:
            self.terms.extend(islice(vocab, size, None))
        return out

    def add(self, docs: Iterable[Sequence[str]]) -> None:
        """Append one row per tokenised document.

        Term ids go straight into a flat C array (4 bytes a token), never a list of lists, so a
        million rows can be added without holding a Python object per token.
        """
        vocab, size = self.vocab, len(self.vocab)
        flat, lengths = array("i"), array("q")
        for doc in docs:
            before = len(flat)
            flat.extend([vocab.setdefault(t, len(vocab)) for t in doc])
            lengths.append(len(flat) - before)
        if len(vocab) > size:
            self.terms.extend(islice(vocab, size, None))
        new = _csr(np.frombuffer(flat, dtype=np.int32), np.frombuffer(lengths, dtype=np.int64), len(self.terms))
        old = self.matrix
        if old.shape[1] != len(self.terms):
            old = sp.csr_matrix((old.data, old.indices, old.indptr), shape=(old.shape[0], len(self.terms)))
        self.matrix = sp.vstack([old, new], format="csr") if old.shape[0] else new
        self.matrix.sort_indices()

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the rows where the boolean ``rows`` is True (order preserved)."""
        if len(rows) != self.n_rows:
            raise ValueError(f"keep mask: {len(rows)} entries for {self.n_rows} rows")
        self.matrix = self.matrix[np.flatnonzero(rows)]

    def prune(self) -> None:
        """Drop the columns no row uses any more (their terms leave the vocabulary)."""
        used = np.zeros(len(self.terms), dtype=bool)
        used[self.matrix.indices] = True
        if used.all():
            return
        cols = np.flatnonzero(used)
        self.terms = [self.terms[c] for c in cols]
        self.vocab = {t: n for n, t in enumerate(self.terms)}
        self.matrix = self.matrix[:, cols]
        self.matrix.sort_indices()

    def add_matrix(self, matrix: sp.spmatrix, terms: Sequence[str]) -> None:
        """Append the rows of a counts ``matrix`` whose columns are ``terms`` (another vocabulary)."""
        m = sp.csr_matrix(matrix, dtype=np.int32)
        if m.shape[1] != len(terms):
            raise ValueError(f"matrix: {m.shape[1]} columns for {len(terms)} terms")
        columns = np.asarray(self.ids(terms, grow=True), dtype=_INDEX)
        new = sp.csr_matrix((m.data, columns[m.indices], m.indptr), shape=(m.shape[0], len(self.terms)))
        new.sort_indices()
        old = self.matrix
        if old.shape[1] != len(self.terms):
            old = sp.csr_matrix((old.data, old.indices, old.indptr), shape=(old.shape[0], len(self.terms)))
        self.matrix = sp.vstack([old, new], format="csr") if old.shape[0] else new
