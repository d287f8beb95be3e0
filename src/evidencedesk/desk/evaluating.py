"""Evaluation for the Desk: labelled questions ranked through the Desk's own first stage (what ``search``
shows) and, when asked, answered through its own ``ask``; the failing ones diagnosed from the traces of
those answers, strategies compared, recall measured against chunk size; and what needs no store: BEIR
runs, HTML reports and the comparison of two runs.

Evaluation reads the store's chunks once per call, in batches, and keeps only those that hold a gold
phrase (``evaluation.evidence``): no other chunk changes a metric or a finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError, NothingInScope, StoreError
from evidencedesk.results.evaluation import BeirSummary, Diagnosis, EvalRun
from evidencedesk.retrieval.scope import Scope
from evidencedesk.wiring import searcher_params

from .answering import Answered, Answering, ScopedChunks
from .index_upkeep import IndexUpkeep
from .request import AskRequest
from .searching import Searching
from .state import DeskState

if TYPE_CHECKING:
    from evidencedesk.evaluation.gate import Comparison
    from evidencedesk.evaluation.labels import Label
    from evidencedesk.evaluation.report_html import SizeSeries
    from evidencedesk.evaluation.strategies import StrategyRow

Labels = str | Path | Sequence["Label"]  # a labels file, or labels already loaded
ScopeLike = Scope | Mapping[str, Any] | None
RunLike = EvalRun | Mapping[str, object]  # a run, or its JSON (a stored run, a run file)


def read_labels(labels: Labels) -> list[Label]:
    """A labels file's rows, or the labels given; ConfigError when there are none."""
    from evidencedesk.evaluation.labels import load_labels

    rows = load_labels(Path(labels)) if isinstance(labels, str | Path) else list(labels)
    if not rows:
        raise ConfigError(f"no labels in {labels}" if isinstance(labels, str | Path) else "no labels given")
    return rows


def run_json(run: RunLike) -> Mapping[str, object]:
    """A run as JSON: ``to_dict()`` of an ``EvalRun``, a mapping as it is."""
    return run.to_dict() if isinstance(run, EvalRun) else run


class Evaluating:
    """Scores labelled questions through the Desk's searchers and generators."""

    def __init__(self, state: DeskState, index: IndexUpkeep, searching: Searching, answering: Answering) -> None:
        self.state = state
        self.index = index
        self.searching = searching
        self.answering = answering

    def evaluate(
        self, labels: Labels, method: str | None, k: int | None, scope: ScopeLike, *, floor: float | None,
        methods: Sequence[str], answers: str | None, unfiltered: bool, hide_outside_scope: bool, size_series: bool,
        save: bool, owner: str | None,
    ) -> EvalRun:  # fmt: skip
        from evidencedesk.evaluation.runner import evaluate
        from evidencedesk.evaluation.strategies import compare_strategies, recall_curve, strategy_row

        state = self.state
        s = state.settings
        method = method or s.retrieval.method
        k = k or s.retrieval.k
        floor = floor if floor is not None else s.context.floor
        the_scope = state.scope(scope)
        rows = read_labels(labels)
        chunks = self.evidence(rows, the_scope if hide_outside_scope else None)
        stage = self.searching.first_stage(method)
        results = evaluate(stage, rows, chunks, the_scope, k, floor)
        table, curves = [strategy_row(method, results, k)], {method: recall_curve(results)}
        others = {m: self.searching.first_stage(m) for m in dict.fromkeys(methods) if m != method}
        if others:
            more_rows, more_curves = compare_strategies(others, rows, chunks, the_scope, k)
            table, curves = table + more_rows, {**curves, **more_curves}
        build = state.store.latest_build()
        run = EvalRun.of(
            method, k, the_scope.to_dict(), results,
            unfiltered=evaluate(stage, rows, chunks, Scope.everything(), k, floor) if unfiltered else None,
            strategies=table, curves=curves, floor=floor, build_id=build.id if build else None,
            chunking_hash=build.chunking_hash if build else "",
            labels=str(labels) if isinstance(labels, str | Path) else "(labels)",
        )  # fmt: skip
        if answers is not None:
            from evidencedesk.evaluation.answers import score_answers

            answered = self.answer(rows, answers, method, k, the_scope, floor, chunks)
            name = getattr(self.answering.generator(answers), "name", answers)
            scored = score_answers(
                name, [(x, a.checked, a.trace) for x, a in zip(rows, answered, strict=True)], chunks,
                ScopedChunks(state.store, the_scope, chunks),
            )  # fmt: skip
            run = replace(run, answers=scored)
        if size_series:
            run = replace(run, size_series=tuple(self.size_series(rows, method, the_scope)))
        if save:
            run = replace(run, run_id=state.store.save_eval_run(run.to_dict(), owner=owner))
        return run

    def answer(
        self, labels: Sequence[Label], generator: str | None, method: str | None, k: int | None, scope: Scope,
        floor: float | None, evidence: Sequence[Chunk],
    ) -> list[Answered]:  # fmt: skip
        """Every label asked as ``ask`` asks it (the Desk's answering path: first stage, reranker and its
        min_score, context, answerability gate, generator, validation), its trace diagnosed against the label;
        ``evidence`` holds the chunks with the labels' gold phrases."""
        return [
            self.answering.answered(
                AskRequest(
                    label.question, scope, generator=generator, method=method, k=k, floor=floor, label=label, save=False
                ),
                evidence,
            )  # fmt: skip
            for label in labels
        ]

    def evidence(self, labels: Sequence[Label], scope: Scope | None = None) -> list[Chunk]:
        """The stored chunks (inside ``scope``, when given) that hold a gold phrase of ``labels``, read
        in batches; an error when the store (or the scope) holds no chunk at all."""
        from evidencedesk.evaluation.evidence import gather_evidence

        state = self.state
        state.build_id()
        found = gather_evidence(state.store.iter_chunks(), labels, scope)
        if not found.read:
            raise StoreError(f"store {state.location} holds no chunks")
        if not found.in_scope:
            raise NothingInScope("the store holds no chunk inside this scope")
        return found.chunks

    def size_series(self, labels: Sequence[Label], method: str | None, scope: Scope | None) -> list[SizeSeries]:
        from evidencedesk.evaluation.series import DEFAULT_CONFIGS, DEFAULT_KS, chunk_size_series

        state = self.state
        method = method or state.settings.retrieval.method
        state.check_memory("the size series", "it re-chunks every document four ways; leave it out")
        the_scope = state.scope(scope)
        documents = [d for d in state.store.documents() if the_scope.allows(d.metadata, d.id)]
        params = searcher_params(state.settings, method, state.embeddings_file)
        return chunk_size_series(
            documents, labels, the_scope, method, DEFAULT_CONFIGS, DEFAULT_KS, **params.as_kwargs()
        )

    def strategies(self, labels: Labels, methods: Sequence[str], k: int | None, scope: ScopeLike) -> list[StrategyRow]:
        from evidencedesk.evaluation.strategies import compare_strategies

        state = self.state
        searchers = {m: self.searching.first_stage(m) for m in methods}
        rows, _ = compare_strategies(
            searchers, read_labels(labels), self.index.chunks(), state.scope(scope), k=k or state.settings.retrieval.k
        )
        return list(rows)

    def diagnose(
        self, labels: Labels, method: str | None, k: int | None, scope: ScopeLike, floor: float | None,
        generator: str | None = None,
    ) -> list[Diagnosis]:  # fmt: skip
        """Each labelled question answered as ``ask`` answers it, and diagnosed from that answer's trace: a
        lost answer is named where ``ask`` lost it (first stage, reranker, collapsing, floor, duplicate,
        budget, generation or citation), never inferred from a retrieval-only run."""
        state = self.state
        rows = read_labels(labels)
        answered = self.answer(rows, generator, method, k, state.scope(scope), floor, self.evidence(rows))
        return [
            Diagnosis(label.id, label.question, tuple(a.trace.findings))
            for label, a in zip(rows, answered, strict=True)
            if a.trace.findings
        ]


