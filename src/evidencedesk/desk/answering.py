"""Answering for the Desk: the generators (built once each), the answerability gate in front of a
language model, and ``ask_stream``: rewrite, retrieve, rerank, assemble, generate and validate one
``AskRequest``, handing the answer out as it is written. ``ScopedChunks`` is the store's chunks as
one request may see them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.stream import AnswerDelta, AnswerDone, AskEvent, AskStream
from evidencedesk.config import Overrides, Settings
from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError, GenerationError
from evidencedesk.results.ask import AskResult, OutsideScope
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.contract import StoreProtocol
from evidencedesk.trace import Finding, Trace
from evidencedesk.wiring import (
    build_generator,
    build_reranker,
    build_rewriter,
    context_options,
    first_stage,
    rerank_spec,
    searcher_label,
)

from .request import AskRequest
from .searching import Searching
from .state import DeskState

if TYPE_CHECKING:
    from evidencedesk.answer.gate import AnswerabilityGate
    from evidencedesk.answer.pipeline import AskTrace
    from evidencedesk.answer.validate import ValidatedAnswer
    from evidencedesk.evaluation.labels import Label


class ScopedChunks(Mapping[str, Chunk]):
    """Chunks by id, read from the store on demand, hiding every chunk outside ``scope``.

    Answer validation asks "does this cited id exist?": an id outside the caller's scope does not.
    Only the chunks asked for are read; iterating reads the whole store (diagnosis of a labelled
    question does that).
    """

    def __init__(self, store: StoreProtocol, scope: Scope, known: Sequence[Chunk] = ()) -> None:
        self.store = store
        self.scope = scope
        self._seen: dict[str, Chunk | None] = {c.id: c for c in known if scope.allows_chunk(c)}

    def __getitem__(self, chunk_id: str) -> Chunk:
        if not isinstance(chunk_id, str):
            raise KeyError(chunk_id)
        if chunk_id not in self._seen:
            found = self.store.chunk(chunk_id)
            self._seen[chunk_id] = found if found is not None and self.scope.allows_chunk(found) else None
        hit = self._seen[chunk_id]
        if hit is None:
            raise KeyError(chunk_id)
        return hit

    def _all(self) -> list[Chunk]:
        return [c for c in self.store.chunks() if self.scope.allows_chunk(c)]

    def __iter__(self) -> Iterator[str]:
        return iter([c.id for c in self._all()])

    def __len__(self) -> int:
        return len(self._all())

    def values(self) -> ValuesView[Chunk]:
        return {c.id: c for c in self._all()}.values()


def _diagnosis(
    label: Label | None, chunks: Mapping[str, Chunk], k: int, evidence: Sequence[Chunk] | None = None
) -> Callable[[Trace], Sequence[Finding]] | None:
    """The labelled question's diagnosis of a finished trace: it reads the chunks inside the scope in
    batches (a ``ScopedChunks`` reads the store's) and keeps those holding the label's gold phrases;
    ``evidence`` names those chunks instead when the caller has gathered them already."""
    if label is None:
        return None
    from evidencedesk.evaluation.evidence import gather_evidence
    from evidencedesk.evaluation.taxonomy import diagnose

    def findings(trace: Trace) -> Sequence[Finding]:
        if evidence is not None:
            indexed = list(evidence)
        elif isinstance(chunks, ScopedChunks):  # the store: read in batches, keep the label's evidence
            indexed = gather_evidence(chunks.store.iter_chunks(), [label], chunks.scope).chunks
        else:  # chunks already in memory (the lab's re-chunked corpus)
            indexed = list(chunks.values())
        return diagnose(label, trace, indexed, k, known_ids=chunks)

    return findings


def outside_scope(found: Sequence[Candidate], scope: Scope) -> list[OutsideScope]:
    """The documents outside ``scope`` among ``found`` (a search without the scope) that rank above every
    document inside it, one per document, best first. Empty when the best match is inside the scope."""
    out: list[OutsideScope] = []
    seen: set[str] = set()
    for c in found:
        why = scope.excludes(c.chunk.metadata, c.chunk.doc_id)
        if why is None:
            break  # an allowed document ranks here: what follows is not "only" outside text
        if c.chunk.doc_id not in seen:
            seen.add(c.chunk.doc_id)
            out.append(OutsideScope(c.chunk.doc_id, c.chunk.id, c.rank, why))
    return out


@dataclass(frozen=True)
class Answered:
    """One answered request: the validated answer, its trace, and what ``ask`` returns for it."""

    checked: ValidatedAnswer
    trace: AskTrace
    result: AskResult


class Answering:
    """Builds the generators and answers ``AskRequest``s through the Desk's searchers."""

    def __init__(self, state: DeskState, searching: Searching) -> None:
        self.state = state
        self.searching = searching
        self._generators: dict[str, Generator] = {}

    def drop_generators(self) -> None:
        with self.state.lock:
            self._generators.clear()

    def generator(self, name: str | None = None) -> Generator:
        state = self.state
        chosen = name or state.settings.generator.name
        with state.lock:
            if chosen not in self._generators:
                self._generators[chosen] = build_generator(state.settings, chosen)
            return self._generators[chosen]

    def prepare_generator(self, name: str | None, queue_limit: int | None) -> bool:
        from evidencedesk.answer.generators.base import StreamingGenerator

        built = self.generator(name)
        queue = getattr(built, "queue", None)
        if queue_limit is not None and queue is not None and hasattr(queue, "limit"):
            queue.limit = queue_limit
        return isinstance(built, StreamingGenerator)

    def answerability_gate(self, generator: Generator, settings: Settings | None = None) -> AnswerabilityGate | None:
        from evidencedesk.answer.gate import AnswerabilityGate, Assessor

        s = settings or self.state.settings
        if not s.generator.answerability_gate or getattr(generator, "name", "") == "extractive":
            return None
        assessor = self.generator("extractive")
        return AnswerabilityGate(assessor) if isinstance(assessor, Assessor) else None

    def ask(self, request: AskRequest) -> AskResult:
        with self.ask_stream(request) as events:
            for event in events:
                if isinstance(event, AnswerDone):
                    return event.result
        raise GenerationError("the generator stopped before it finished its answer")

    def answered(self, request: AskRequest, evidence: Sequence[Chunk] | None = None) -> Answered:
        """What ``ask`` returns for ``request``, with the validated answer and the trace it was made from:
        the same code path, stage for stage. ``evidence`` (the chunks holding the label's gold phrases,
        already gathered) spares the labelled diagnosis its own read of the store."""
        kept: list[Answered] = []
        with self._stream(request, evidence, kept) as events:
            for event in events:
                if isinstance(event, AnswerDone):
                    return kept[-1]
        raise GenerationError("the generator stopped before it finished its answer")

    def ask_stream(self, request: AskRequest) -> AskStream:
        """Check the request against the settings and join the generator's queue now; retrieve, generate
        and validate as the stream is read."""
        return self._stream(request, None, None)

    def _stream(
        self, request: AskRequest, evidence: Sequence[Chunk] | None, kept: list[Answered] | None
    ) -> AskStream:  # fmt: skip
        from evidencedesk.answer.pipeline import ask_result, generate_stream, prepare

        r, state = request, self.state
        s = state.with_settings(
            Overrides(
                k=r.k,
                rerank_candidates=r.candidates,
                budget_tokens=r.budget_tokens,
                floor=r.floor,
                dedup_threshold=r.dedup_threshold,
                order=r.order,
            )
        )
        k = s.retrieval.k
        depth = r.candidates if r.candidates is not None else max(s.retrieval.rerank.candidates, k)
        if depth < k:
            raise ConfigError(f"candidates: must be at least k ({k}), got {depth}")

        def gen() -> Generator:
            return self.generator(r.generator)

        answerer = gen()
        reranker = build_reranker(r.rerank if r.rerank is not None else rerank_spec(s), gen, s)
        the_scope = state.scope(r.scope)
        rewriter = build_rewriter(r.rewrite, gen)
        options = context_options(s)
        gate = self.answerability_gate(answerer, s)
        on_unsupported = s.generator.on_unsupported
        stop = threading.Event()
        admit = getattr(answerer, "admit", None)
        ticket = admit() if callable(admit) else None
        release = ticket.release if ticket is not None else None

        def events() -> Iterator[AskEvent]:
            by_id: Mapping[str, Chunk]
            if r.over is None:
                stage = self.searching.first_stage(r.method)
                by_id = ScopedChunks(state.store, the_scope)
            else:
                stage = first_stage(r.over[0], s)
                by_id = {c.id: c for c in r.over[1] if the_scope.allows_chunk(c)}
            searcher = stage.searcher
            prepared = prepare(
                r.question, searcher, answerer, scope=the_scope, k=k, candidates=depth, reranker=reranker,
                rewrite=rewriter, diversify=stage.diversify, **options.as_kwargs(),
            )  # fmt: skip
            diagnose = _diagnosis(r.label, by_id, k, evidence)
            stream = generate_stream(
                prepared, answerer, by_id, diagnose, max_tokens=r.max_tokens, should_stop=stop.is_set, gate=gate,
                on_unsupported=on_unsupported,
            )  # fmt: skip
            for item in stream:
                if isinstance(item, str):
                    yield AnswerDelta(item)
                    continue
                checked, trace = item
                outside = None
                if r.explain_abstention and checked.abstained:
                    outside = outside_scope(stage.search(r.question, k, Scope.everything()), the_scope)
                out = ask_result(checked, trace, by_id, searcher_label(searcher), outside)
                if r.save:
                    state.store.save_trace(trace.id, out.to_dict(), owner=r.owner)
                if release is not None:
                    release()
                if kept is not None:
                    kept.append(Answered(checked, trace, out))
                yield AnswerDone(out)

        return AskStream(events(), stop, on_close=release)


def warm_models(settings: Settings) -> bool:
    """Load and run the bundled cross-encoder (and the reader) once when ``settings`` read them; whether one was
    warmed. A reader that cannot be read is left to the first question, whose error names the file and setting."""
    reader = settings.generator.name == "extractive" and settings.generator.answerability == "reader"
    if reader:
        from evidencedesk.answer.reader import ReaderUnavailable, load_reader

        try:
            load_reader(settings.generator.reader.model, settings.generator.reader.threshold).scores("warm up", ["one"])
        except (ReaderUnavailable, ImportError, OSError):
            reader = False
    rerank = settings.retrieval.rerank
    wanted = (rerank.method == "cross-encoder" and not rerank.model) or (
        settings.generator.name == "extractive" and settings.generator.answerability == "cross-encoder"
    )
    if not wanted:
        return reader
    from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, warm

    try:
        warm()
    except (CrossEncoderUnavailable, ImportError, OSError):
        return reader
    return True


__all__ = ["Answered", "Answering", "ScopedChunks", "outside_scope", "warm_models"]
