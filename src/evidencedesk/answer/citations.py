"""Reading citations out of an answer: ``[doc-id:cN]`` markers and the text each one covers.

A citation is a square-bracketed chunk id (``<doc_id>:c<n>``); several ids may share one bracket,
separated by commas or semicolons, and brackets may follow each other. Bracketed text of any
other shape is ordinary text. The text before a group of citations (back to the previous group)
is what that group cites; a sentence inside it is checked against those ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ID = r"[^\[\]\s,;]+:c\d+"
CITATION = re.compile(rf"\[\s*({_ID}(?:\s*[,;]\s*{_ID})*)\s*\]")
_GROUP = re.compile(rf"(?:\s*{CITATION.pattern})+")


@dataclass(frozen=True)
class Segment:
    """A stretch of answer text and the chunk ids cited right after it (empty when uncited)."""

    text: str
    cited: tuple[str, ...]


def cited_ids(text: str) -> tuple[str, ...]:
    """Every chunk id cited in ``text``, in order of first use."""
    seen: dict[str, None] = {}
    for m in CITATION.finditer(text):
        for cid in re.split(r"\s*[,;]\s*", m.group(1)):
            seen.setdefault(cid, None)
    return tuple(seen)


def segments(answer: str) -> list[Segment]:
    """Split ``answer`` into text stretches, each with the citation group that closes it."""
    out: list[Segment] = []
    pos = 0
    for m in _GROUP.finditer(answer):
        out.append(Segment(answer[pos : m.start()], cited_ids(m.group(0))))
        pos = m.end()
    if answer[pos:].strip():
        out.append(Segment(answer[pos:], ()))
    return out


def strip_citations(text: str) -> str:
    """Remove citation-shaped markers (and the space before them) so quoted text cannot pose as a citation."""
    return re.sub(rf"[ \t]*{CITATION.pattern}", "", text)


__all__ = ["CITATION", "Segment", "cited_ids", "segments", "strip_citations"]