def beir(
    settings: Settings,
    dataset_dir: str | Path,
    method: str,
    store_dir: str | Path,
    split: str,
    run_out: str | Path | None,
    *,
    k1: float | None = None,
    b: float | None = None,
    stem: bool | None = None,
    stopwords: bool | None = None,
    contextual: bool | None = None,
    fusion: str | None = None,
    progress: bool = False,
) -> BeirSummary:
    """``method`` scored on the BEIR dataset (indexed once in ``store_dir``); the keywords override ``settings``."""
    from evidencedesk.benchmarks import beir_params, run_beir

    params = beir_params(
        settings, method, store_dir, k1=k1, b=b, stem=stem, stopwords=stopwords, contextual=contextual, fusion=fusion,
        progress=progress,
    )  # fmt: skip
    return run_beir(dataset_dir, method, store_dir, params, split=split, run_out=run_out)


def report_html(run: RunLike, title: str, size_series: Sequence[SizeSeries] | None) -> str:
    """The run as one HTML page, its size curves ``size_series`` (None: the ones the run carries)."""
    from evidencedesk.evaluation.report_html import render_report

    if size_series is None:
        size_series = (run.size_series or ()) if isinstance(run, EvalRun) else _stored_series(run)
    return render_report(run_json(run), size_series=size_series, title=title)


def _stored_series(run: Mapping[str, object]) -> list[SizeSeries]:
    """The size curves a run's JSON carries."""
    from evidencedesk.evaluation.report_html import SizeSeries

    stored = run.get("size_series")
    return [SizeSeries.from_dict(s) for s in stored] if isinstance(stored, list) else []


def compare_runs(run_a: RunLike, run_b: RunLike, threshold: float) -> Comparison:
    """``run_b`` against the baseline ``run_a``, slice by slice (``evaluation.gate.compare``)."""
    from evidencedesk.evaluation.gate import compare

    return compare(run_json(run_a), run_json(run_b), threshold)


def labelled_questions(labels: str | Path) -> list[Label]:
    """The labels of a ``labels.jsonl`` file (a shortcut for ``evaluation.labels.load_labels``)."""
    from evidencedesk.evaluation.labels import load_labels

    return load_labels(Path(labels))


__all__ = [
    "Diagnosis",
    "Evaluating",
    "RunLike",
    "beir",
    "compare_runs",
    "labelled_questions",
    "read_labels",
    "report_html",
    "run_json",
]
