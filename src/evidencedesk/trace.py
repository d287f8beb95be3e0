"""Trace: what one question went through, stage by stage, with each stage's latency.

The answering pipeline fills it; ``evaluation.taxonomy.diagnose`` reads it. A trace holds the
candidates each stage saw, so the diagnosis never has to re-run anything.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.progress import timed_into
from evidencedesk.retrieval.candidates import Candidate


@dataclass(frozen=True)
class Finding:
    """One diagnosis: ``stage`` says where the fix belongs, ``label`` what the symptom is; for lost
    evidence, ``cause`` names the step that lost it (``evaluation.taxonomy.CAUSES``), else it is empty."""

    stage: str  # ingestion, retrieval, context, generation, citation
    label: str  # missed_evidence, irrelevant_match, stale_document, duplicate_chunks, unsupported_answer
    detail: str
    cause: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Dropped:
    """A candidate that did not reach the context, and why (floor, duplicate, budget)."""

    chunk_id: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Trace:
    query: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    rewritten: list[str] = field(default_factory=list)  # the queries actually searched
    scope: dict[str, Any] = field(default_factory=dict)
    method: str = ""
    retrieved: list[Candidate] = field(default_factory=list)  # first stage (fused if hybrid)
    reranked: list[Candidate] = field(default_factory=list)  # after the reranker, cut to the final k
    context: list[Candidate] = field(default_factory=list)  # what the generator was shown
    dropped: list[Dropped] = field(default_factory=list)
    prompt: str = ""
    answer: str | None = None
    cited: tuple[str, ...] = ()
    abstained: bool = False
    abstain_reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> milliseconds

    def timed(self, stage: str) -> AbstractContextManager[None]:
        """``with trace.timed("retrieval"): ...`` records the stage's wall time in milliseconds."""
        return timed_into(self.timings, stage, 1000)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.id,
            "query": self.query,
            "rewritten": list(self.rewritten),
            "scope": self.scope,
            "method": self.method,
            "retrieved": [c.to_dict() for c in self.retrieved],
            "reranked": [c.to_dict() for c in self.reranked],
            "context": [c.chunk.id for c in self.context],
            "context_candidates": [c.to_dict() for c in self.context],
            "dropped": [d.to_dict() for d in self.dropped],
            "prompt": self.prompt,
            "answer": self.answer,
            "abstained": self.abstained,
            "abstain_reason": self.abstain_reason,
            "citations": list(self.cited),
            "findings": [f.to_dict() for f in self.findings],
            "timings": dict(self.timings),
        }
