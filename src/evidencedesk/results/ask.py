"""What ``Desk.ask`` returns: the validated answer, where each citation points, and the trace of every stage.

``AskResult.to_dict()`` is the public JSON (``evidencedesk ask --json``, the service's ``/ask``, a stored
trace): its keys come in the order given here. The service's ``/openapi.json`` describes ``/ask`` from
these same declarations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from pydantic import JsonValue, TypeAdapter

from evidencedesk.documents import Location
from evidencedesk.retrieval.candidates import Candidate, Part
from evidencedesk.trace import Dropped, Finding

JSONObject = dict[str, JsonValue]
"""A JSON object whose fields vary by producer (a generator's details, a rewrite step, metadata)."""


@dataclass(frozen=True)
class PassageLocation:
    """Where a passage sits in its document: its heading path, its lines, and its pages (PDFs only)."""

    heading_path: tuple[str, ...]
    first_line: int
    last_line: int
    pages: tuple[int, ...] | None = None

    @classmethod
    def of(cls, location: Location) -> PassageLocation:
        """The location of a stored chunk, as a passage shows it."""
        pages = tuple(location.pages) if location.pages else None
        return cls(tuple(location.heading_path), location.first_line, location.last_line, pages)

    def to_dict(self) -> JSONObject:
        out: JSONObject = {
            "heading_path": list(self.heading_path), "first_line": self.first_line, "last_line": self.last_line,
        }  # fmt: skip
        if self.pages is not None:
            out["pages"] = list(self.pages)
        return out


@dataclass(frozen=True)
class Passage:
    """One ranked chunk as a stage saw it: its rank and score in that stage's list, its text and where it
    comes from, and the lists it was fused from. ``collapsed`` (only after a collapsing search) names the
    chunks of the same page folded into it; ``shared_words`` (only in the lab) the words it shares with
    the query."""

    rank: int
    chunk_id: str
    doc_id: str
    score: float
    source: str
    text: str
    kind: str
    title: str
    location: PassageLocation
    source_path: str
    metadata: JSONObject
    parts: tuple[Part, ...]
    collapsed: tuple[str, ...] | None = None
    shared_words: tuple[str, ...] | None = None

    @classmethod
    def of(cls, c: Candidate) -> Passage:
        """The passage a candidate shows (its own part when it was not fused)."""
        return cls(
            rank=c.rank, chunk_id=c.chunk.id, doc_id=c.chunk.doc_id, score=c.score, source=c.source,
            text=c.chunk.text, kind=c.chunk.kind, title=c.chunk.title, location=PassageLocation.of(c.chunk.location),
            source_path=c.chunk.source, metadata=c.chunk.metadata.to_dict(),
            parts=c.parts or (Part(c.source, c.rank, c.score),),
            collapsed=tuple(f.chunk.id for f in c.folded) if c.folded else None,
        )  # fmt: skip

    def to_dict(self) -> JSONObject:
        out: JSONObject = {
            "rank": self.rank,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "score": self.score,
            "source": self.source,
            "text": self.text,
            "kind": self.kind,
            "title": self.title,
            "location": self.location.to_dict(),
            "source_path": self.source_path,
            "metadata": self.metadata,
            "parts": [{"source": p.source, "rank": p.rank, "score": p.score} for p in self.parts],
        }
        if self.collapsed is not None:
            out["collapsed"] = list(self.collapsed)
        if self.shared_words is not None:
            out["shared_words"] = list(self.shared_words)
        return out


@dataclass(frozen=True)
class AskScope:
    """The scope the question was answered in (``None``: no limit on that field)."""

    statuses: tuple[str, ...] | None
    audiences: tuple[str, ...] | None
    langs: tuple[str, ...] | None
    tenants: tuple[str, ...] | None
    doc_ids: tuple[str, ...] | None
    valid_at: str | None
    check_validity: bool

    def to_dict(self) -> JSONObject:
        def lst(v: tuple[str, ...] | None) -> list[JsonValue] | None:
            return list(v) if v is not None else None

        return {
            "statuses": lst(self.statuses),
            "audiences": lst(self.audiences),
            "langs": lst(self.langs),
            "tenants": lst(self.tenants),
            "doc_ids": lst(self.doc_ids),
            "valid_at": self.valid_at,
            "check_validity": self.check_validity,
        }


@dataclass(frozen=True)
class SentenceVerdict:
    """One answer sentence, the chunk ids it cites, whether those chunks support it, and why."""

    sentence: str
    cited: tuple[str, ...]
    supported: bool
    why: str

    def to_dict(self) -> JSONObject:
        return {"sentence": self.sentence, "cited": list(self.cited), "supported": self.supported, "why": self.why}


@dataclass(frozen=True)
class Validation:
    """What validation made of the generator's answer: the answer kept, each sentence's verdict (``flagged``:
    the unsupported ones), each citation's status, the findings, and the generator's ``raw`` answer."""

    answer: str
    citations: tuple[str, ...]
    abstained: bool
    reason: str
    sentences: tuple[SentenceVerdict, ...]
    flagged: tuple[SentenceVerdict, ...]
    citation_status: Mapping[str, str]
    findings: tuple[Finding, ...]
    raw: str

    def to_dict(self) -> JSONObject:
        return {
            "answer": self.answer,
            "citations": list(self.citations),
            "abstained": self.abstained,
            "reason": self.reason,
            "sentences": [s.to_dict() for s in self.sentences],
            "flagged": [s.to_dict() for s in self.flagged],
            "citation_status": dict(self.citation_status),
            "findings": [_finding(f) for f in self.findings],
            "raw": self.raw,
        }


@dataclass(frozen=True)
class Citation:
    """Where a cited chunk comes from: its file (or document id), title, location label and document."""

    source: str
    title: str
    location: str
    doc_id: str

    def fields(self) -> dict[str, str]:
        """``to_dict()``, typed as the strings it holds."""
        return {"source": self.source, "title": self.title, "location": self.location, "doc_id": self.doc_id}

    def to_dict(self) -> JSONObject:
        return {**self.fields()}


@dataclass(frozen=True)
class OutsideScope:
    """A document outside the scope that ranked above every document inside it, and why it is outside."""

    doc_id: str
    chunk_id: str
    rank: int
    why: str

    def to_dict(self) -> JSONObject:
        return {"doc_id": self.doc_id, "chunk_id": self.chunk_id, "rank": self.rank, "why": self.why}


@dataclass(frozen=True)
class AskResult:
    """One answered (or abstained) question, with the trace of every stage it went through.

    The answer fields (``answer``, ``abstained``, ``abstain_reason``, ``citations``) are the validated ones;
    ``sources`` says where each citation points. The trace fields say what each stage saw: the queries
    searched (``rewritten``), the first stage's list (``retrieved``), the reranker's (``reranked``), the
    chunks shown to the generator (``context``, ``context_candidates``) and those left out (``dropped``),
    the ``prompt``, the generator's ``raw_answer`` and ``generation`` details, ``findings`` and ``timings``
    (milliseconds per stage). ``outside_scope`` is set only when an abstention was explained
    (``explain_abstention``).
    """

    trace_id: str
    query: str
    rewritten: tuple[str, ...]
    scope: AskScope
    method: str
    retrieved: tuple[Passage, ...]
    reranked: tuple[Passage, ...]
    context: tuple[str, ...]
    context_candidates: tuple[Passage, ...]
    dropped: tuple[Dropped, ...]
    prompt: str
    answer: str
    abstained: bool
    abstain_reason: str
    citations: tuple[str, ...]
    findings: tuple[Finding, ...]
    timings: Mapping[str, float]
    rewrite_steps: tuple[JSONObject, ...]
    context_tokens: int
    raw_answer: str
    generation: JSONObject
    validation: Validation
    sources: Mapping[str, Citation]
    searcher: str
    outside_scope: tuple[OutsideScope, ...] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue]) -> AskResult:
        """The result ``to_dict()`` gave (a stored trace, a service answer), checked against these declarations;
        a ``ValueError`` (pydantic's ``ValidationError``) names each field that does not fit. Keys not declared
        here (a face's own) are left out."""
        return _adapter().validate_python(data)

    def cited(self) -> list[dict[str, str]]:
        """Each cited chunk in citation order: ``{"chunk_id", "source", "title", "location", "doc_id"}``
        (only ``chunk_id`` when ``sources`` does not know it); what the chat and MCP faces list."""
        return [{"chunk_id": cid, **(w.fields() if (w := self.sources.get(cid)) else {})} for cid in self.citations]

    def to_dict(self) -> JSONObject:
        """The public JSON: what ``evidencedesk ask --json`` prints and a stored trace holds."""
        out: JSONObject = {
            "trace_id": self.trace_id,
            "query": self.query,
            "rewritten": list(self.rewritten),
            "scope": self.scope.to_dict(),
            "method": self.method,
            "retrieved": [p.to_dict() for p in self.retrieved],
            "reranked": [p.to_dict() for p in self.reranked],
            "context": list(self.context),
            "context_candidates": [p.to_dict() for p in self.context_candidates],
            "dropped": [{"chunk_id": d.chunk_id, "reason": d.reason, "detail": d.detail} for d in self.dropped],
            "prompt": self.prompt,
            "answer": self.answer,
            "abstained": self.abstained,
            "abstain_reason": self.abstain_reason,
            "citations": list(self.citations),
            "findings": [_finding(f) for f in self.findings],
            "timings": dict(self.timings),
            "rewrite_steps": list(self.rewrite_steps),
            "context_tokens": self.context_tokens,
            "raw_answer": self.raw_answer,
            "generation": dict(self.generation),
            "validation": self.validation.to_dict(),
            "sources": {cid: c.to_dict() for cid, c in self.sources.items()},
            "searcher": self.searcher,
        }
        if self.outside_scope is not None:
            out["outside_scope"] = [o.to_dict() for o in self.outside_scope]
        return out


@cache
def _adapter() -> TypeAdapter[AskResult]:
    return TypeAdapter(AskResult)


def _finding(f: Finding) -> JSONObject:
    return {"stage": f.stage, "label": f.label, "detail": f.detail, "cause": f.cause}


__all__ = [
    "AskResult",
    "AskScope",
    "Citation",
    "JSONObject",
    "OutsideScope",
    "Passage",
    "PassageLocation",
    "SentenceVerdict",
    "Validation",
]
