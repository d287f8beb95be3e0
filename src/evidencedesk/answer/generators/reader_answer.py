"""The reader's answer: the context's whole units the reader rates as answering, best first.

Units are the context's sentences, table rows (each with its table's header line) and code lines
(``answer.units``), minus any that read as instructions to an assistant. The reader scores every
(question, unit) pair; the answer is

* the best unit, when its score reaches the reader's threshold (else nothing: the caller abstains);
* then further units, best first, while the reader also rates them at or above the threshold and the
  answer stays within ``max_words`` words (a question that asks for a list may take ``max_units``
  units whatever their length).

A unit is never cut: the best unit is quoted whole even when it alone is longer than ``max_words``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evidencedesk.answer.injection import looks_like_instruction
from evidencedesk.answer.units import Unit, split_units
from evidencedesk.retrieval.candidates import Candidate

MAX_WORDS = 50
MAX_UNITS = 3
_LIST = re.compile(
    r"^\s*(list|name|enumerate|give)\b|\b(what|which)\s+(are|were)\s+(the\s+|all\s+)?\w+s\b|\bsteps\b|\ball\s+the\b",
    re.IGNORECASE,
)


def asks_for_list(question: str) -> bool:
    """True when ``question`` asks for several things ("List ...", "What are the steps ...", "all the ...")."""
    return bool(_LIST.search(question))


def words_of(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class ReadUnit:
    """A unit of the context, which chunk of the context it came from, and the reader's score."""

    unit: Unit
    owner: int  # position of its chunk in the context
    score: float

    def to_dict(self) -> dict[str, object]:
        return {"chunk_id": self.unit.chunk_id, "kind": self.unit.kind, "text": self.unit.text, "reader": self.score}


def context_units(context: Sequence[Candidate]) -> list[tuple[Unit, int]]:
    """Every quotable unit of ``context`` with its chunk's position, in context order."""
    out: list[tuple[Unit, int]] = []
    for n, cand in enumerate(context):
        out.extend((u, n) for u in split_units(cand.chunk) if not looks_like_instruction(u.text))
    return out


def ranked_units(units: Sequence[tuple[Unit, int]], scores: Sequence[float]) -> list[ReadUnit]:
    """The units with their scores, best first (ties: context order)."""
    read = [ReadUnit(u, owner, round(float(s), 4)) for (u, owner), s in zip(units, scores, strict=True)]
    return [read[i] for i in sorted(range(len(read)), key=lambda i: (-read[i].score, i))]


def pick(
    ranked: Sequence[ReadUnit],
    threshold: float,
    listing: bool = False,
    max_words: int = MAX_WORDS,
    max_units: int = MAX_UNITS,
) -> list[ReadUnit]:
    """The units the answer quotes, best first: none when the best is below ``threshold``."""
    if not ranked or ranked[0].score < threshold:
        return []
    picked = [ranked[0]]
    used = words_of(ranked[0].unit.text)
    for r in ranked[1:]:
        if len(picked) >= max_units or r.score < threshold:
            break
        size = words_of(r.unit.text)
        if any(r.unit.text == p.unit.text for p in picked) or (not listing and used + size > max_words):
            continue
        picked.append(r)
        used += size
    return picked


__all__ = ["MAX_UNITS", "MAX_WORDS", "ReadUnit", "asks_for_list", "context_units", "pick", "ranked_units"]
