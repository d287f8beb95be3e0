"""Result collapsing: at most one chunk per page (or per document) in a ranked list.

A PDF page that holds a long table is cut into several chunks, and they tend to rank together: five
results may then name only two or three pages. Collapsing keeps the best-ranked chunk of each page
(``by="page"``) or of each document (``by="document"``) and fills the list from further down the
ranking, as a search engine's field collapsing does. Chunks without pages (Markdown, HTML, plain
text) are never collapsed by page, so an unpaged corpus ranks exactly as without this step.

``Collapsed`` wraps any searcher. It asks the inner searcher for ``k`` first; only when that list
holds two chunks of one page does it ask again, four times as deep each round, until ``k`` distinct
pages are found or the ranking runs out.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope

COLLAPSE_CHOICES: tuple[str, ...] = ("none", "page", "document")
MAX_DEPTH = 10_000  # the deepest a collapsed search asks the inner searcher for


def collapse_key(chunk: Chunk, by: str) -> Hashable | None:
    """What ``chunk`` shares with the chunks it is collapsed with (None: never collapsed)."""
    if by == "document":
        return chunk.doc_id
    if by == "page" and chunk.location.pages:
        return (chunk.doc_id, chunk.location.pages[0])
    return None


def collapse(candidates: Sequence[Candidate], k: int, by: str) -> tuple[list[Candidate], bool]:
    """``(the first k candidates with distinct keys, renumbered from 1; whether any was dropped)``.

    A dropped candidate is not lost: it is kept in ``folded`` of the candidate of its page (or document)
    that stays, so the context stage can still show it (``expand_folded``) and a diagnosis can name it."""
    if by == "page":
        for c in candidates:
            if c.chunk.location.pages:
                break
        else:  # no candidate has pages: nothing to collapse
            return list(candidates[:k]), False
    first: dict[Hashable, int] = {}  # key -> position in kept
    kept: list[Candidate] = []
    folded: dict[int, list[Candidate]] = {}
    for c in candidates:
        key = collapse_key(c.chunk, by)
        if key is not None:
            if key in first:
                folded.setdefault(first[key], []).append(c)
                continue
            first[key] = len(kept)
        kept.append(c if c.rank == len(kept) + 1 else replace(c, rank=len(kept) + 1))
        if len(kept) == k:
            break
    for at, extra in folded.items():
        kept[at] = replace(kept[at], folded=(*kept[at].folded, *extra))
    return kept, bool(folded)


def expand_folded(candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` with each one's folded (collapsed-away) chunks put back right after it, in rank order."""
    out: list[Candidate] = []
    for c in candidates:
        out.append(c)
        out.extend(c.folded)
    return out


class Collapsed:
    """A searcher that returns at most one chunk per page (or document) of ``searcher``'s ranking."""

    def __init__(self, searcher: Searcher, by: str = "page") -> None:
        if by not in COLLAPSE_CHOICES or by == "none":
            raise ValueError(f"by: must be page or document, got {by!r}")
        self.searcher = searcher
        self.by = by
        self.name = searcher.name

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        depth = k
        while True:
            found = self.searcher.search(query, depth, scope)
            kept, dropped = collapse(found, k, self.by)
            if not dropped or len(kept) == k or len(found) < depth or depth >= MAX_DEPTH:
                return kept
            depth = min(depth * 4, MAX_DEPTH)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.searcher, name)


def collapsed(searcher: Searcher, by: str) -> Searcher:
    """``searcher`` collapsed ``by`` page or document; itself for ``none``."""
    return searcher if by == "none" else Collapsed(searcher, by)
