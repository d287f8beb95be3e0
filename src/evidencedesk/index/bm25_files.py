"""BM25 on disk: save an index's postings and open them memory-mapped, scoring exactly as in memory.

Files in the directory:

- ``postings.indptr.npy``, ``postings.rows.npy``, ``postings.scores.npy``: the per-term postings
  (``idf * weight`` already multiplied in), the arrays ``Postings`` holds in memory;
- ``terms.bin`` (+ ``.offsets.npy``): the vocabulary, sorted, and ``term_ids.npy``: each sorted
  term's column, so a query term is found by binary search without a dict;
- ``bm25.json``: k1, b, the number of rows and terms.

A mapped index reads only the postings of the query's terms; opening it reads none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evidencedesk.index.bm25 import BM25Index, Postings, PostingsScorer
from evidencedesk.index.string_table import StringTable, load_mapped, write_strings

META_FILE = "bm25.json"
_ARRAYS = ("indptr", "rows", "scores")


def save_bm25(index: BM25Index, directory: str | Path) -> Path:
    """Write ``index`` into ``directory`` (created if missing)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    p = index.postings
    for name, array in zip(_ARRAYS, (p.indptr, p.rows, p.scores), strict=True):
        np.save(directory / f"postings.{name}.npy", array)
    terms = index.counts.terms
    order = sorted(range(len(terms)), key=terms.__getitem__)
    write_strings(directory / "terms.bin", (terms[i] for i in order))
    np.save(directory / "term_ids.npy", np.asarray(order, dtype=np.int64))
    meta = {"k1": index.k1, "b": index.b, "n_docs": index.n_docs, "n_terms": len(terms), "avgdl": index.avgdl}
    (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return directory


class MappedBM25(PostingsScorer):
    """A saved BM25 index opened read-only with its arrays memory-mapped."""

    def __init__(self, directory: str | Path) -> None:
        directory = Path(directory)
        meta_path = directory / META_FILE
        if not meta_path.is_file():
            raise ValueError(f"no BM25 index in {directory} (expected {META_FILE})")
        meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
        self.k1, self.b = float(meta["k1"]), float(meta["b"])
        self.n_docs, self.avgdl = int(meta["n_docs"]), float(meta["avgdl"])
        arrays = [load_mapped(directory / f"postings.{name}.npy") for name in _ARRAYS]
        self.postings = Postings(*arrays)
        self.terms = StringTable(directory / "terms.bin")
        self.term_columns = load_mapped(directory / "term_ids.npy")
        if len(self.terms) != int(meta["n_terms"]) or len(self.postings.indptr) != int(meta["n_terms"]) + 1:
            raise ValueError(f"{directory}: the vocabulary and the postings disagree on the number of terms")
        self._reset_views()

    def term_ids(self, tokens: Sequence[str]) -> list[int]:
        """The distinct known terms of a query, in first-seen order (a repeated term counts once)."""
        out: dict[int, None] = {}
        for t in tokens:
            pos = self.terms.find(t)
            if pos is not None:
                out[int(self.term_columns[pos])] = None
        return list(out)
