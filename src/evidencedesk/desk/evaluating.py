"""Evaluation for the Desk: labelled questions ranked through the Desk's own first stage (what ``search``
shows) and, when asked, answered through its own ``ask``; the failing ones diagnosed from the traces of
those answers, strategies compared, recall measured against chunk size; and what needs no store: BEIR
runs, HTML reports and the comparison of two runs.

Evaluation reads the store's chunks once per call, in batches, and keeps only those that hold a gold
phrase (``evaluation.evidence``): no other chunk changes a metric or a finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError, NothingInScope, StoreError
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Finding
from evidencedesk.wiring import searcher_params

from .answering import Answered, Answering, ScopedChunks
from .index_upkeep import IndexUpkeep
from .request import AskRequest
from .searching import Searching
from .state import DeskState

Labels = str | Path | Sequence[Any]  # a labels file, or labels already loaded
ScopeLike = Scope | Mapping[str, Any] | None


@dataclass(frozen=True)
class Diagnosis:
    """The first (root-cause) finding of one failing labelled question, and all its findings."""

    question_id: str
    question: str
    findings: tuple[Finding, ...]

    @property
    def root(self) -> Finding:
        return self.findings[0]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.question_id, "question": self.question, "findings": [f.to_dict() for f in self.findings]}


def read_labels(labels: Labels) -> list[Any]:
    """A labels file's rows, or the labels given; ConfigError when there are none."""
    from evidencedesk.evaluation.labels import load_labels

    rows = load_labels(Path(labels)) if isinstance(labels, str | Path) else list(labels)
    if not rows:
        raise ConfigError(f"no labels in {labels}" if isinstance(labels, str | Path) else "no labels given")
    return rows


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
    ) -> dict[str, Any]:  # fmt: skip
        from evidencedesk.evaluation.floor import suggest_floor
        from evidencedesk.evaluation.run import EvalRun
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
        run = EvalRun(
            method=method,
            k=k,
            scope=the_scope.to_dict(),
            questions=results,
            floor=floor,
            build_id=build.id if build else None,
            chunking_hash=build.chunking_hash if build else "",
            unfiltered=evaluate(stage, rows, chunks, Scope.everything(), k, floor) if unfiltered else None,
            strategies=[r.to_dict() for r in table],
            curves=curves,
        ).to_dict()
        run["labels"] = str(labels) if isinstance(labels, str | Path) else "(labels)"
        suggested = suggest_floor(results)
        run["suggested_floor"] = suggested.to_dict() if suggested is not None else None
        if answers is not None:
            from evidencedesk.evaluation.answers import score_answers

            answered = self.answer(rows, answers, method, k, the_scope, floor, chunks)
            name = getattr(self.answering.generator(answers), "name", answers)
            run["answers"] = score_answers(
                name, [(x, a.checked, a.trace) for x, a in zip(rows, answered, strict=True)], chunks,
                ScopedChunks(state.store, the_scope, chunks),
            ).to_dict()  # fmt: skip
        if size_series:
            run["size_series"] = [p.to_dict() for p in self.size_series(rows, method, the_scope)]
        if save:
            run["run_id"] = state.store.save_eval_run(run, owner=owner)
        return run

    def answer(
        self, labels: Sequence[Any], generator: str | None, method: str | None, k: int | None, scope: Scope,
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

    def evidence(self, labels: Sequence[Any], scope: Scope | None = None) -> list[Chunk]:
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

    def size_series(self, labels: Sequence[Any], method: str | None, scope: Scope | None) -> list[Any]:
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

    def strategies(self, labels: Labels, methods: Sequence[str], k: int | None, scope: ScopeLike) -> list[Any]:
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
    options: dict[str, Any],
) -> dict[str, Any]:
    from evidencedesk.benchmarks import beir_params, run_beir

    params = beir_params(settings, method, store_dir, **options)
    return run_beir(dataset_dir, method, store_dir, params, split=split, run_out=run_out)


def report_html(run: Mapping[str, Any], title: str, size_series: Sequence[Any] | None) -> str:
    from evidencedesk.evaluation.report_html import SizeSeries, render_report

    if size_series is None:
        size_series = [
            SizeSeries(s["name"], tuple(tuple(p) for p in s["points"])) for s in run.get("size_series") or []
        ]
    return render_report(run, size_series=size_series, title=title)


def compare_runs(run_a: Mapping[str, Any], run_b: Mapping[str, Any], threshold: float) -> Any:
    from evidencedesk.evaluation.gate import compare

    return compare(dict(run_a), dict(run_b), threshold)


def labelled_questions(labels: str | Path) -> Sequence[Any]:
    """The labels of a ``labels.jsonl`` file (a shortcut for ``evaluation.labels.load_labels``)."""
    from evidencedesk.evaluation.labels import load_labels

    return load_labels(Path(labels))


__all__ = [
    "Diagnosis",
    "Evaluating",
    "beir",
    "compare_runs",
    "labelled_questions",
    "read_labels",
    "report_html",
]
