"""Whether labelled answers survive chunking: is a grade-2 evidence phrase whole inside one chunk?

Labels name evidence by the document's own words, never by chunk id, so one label set judges every
chunker. A phrase is whole in a chunk when it occurs in the chunk's text, both read in
``text.match.match_form`` (Unicode NFC; table pipes, Markdown marks, whitespace and line breaks do not
count) and without cutting a number; a phrase's ``with`` companions (a table row's header, say) must
sit in the same chunk, and a phrase that names its document (``doc``, on the phrase or its label) is
only found in that document's chunks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.text.match import holds_phrase, match_form, names_document


def normalise(text: str) -> str:
    """``text`` as evidence matching reads it (``text.match.match_form``)."""
    return match_form(text)


def holds_whole(text: str, phrases: Sequence[str]) -> bool:
    """True when every phrase occurs in ``text`` (both normalised)."""
    haystack = normalise(text)
    return all(holds_phrase(haystack, normalise(p)) for p in phrases)


def answer_whole(chunks: Sequence[Chunk], row: Mapping[str, Any]) -> bool:
    """True when some chunk holds a grade-2 gold phrase of ``row`` whole, with all its ``with`` phrases
    (in the phrase's document, when it or the row names one)."""
    groups = [
        (str(g.get("doc") or row.get("doc") or ""), [normalise(p) for p in [g["evidence"], *(g.get("with") or ())]])
        for g in row.get("gold") or ()
        if g.get("grade") == 2
    ]
    texts = [(c, normalise(c.text)) for c in chunks]
    return any(
        (not doc or names_document(doc, c.doc_id, c.source)) and all(holds_phrase(t, p) for p in group)
        for doc, group in groups
        for c, t in texts
    )


def whole_evidence(chunks: Sequence[Chunk], labels_rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """``(whole, total)``: of the ``total`` answerable rows, how many have an answer whole in some chunk.

    Rows are label records as stored in ``labels.jsonl`` (``answerable``, ``gold`` with ``evidence``,
    ``grade``, ``with`` and ``doc``, and the label's own ``doc``).
    """
    answerable = [row for row in labels_rows if row.get("answerable")]
    return sum(answer_whole(chunks, row) for row in answerable), len(answerable)
