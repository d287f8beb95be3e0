"""Candidate: one ranked chunk, with the parts it was fused from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.scope import Scope


@dataclass(frozen=True)
class Part:
    """One list's contribution to a fused candidate: which list, at which rank, with which raw score."""

    source: str
    rank: int
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "rank": self.rank, "score": self.score}


@dataclass(frozen=True)
class Candidate:
    chunk: Chunk
    score: float
    rank: int  # 1-based
    source: str  # the searcher (or fusion) that produced this list
    parts: tuple[Part, ...] = ()
    # chunks of the same page (or document) that ranked above the list's last result but were collapsed
    # into this one (``retrieval.collapse``): the list shows one chunk per page, the context may take them
    folded: tuple[Candidate, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        parts = self.parts or (Part(self.source, self.rank, self.score),)
        extra = {"collapsed": [c.chunk.id for c in self.folded]} if self.folded else {}
        return {
            "rank": self.rank,
            "chunk_id": self.chunk.id,
            "doc_id": self.chunk.doc_id,
            "score": self.score,
            "source": self.source,
            "text": self.chunk.text,
            "kind": self.chunk.kind,
            "title": self.chunk.title,
            "location": self.chunk.location.to_dict(),
            "source_path": self.chunk.source,
            "metadata": self.chunk.metadata.to_dict(),
            "parts": [p.to_dict() for p in parts],
            **extra,
        }


_new = object.__new__


def candidate(chunk: Chunk, score: float, rank: int, source: str, parts: tuple[Part, ...] = ()) -> Candidate:
    """``Candidate(chunk, score, rank, source, parts)``, built without the frozen dataclass's five
    guarded attribute writes: a search makes one per result, and on a small index those writes
    were a tenth of a query's time. Equal to the one the constructor makes, and as frozen."""
    made = _new(Candidate)
    fields = made.__dict__
    fields["chunk"] = chunk
    fields["score"] = score
    fields["rank"] = rank
    fields["source"] = source
    fields["parts"] = parts
    return made


def ranked(scored: Iterable[tuple[Chunk, float]], source: str) -> list[Candidate]:
    """Number already-sorted ``(chunk, score)`` pairs from rank 1."""
    return [candidate(chunk, float(score), n, source) for n, (chunk, score) in enumerate(scored, 1)]


@runtime_checkable
class Searcher(Protocol):
    """Every retrieval method: rank only chunks inside ``scope``; never pad with non-matches."""

    name: str

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]: ...
