"""SearchHit: one ranked chunk as ``Desk.search_rows`` gives it. ``to_dict()`` is one element of what
``evidencedesk search --json`` prints and ``POST /search`` returns; ``from_dict`` reads it back (the
retriever adapters read the service's answer with it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evidencedesk.documents import Location, Metadata
from evidencedesk.results.ask import Passage, PassageLocation
from evidencedesk.retrieval.candidates import Candidate, Part


@dataclass(frozen=True)
class SearchHit:
    """A ranked chunk: its ``rank`` (1-based) and ``score`` in the list ``source`` (a method, or the hybrid
    fusion) produced; the chunk's id, document, text, kind, title, location, source file and metadata;
    ``parts``, the lists it was ranked in (a single list names itself); ``collapsed``, the chunks of the
    same page folded into this one (``retrieval.collapse``; the JSON has the key only when there is
    one); and ``shared_words``, the query words it holds as the searcher reads them."""

    rank: int
    chunk_id: str
    doc_id: str
    score: float
    source: str
    text: str
    kind: str
    title: str
    location: Location
    source_path: str
    metadata: Metadata
    parts: tuple[Part, ...]
    shared_words: tuple[str, ...] = ()
    collapsed: tuple[str, ...] = ()

    @classmethod
    def of(cls, found: Candidate, shared_words: Sequence[str] = ()) -> SearchHit:
        """The hit of a search's candidate, with the query words it holds."""
        chunk = found.chunk
        return cls(
            rank=found.rank,
            chunk_id=chunk.id,
            doc_id=chunk.doc_id,
            score=found.score,
            source=found.source,
            text=chunk.text,
            kind=chunk.kind,
            title=chunk.title,
            location=chunk.location,
            source_path=chunk.source,
            metadata=chunk.metadata,
            parts=found.parts or (Part(found.source, found.rank, found.score),),
            shared_words=tuple(shared_words),
            collapsed=tuple(c.chunk.id for c in found.folded),
        )

    def to_dict(self) -> dict[str, object]:
        """One element of ``search --json``: the JSON of an ask trace's passage, with ``shared_words``."""
        passage = Passage(
            rank=self.rank, chunk_id=self.chunk_id, doc_id=self.doc_id, score=self.score, source=self.source,
            text=self.text, kind=self.kind, title=self.title, location=PassageLocation.of(self.location),
            source_path=self.source_path, metadata=dict(self.metadata.to_dict()), parts=self.parts,
            collapsed=self.collapsed or None, shared_words=self.shared_words,
        )  # fmt: skip
        return dict(passage.to_dict())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SearchHit:
        return cls(
            rank=int(d["rank"]),
            chunk_id=str(d["chunk_id"]),
            doc_id=str(d["doc_id"]),
            score=d["score"],  # as written: a float read back prints the same
            source=str(d.get("source", "")),
            text=str(d.get("text", "")),
            kind=str(d.get("kind", "text")),
            title=str(d.get("title", "")),
            location=Location.from_dict(d.get("location") or {}),
            source_path=str(d.get("source_path", "")),
            metadata=Metadata.from_dict(d.get("metadata") or {}),
            parts=tuple(Part(str(p["source"]), int(p["rank"]), p["score"]) for p in d.get("parts") or ()),
            shared_words=tuple(str(w) for w in d.get("shared_words") or ()),
            collapsed=tuple(str(c) for c in d.get("collapsed") or ()),
        )


__all__ = ["SearchHit"]
