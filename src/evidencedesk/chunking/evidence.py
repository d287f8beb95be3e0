"""Whether labelled answers survive chunking: is a grade-2 evidence phrase whole inside one chunk?

Labels name evidence by the document's own words, never by chunk id, so one label set judges every
chunker. A phrase is whole in a chunk when it occurs in the chunk's text, compared after Unicode NFC
normalisation with every run of whitespace read as a single space; a phrase's ``with`` companions
(a table row's header, say) must sit in the same chunk.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evidencedesk.documents import Chunk


def normalise(text: str) -> str:
    """NFC text with whitespace runs collapsed to one space and the ends stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def holds_whole(text: str, phrases: Sequence[str]) -> bool:
    """True when every phrase occurs in ``text`` (both normalised)."""
    haystack = normalise(text)
    return all(normalise(p) in haystack for p in phrases)


def answer_whole(chunks: Sequence[Chunk], row: Mapping[str, Any]) -> bool:
    """True when some chunk holds a grade-2 gold phrase of ``row`` whole, with all its ``with`` phrases."""
    groups = [[g["evidence"], *(g.get("with") or ())] for g in row.get("gold") or () if g.get("grade") == 2]
    texts = [normalise(c.text) for c in chunks]
    return any(all(normalise(p) in t for p in group) for group in groups for t in texts)


def whole_evidence(chunks: Sequence[Chunk], labels_rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """``(whole, total)``: of the ``total`` answerable rows, how many have an answer whole in some chunk.

    Rows are label records as stored in ``labels.jsonl`` (``answerable``, ``gold`` with ``evidence``,
    ``grade`` and ``with``).
    """
    answerable = [row for row in labels_rows if row.get("answerable")]
    return sum(answer_whole(chunks, row) for row in answerable), len(answerable)
