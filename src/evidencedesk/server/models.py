"""Request and response models: they validate what comes in and describe both in ``/openapi.json``.

Response models allow extra keys, so the service returns the same objects as the command line's
``--json`` (these models name the fields a client can rely on).
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evidencedesk.config import ChunkerSettings

Method = Literal["bm25", "tfidf", "lsa", "dense", "hybrid"]  # retrieval.factory.METHODS (a test pins them equal)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Refusal(_Open):
    """A refusal (any 4xx outside the OpenAI routes, which answer in OpenAI's own error shape)."""

    detail: str | list[dict[str, Any]] = Field(
        description="Why, in words; for a request that does not match the schema (422), one entry per failed field."
    )


REFUSALS: dict[int | str, dict[str, Any]] = {
    "4XX": {
        "model": Refusal,
        "description": "Refused: a malformed request (422), a missing or unknown key, a scope or limit it exceeds, "
        "an unknown id, a body too large, or a request past the time limit.",
    },
}
"""The refusals every route may answer, documented in the schema."""


class ScopeRequest(_Request):
    """Narrows the key's scope; a missing field adds no limit. ``valid_at`` needs a key allowed to choose it."""

    statuses: list[str] | None = None
    audiences: list[str] | None = None
    langs: list[str] | None = None
    tenants: list[str] | None = None
    doc_ids: list[str] | None = None
    valid_at: date | None = None
    check_validity: bool = True


class SearchRequest(_Request):
    query: str = Field(min_length=1)
    k: int | None = Field(None, ge=1, description="Default: the configured k.")
    method: Method | None = Field(None, description="Default: the configured retrieval method.")
    legs: list[str] | None = Field(None, description="Hybrid legs (default: the configured legs, bm25 and dense).")
    scope: ScopeRequest | None = None


class AskRequest(_Request):
    question: str = Field(min_length=1)
    scope: ScopeRequest | None = None
    generator: str | None = Field(None, description="An enabled generator (default: the configured one).")
    method: Method | None = Field(None, description="Default: the configured retrieval method.")
    k: int | None = Field(None, ge=1, description="Chunks passed to the context (default: the configured k).")
    candidates: int | None = Field(None, ge=1, description="First-stage depth when reranking (default: configured).")
    rerank: Literal["none", "overlap", "llm", "cross-encoder"] | None = Field(
        None, description="Second stage (default: the configured retrieval.rerank.method)."
    )
    budget: int | None = Field(None, ge=16, description="Context token budget (default: the configured one).")
    floor: float | None = None
    dedup: float | None = Field(None, gt=0, le=1)
    order: Literal["score", "edges"] | None = None
    stream: bool = Field(False, description="Answer with server-sent events (delta events, then done).")
    max_tokens: int | None = Field(
        None, ge=1, description="Token limit of a language model's answer (at most the configured one)."
    )


class EvalRequest(_Request):
    labels: str | None = Field(None, description="A labels file inside the ingest root (default: the service's).")
    method: Method | None = Field(None, description="Default: the configured retrieval method.")
    k: int | None = Field(None, ge=1, description="Default: the configured k.")
    floor: float | None = None
    methods: list[Method] = Field(default_factory=list, description="More methods for the strategies table.")
    size_series: bool = Field(False, description="Also measure recall against context size (re-chunks 4 ways).")
    save: bool = True
    scope: ScopeRequest | None = None


class IngestPathRequest(_Request):
    path: str = Field(min_length=1, description="A folder inside the configured ingest root.")
    chunker: ChunkerSettings | None = None
    embed: bool = Field(
        False, description="Also compute the dense embeddings now (as `ingest --embed`), so no query pays for them."
    )


class LabSearchRequest(_Request):
    query: str | None = None
    question_id: str | None = Field(None, description="A labelled question: its text is searched, its grades shown.")
    chunker: ChunkerSettings | None = Field(None, description="Re-chunk in memory (default: the stored chunks).")
    method: Method | None = Field(None, description="Default: the configured retrieval method.")
    legs: list[str] | None = None
    k: int | None = Field(None, ge=1, description="Default: the configured k.")
    scope: ScopeRequest | None = None


class LabAskRequest(LabSearchRequest):
    generator: str | None = None
    stream: bool = Field(False, description="Answer with server-sent events (delta events, then done).")


class Part(_Open):
    source: str
    rank: int
    score: float


class Location(_Open):
    heading_path: list[str]
    first_line: int
    last_line: int


class SearchHit(_Open):
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
    metadata: dict[str, Any]
    parts: list[Part]
    shared_words: list[str]


class LabHit(SearchHit):
    grade: int | None = Field(None, description="The labelled grade (2 answers, 1 context, 0 none); None: no label.")


class LabContext(_Open):
    text: str
    context: list[str]
    dropped: list[dict[str, str]]
    tokens: int


class LabSearchResponse(_Open):
    query: str
    label: dict[str, Any] | None
    chunking: dict[str, Any] | None
    n_chunks: int
    legs: list[str]
    results: list[LabHit]
    context: LabContext
    prompt: str


class DocumentSummary(_Open):
    id: str
    title: str
    path: str
    format: str
    metadata: dict[str, Any]
    n_chunks: int


class DocumentOut(_Open):
    id: str
    title: str
    path: str
    format: str
    text: str
    metadata: dict[str, Any]
    sections: list[dict[str, Any]]


class ChunkOut(_Open):
    id: str
    doc_id: str
    text: str
    kind: str
    location: Location
    metadata: dict[str, Any]
    title: str
    source: str


class TraceSummary(_Open):
    trace_id: str
    query: str
    method: str
    answer: str | None
    abstained: bool
    timings: dict[str, float]


class IngestReportOut(_Open):
    """What the ingest did; ``unknown_supersedes`` (only when there is one) lists the files whose
    ``supersedes:`` names no document of their tenant: ``{"path", "doc_id", "supersedes"}``."""

    added: list[str]
    updated: list[str]
    unchanged: list[str]
    removed: list[str]
    failed: list[dict[str, Any]]
    skipped: list[str]
    build_id: int | None
    n_documents: int
    n_chunks: int


class EvalRunOut(_Open):
    run_id: int | None
    method: str
    k: int
    scope: dict[str, Any]
    n_questions: int
    n_failed: int
    overall: dict[str, dict[str, Any]]
    slices: dict[str, dict[str, Any]]
    strategies: list[dict[str, Any]]
    curves: dict[str, list[float]]
    questions: list[dict[str, Any]]


class Health(_Open):
    status: Literal["ok"]
    build_id: int | None


class LabQuestion(_Open):
    id: str
    question: str
    tags: list[str]
    answerable: bool


class LabOptions(_Open):
    chunkers: list[str]
    units: list[str]
    methods: list[str]
    legs: list[str]
    default_method: str  # the settings' retrieval method: what the lab searches with unless told otherwise
    default_legs: list[str]  # a hybrid's configured legs
    default_chunking: dict[str, Any] | None
    scope: dict[str, Any]
    values: dict[str, list[str]]
    caller: str
    generators: list[str]
