"""ask: one question through every stage, with a Trace of what each stage saw and how long it took.

rewrite -> retrieve (inside the scope) -> rerank -> assemble context -> generate -> validate.
Stages are timed with ``trace.timed`` under the names ``rewrite``, ``retrieval``, ``rerank``,
``context``, ``generation`` and ``validation``. Findings come from validation, plus
``evaluation.taxonomy.diagnose`` when the question's label is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evidencedesk.answer.context import assemble
from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.prompt import build_prompt, prompt_text
from evidencedesk.answer.validate import ValidatedAnswer, validate
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.fusion import rrf
from evidencedesk.retrieval.rerank.base import Reranker
from evidencedesk.retrieval.rewrite import Rewritten
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Finding, Trace

STAGE_ORDER = ("ingestion", "retrieval", "context", "generation", "citation")

RewriteStep = Callable[[str], "Rewritten | list[str]"]


@dataclass
class AskTrace(Trace):
    """A Trace plus what only the answering pipeline knows: rewrite notes, context size, the raw answer."""

    rewrite_steps: list[dict[str, Any]] = field(default_factory=list)
    context_tokens: int = 0
    raw_answer: str = ""  # the generator's output before validation
    generation: dict[str, Any] = field(default_factory=dict)  # the generator's name and what decided its answer

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["rewrite_steps"] = list(self.rewrite_steps)
        out["context_tokens"] = self.context_tokens
        out["raw_answer"] = self.raw_answer
        out["generation"] = dict(self.generation)
        return out


def _queries(question: str, rewrite: RewriteStep | None) -> Rewritten:
    if rewrite is None:
        return Rewritten(question, [question])
    out = rewrite(question)
    if isinstance(out, Rewritten):
        return out
    queries = [q for q in out if q.strip()]
    return Rewritten(question, queries or [question], [{"step": "rewrite", "input": question, "output": queries}])


def _retrieve(searcher: Searcher, queries: list[str], depth: int, scope: Scope) -> list[Candidate]:
    """One query: the searcher's list. Several: each list's source names its query (``bm25@q2``), then RRF."""
    if len(queries) == 1:
        return searcher.search(queries[0], depth, scope)
    lists = [
        [replace(c, source=f"{c.source}@q{i}") for c in searcher.search(q, depth, scope)]
        for i, q in enumerate(queries, 1)
    ]
    return rrf(lists, top=depth, source=f"rrf({searcher.name} x{len(lists)})")


def _merge(first: list[Finding], more: list[Finding]) -> list[Finding]:
    seen = {(f.stage, f.label) for f in first}
    out = first + [f for f in more if (f.stage, f.label) not in seen]
    return sorted(out, key=lambda f: STAGE_ORDER.index(f.stage) if f.stage in STAGE_ORDER else len(STAGE_ORDER))


def ask(
    question: str,
    searcher: Searcher,
    chunks_by_id: Mapping[str, Chunk],
    generator: Generator,
    scope: Scope | None = None,
    k: int = 5,
    candidates: int = 20,
    reranker: Reranker | None = None,
    budget_tokens: int = 800,
    floor: float | None = None,
    dedup_threshold: float | None = 0.8,
    order: str = "score",
    rewrite: RewriteStep | None = None,
    diagnose: Callable[[Trace], Sequence[Finding]] | None = None,
    diversify: Callable[[list[Candidate], int], list[Candidate]] | None = None,
) -> tuple[ValidatedAnswer, AskTrace]:
    """Answer ``question`` from the chunks ``searcher`` finds inside ``scope``; return the answer and its trace.

    ``chunks_by_id`` holds every indexed chunk (it decides whether a cited id exists at all).
    Without a reranker the first stage fetches ``k`` chunks; with one it fetches ``candidates``
    and the reranker keeps the best ``k``. ``rewrite`` is a ``Rewriter`` (or any function
    returning the queries to search); several queries are searched separately and fused by RRF.
    ``diagnose`` is called with the finished trace and its findings are added (e.g. evaluation's
    ``diagnose`` bound to a labelled question); answering never imports evaluation itself.
    ``diversify(candidates, k)`` (maximal marginal relevance) picks the ``k`` that reach the context
    from the whole (reranked) pool of ``candidates``.
    """
    if not question.strip():
        raise ValueError("question: must not be empty")
    if k < 1:
        raise ValueError(f"k: must be >= 1, got {k}")
    if candidates < k:
        raise ValueError(f"candidates: must be >= k ({k}), got {candidates}")
    scope = scope or Scope()
    trace = AskTrace(query=question, scope=scope.to_dict(), method=searcher.name)
    with trace.timed("rewrite"):
        rewritten = _queries(question, rewrite)
    trace.rewritten = list(rewritten.queries)
    depth = candidates if reranker is not None or diversify is not None else k
    with trace.timed("retrieval"):
        retrieved = _retrieve(searcher, rewritten.queries, depth, scope)
    trace.retrieved = retrieved
    with trace.timed("rerank"):
        pool = reranker.rerank(rewritten.question, retrieved) if reranker is not None else retrieved
        final = diversify(pool, k) if diversify is not None else pool[:k]
    trace.reranked = final
    with trace.timed("context"):
        assembled = assemble(final, budget_tokens, floor, dedup_threshold, order)
        trace.prompt = prompt_text(build_prompt(rewritten.question, assembled))
    trace.context, trace.dropped = list(assembled.candidates), list(assembled.dropped)
    trace.context_tokens = assembled.tokens
    trace.rewrite_steps = list(rewritten.steps)
    with trace.timed("generation"):
        generation = generator.generate(rewritten.question, list(assembled.candidates), trace.prompt)
    trace.raw_answer = generation.raw or generation.answer
    trace.generation = {"generator": getattr(generator, "name", type(generator).__name__), **generation.details}
    with trace.timed("validation"):
        checked = validate(generation, list(assembled.candidates), chunks_by_id)
    trace.answer = checked.answer
    trace.cited = checked.cited
    trace.abstained = checked.abstained
    trace.abstain_reason = checked.reason
    trace.findings = list(checked.findings)
    trace.findings = _merge(trace.findings, list(diagnose(trace)) if diagnose is not None else [])
    return checked, trace


def result_dict(
    checked: ValidatedAnswer, trace: Trace, chunks_by_id: Mapping[str, Chunk] | None = None
) -> dict[str, Any]:
    """The JSON an ``ask`` returns: the trace, the validated answer on top, and where each citation points."""
    out = trace.to_dict()
    out["answer"] = checked.answer
    out["abstained"] = checked.abstained
    out["abstain_reason"] = checked.reason
    out["citations"] = list(checked.cited)
    out["validation"] = checked.to_dict()
    sources: dict[str, Any] = {}
    lookup = {c.chunk.id: c.chunk for c in trace.context}
    for cid in checked.cited:
        chunk = lookup.get(cid) or (chunks_by_id or {}).get(cid)
        if chunk is not None:
            sources[cid] = {
                "source": chunk.source or chunk.doc_id,
                "title": chunk.title,
                "location": chunk.location.label,
                "doc_id": chunk.doc_id,
            }
    out["sources"] = sources
    return out


__all__ = ["AskTrace", "ask", "result_dict"]
