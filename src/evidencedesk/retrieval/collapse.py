"""Result collapsing: at most one chunk per page (or per document) in a ranked list.

A PDF page that holds a long table is cut into several chunks, and they tend to rank together: five
results may then name only two or three pages. Collapsing keeps the best-ranked chunk of each page
(``by="page"``) or of each document (``by="document"``) and fills the list from further down the
ranking, as a search engine's field collapsing does. Chunks without pages (Markdown, HTML, plain
text) are never collapsed by page, so an unpaged corpus ranks exactly as without this step (a searcher
that says it holds no paged chunk, ``paged = False``, is not even asked twice).

``Collapsed`` wraps any searcher. It asks the inner searcher for ``k`` first; only when that list
holds two chunks of one page does it ask again, four times as deep each round, until ``k`` distinct
pages are found or the ranking runs out. A page is never represented by a chunk that holds only a
heading or a table's header when one of its chunks with content ranks (``collapse``); when the list
holds such a bare chunk, the inner searcher is asked once more, four times as deep, for its page's
content.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.content import holds_content

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

    A page (or document) is represented by its best-ranked chunk that holds content
    (``text.content.holds_content``): a chunk holding only a heading, a table's header or footnote
    markers never stands for a page when a chunk of the same page with content is in the ranking,
    even one ranked below the list's last result. The page keeps the place of its best-ranked chunk;
    the representative keeps its own score. Only when no chunk of the page holds content does its
    best-ranked chunk stand for it.

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
    bare: set[int] = set()  # positions in kept whose chunk holds no content
    folded: dict[int, list[Candidate]] = {}
    for c in candidates:
        key = collapse_key(c.chunk, by)
        if key is not None and key in first:
            at = first[key]
            if at in bare and holds_content(shown(c.chunk)):  # a chunk with content takes the page's place
                folded.setdefault(at, []).append(kept[at])
                kept[at] = replace(c, rank=at + 1)
                bare.discard(at)
            elif len(kept) < k:
                folded.setdefault(at, []).append(c)
            continue
        if len(kept) == k:
            if not bare:
                break
            continue  # the list is full; read on only for content of a page that a bare chunk holds
        if key is not None:
            first[key] = len(kept)
            if not holds_content(shown(c.chunk)):
                bare.add(len(kept))
        kept.append(c if c.rank == len(kept) + 1 else replace(c, rank=len(kept) + 1))
    for at, extra in folded.items():
        kept[at] = replace(kept[at], folded=(*kept[at].folded, *sorted(extra, key=lambda f: f.rank)))
    return kept, bool(folded)


def shown(chunk: Chunk) -> str:
    return chunk.parent_text or chunk.text


def bare_pages(candidates: Sequence[Candidate], by: str) -> bool:
    """Whether some collapsible candidate of ``candidates`` holds no content (it stands for its page
    only because no chunk of the page with content was in the ranking read)."""
    return any(collapse_key(c.chunk, by) is not None and not holds_content(shown(c.chunk)) for c in candidates)


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
        if self.by == "page" and not getattr(self.searcher, "paged", True):
            return self.searcher.search(query, k, scope)  # no chunk it ranks has a page: nothing to collapse
        depth = k
        looked_for_content = False
        while True:
            found = self.searcher.search(query, depth, scope)
            kept, dropped = collapse(found, k, self.by)
            if len(found) < depth or depth >= MAX_DEPTH:
                return kept
            if dropped and len(kept) < k:
                pass  # too few pages yet: read deeper
            elif not looked_for_content and bare_pages(kept, self.by):
                looked_for_content = True  # once: a page held by a bare chunk may have content further down
            else:
                return kept
            depth = min(depth * 4, MAX_DEPTH)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.searcher, name)


def collapsed(searcher: Searcher, by: str) -> Searcher:
    """``searcher`` collapsed ``by`` page or document; itself for ``none``."""
    return searcher if by == "none" else Collapsed(searcher, by)
