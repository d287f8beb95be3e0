"""ask: one question through every stage, with a Trace of what each stage saw and how long it took.

rewrite -> retrieve (inside the scope) -> rerank -> assemble context -> generate -> validate.
Stages are timed with ``trace.timed`` under the names ``rewrite``, ``retrieval``, ``rerank``,
``context``, ``generation`` and ``validation``. Findings come from validation, plus
``evaluation.taxonomy.diagnose`` when the question's label is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evidencedesk.answer.context import UNIT_SHARE, assemble
from evidencedesk.answer.gate import AnswerabilityGate
from evidencedesk.answer.generators.base import Generation, Generator, StreamingGenerator
from evidencedesk.answer.prompt import build_prompt, prompt_text
from evidencedesk.answer.validate import DROP, SentenceCheck, ValidatedAnswer, enforce, validate
from evidencedesk.documents import Chunk
from evidencedesk.results.ask import AskResult, AskScope, Citation, OutsideScope, Passage, SentenceVerdict, Validation
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.fusion import rrf
from evidencedesk.retrieval.rerank.base import Reranker
from evidencedesk.retrieval.rewrite import Rewritten
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Dropped, Finding, Trace

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


NEIGHBOURS = ("after", "score", "none")
NEIGHBOURS_DEFAULT = "after"


@dataclass
class Prepared:
    """Everything before generation: the (rewritten) question, the context shown, and the trace so far."""

    question: str
    context: list[Candidate]
    trace: AskTrace


def prepare(
    question: str,
    searcher: Searcher,
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
    diversify: Callable[[list[Candidate], int], list[Candidate]] | None = None,
    neighbours: str = NEIGHBOURS_DEFAULT,
    trim: bool = True,
    unit_share: float = UNIT_SHARE,
) -> Prepared:
    """Rewrite, retrieve inside the scope, rerank and assemble the context (``ask``'s stages before generation).

    A collapsed search (``retrieval.collapse``) shows one chunk per page; the chunks of the same page it
    folded away still reach the context stage (``neighbours``): ``after`` considers them once every
    ranked chunk is in (they fill the budget that is left), ``score`` ranks them among the others by
    their own scores, ``none`` leaves them out. ``trim`` (``assemble``'s): a candidate too long for the
    budget left is shown as an excerpt of its units that best match the question, not dropped;
    ``unit_share`` is ``assemble``'s too.

    The trace's prompt is what ``generator`` will be sent: its own ``messages(question, context)``
    when it has them (the language-model generators), else ``build_prompt``'s layout.
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
        folds = {c.chunk.id: c.folded for c in retrieved if c.folded}  # a reranker's candidates lose them
        extra = [f for c in final for f in (c.folded or folds.get(c.chunk.id, ()))] if neighbours != "none" else []
        ranked, after = ([*final, *extra], []) if neighbours == "score" else (final, extra)
        assembled = assemble(ranked, budget_tokens, floor, dedup_threshold, order, neighbours=after,
                             question=rewritten.question, trim=trim, unit_share=unit_share)  # fmt: skip
        shown = list(assembled.candidates)
        own = getattr(generator, "messages", None)
        messages = own(rewritten.question, shown) if callable(own) else build_prompt(rewritten.question, assembled)
        trace.prompt = prompt_text(messages)
    trace.context, trace.dropped = shown, [*_unread(reranker, retrieved, pool), *assembled.dropped]
    trace.context_tokens = assembled.tokens
    trace.rewrite_steps = list(rewritten.steps)
    return Prepared(rewritten.question, shown, trace)


def _unread(reranker: Reranker | None, retrieved: Sequence[Candidate], pool: Sequence[Candidate]) -> list[Dropped]:
    """The candidates a reranker with a ``min_score`` left out: it read them as not about the question."""
    floor = getattr(reranker, "min_score", None)
    if floor is None:
        return []
    kept = {c.chunk.id for c in pool}
    detail = f"the reranker scored it below its min_score {floor:g}: not about the question"
    return [Dropped(c.chunk.id, "not_relevant", detail) for c in retrieved if c.chunk.id not in kept]


def finish(
    prepared: Prepared,
    generation: Generation,
    generator: Generator,
    chunks_by_id: Mapping[str, Chunk],
    diagnose: Callable[[Trace], Sequence[Finding]] | None = None,
    on_unsupported: str = DROP,
) -> tuple[ValidatedAnswer, AskTrace]:
    """Validate ``generation`` against the context shown and complete the trace.

    ``on_unsupported``: ``drop`` (unsupported sentences are removed and flagged; the answer is an
    abstention when none is left) or ``abstain`` (any unsupported sentence or citation replaces the
    whole answer with an abstention)."""
    trace = prepared.trace
    trace.raw_answer = generation.raw or generation.answer
    trace.generation = {
        "generator": getattr(generator, "name", type(generator).__name__),
        **trace.generation,
        **generation.details,
    }
    with trace.timed("validation"):
        checked = enforce(validate(generation, prepared.context, chunks_by_id), on_unsupported)
    trace.answer = checked.answer
    trace.cited = checked.cited
    trace.abstained = checked.abstained
    trace.abstain_reason = checked.reason
    trace.findings = list(checked.findings)
    trace.findings = _merge(trace.findings, list(diagnose(trace)) if diagnose is not None else [])
    return checked, trace


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
    neighbours: str = NEIGHBOURS_DEFAULT,
    trim: bool = True,
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
    prepared = prepare(question, searcher, generator, scope, k, candidates, reranker, budget_tokens, floor,
                       dedup_threshold, order, rewrite, diversify, neighbours, trim)  # fmt: skip
    with prepared.trace.timed("generation"):
        generation = generator.generate(prepared.question, prepared.context, prepared.trace.prompt)
    return finish(prepared, generation, generator, chunks_by_id, diagnose)


Finished = tuple[ValidatedAnswer, AskTrace]


def generate_stream(
    prepared: Prepared,
    generator: Generator,
    chunks_by_id: Mapping[str, Chunk],
    diagnose: Callable[[Trace], Sequence[Finding]] | None = None,
    max_tokens: int | None = None,
    should_stop: Callable[[], bool] | None = None,
    gate: AnswerabilityGate | None = None,
    on_unsupported: str = DROP,
) -> Iterator[str | Finished]:
    """Generate and validate for a prepared question: text pieces as they are written, then the
    validated answer and trace (``(ValidatedAnswer, AskTrace)``) as the last item.

    A :class:`StreamingGenerator` streams; any other generator is validated first and its validated
    answer comes as one piece. The ``generation`` timing counts only the time spent inside the
    generator, never the time the consumer held a piece; ``first_token_ms`` (in the trace's
    ``generation``) is the time to the first piece. When ``should_stop`` returns True (or the
    iterator is closed) generation stops and nothing more is yielded. ``gate`` (the answerability
    gate) runs first: when it abstains the generator is never called. ``on_unsupported`` is
    ``finish``'s.
    """
    trace = prepared.trace
    stop = should_stop or _never
    if gate is not None:
        with trace.timed("gate"):
            abstention, details = gate.check(prepared.question, prepared.context)
        trace.generation.update(details)
        if abstention is not None:
            checked, trace = finish(prepared, abstention, generator, chunks_by_id, diagnose, on_unsupported)
            if stop():
                return
            yield checked.answer
            yield checked, trace
            return
    if not isinstance(generator, StreamingGenerator):
        with trace.timed("generation"):
            whole = generator.generate(prepared.question, prepared.context, trace.prompt)
        checked, trace = finish(prepared, whole, generator, chunks_by_id, diagnose, on_unsupported)
        if stop():
            return
        if checked.answer:
            yield checked.answer
        yield checked, trace
        return
    pieces = iter(generator.stream(prepared.question, prepared.context, trace.prompt,
                                   max_tokens=max_tokens, should_stop=stop))  # fmt: skip
    spent = 0.0
    generation: Generation | None = None
    try:
        while True:
            began = time.perf_counter()
            try:
                item = next(pieces)
            except StopIteration:
                break
            finally:
                spent += time.perf_counter() - began
            if isinstance(item, Generation):
                generation = item
                continue
            if item:
                trace.generation.setdefault("first_token_ms", round(spent * 1000, 1))
                yield item
    finally:
        close = getattr(pieces, "close", None)
        if callable(close):
            close()
        trace.timings["generation"] = trace.timings.get("generation", 0.0) + spent * 1000
    if generation is None or stop():
        return
    if trace.generation.get("first_token_ms") is not None and spent > 0:
        tokens = generation.details.get("tokens")
        after_first = spent - trace.generation["first_token_ms"] / 1000
        if isinstance(tokens, int) and tokens > 1 and after_first > 0:
            trace.generation["tokens_per_s"] = round((tokens - 1) / after_first, 2)
    yield finish(prepared, generation, generator, chunks_by_id, diagnose, on_unsupported)


def _never() -> bool:
    return False


def ask_result(
    checked: ValidatedAnswer,
    trace: AskTrace,
    chunks_by_id: Mapping[str, Chunk] | None = None,
    searcher: str = "",
    outside_scope: Sequence[OutsideScope] | None = None,
) -> AskResult:
    """What an ``ask`` returns: the trace, the validated answer on top, and where each citation points.

    ``searcher`` names where the first stage ranked; ``outside_scope`` (only when an abstention is
    explained) the better matches outside the scope."""
    lookup = {c.chunk.id: c.chunk for c in trace.context}
    sources: dict[str, Citation] = {}
    for cid in checked.cited:
        chunk = lookup.get(cid) or (chunks_by_id or {}).get(cid)
        if chunk is not None:
            sources[cid] = Citation(chunk.source or chunk.doc_id, chunk.title, chunk.location.label, chunk.doc_id)
    scope = trace.scope

    def names(field: str) -> tuple[str, ...] | None:
        value = scope.get(field)
        return tuple(value) if value is not None else None

    context = tuple(Passage.of(c) for c in trace.context)
    return AskResult(
        trace_id=trace.id,
        query=trace.query,
        rewritten=tuple(trace.rewritten),
        scope=AskScope(names("statuses"), names("audiences"), names("langs"), names("tenants"), names("doc_ids"),
                       scope.get("valid_at"), bool(scope.get("check_validity", True))),
        method=trace.method,
        retrieved=tuple(Passage.of(c) for c in trace.retrieved),
        reranked=tuple(Passage.of(c) for c in trace.reranked),
        context=tuple(p.chunk_id for p in context),
        context_candidates=context,
        dropped=tuple(trace.dropped),
        prompt=trace.prompt,
        answer=checked.answer,
        abstained=checked.abstained,
        abstain_reason=checked.reason,
        citations=tuple(checked.cited),
        findings=tuple(trace.findings),
        timings=dict(trace.timings),
        rewrite_steps=tuple(dict(step) for step in trace.rewrite_steps),
        context_tokens=trace.context_tokens,
        raw_answer=trace.raw_answer,
        generation=dict(trace.generation),
        validation=_validation(checked),
        sources=sources,
        searcher=searcher,
        outside_scope=tuple(outside_scope) if outside_scope is not None else None,
    )  # fmt: skip


def _validation(checked: ValidatedAnswer) -> Validation:
    def verdicts(checks: Sequence[SentenceCheck]) -> tuple[SentenceVerdict, ...]:
        return tuple(SentenceVerdict(s.sentence, tuple(s.cited), s.supported, s.why) for s in checks)

    return Validation(
        answer=checked.answer,
        citations=tuple(checked.cited),
        abstained=checked.abstained,
        reason=checked.reason,
        sentences=verdicts(checked.sentences),
        flagged=verdicts(checked.flagged),
        citation_status=dict(checked.citation_status),
        findings=tuple(checked.findings),
        raw=checked.raw,
    )


__all__ = ["AskTrace", "Finished", "Prepared", "ask", "ask_result", "finish", "generate_stream", "prepare"]
