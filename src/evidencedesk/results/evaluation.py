"""Typed results of evaluation: what ``Desk.evaluate``, ``diagnose``, ``strategies``, ``size_series``,
``beir`` and ``compare`` return.

Each is a frozen dataclass read by attribute; ``to_dict()`` gives the public JSON (what ``--json``, the
service and the store hold), key order included. ``EvalRun.from_dict`` reads that JSON back (a stored
run, or a run file): ``EvalRun.from_dict(run.to_dict()).to_dict() == run.to_dict()``.

The result types that live beside their computation are re-exported here: ``StrategyRow``
(``evaluation.strategies``), ``SizeSeries`` (``evaluation.report_html``), ``FloorSuggestion``
(``evaluation.floor``), ``AnswerEvaluation`` (``evaluation.answers``), ``SelectiveReport``
(``evaluation.selective``), ``Comparison`` and ``Delta`` (``evaluation.gate``), ``Stat``
(``evaluation.slices``) and ``QuestionResult`` (``evaluation.runner``). They load on first use, so
importing this module (the Desk does) pulls in no searcher.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from evidencedesk.trace import Finding

if TYPE_CHECKING:  # at run time these load on first use (``__getattr__`` below)
    from evidencedesk.evaluation.answers import AnswerEvaluation as AnswerEvaluation
    from evidencedesk.evaluation.answers import AnswerRecord as AnswerRecord
    from evidencedesk.evaluation.floor import FloorSuggestion as FloorSuggestion
    from evidencedesk.evaluation.gate import Comparison as Comparison
    from evidencedesk.evaluation.gate import Delta as Delta
    from evidencedesk.evaluation.report_html import SizeSeries as SizeSeries
    from evidencedesk.evaluation.runner import QuestionResult as QuestionResult
    from evidencedesk.evaluation.selective import SelectiveReport as SelectiveReport
    from evidencedesk.evaluation.slices import Stat as Stat
    from evidencedesk.evaluation.strategies import StrategyRow as StrategyRow

JSONObject = dict[str, object]  # a JSON object as ``to_dict()`` gives it


@dataclass(frozen=True)
class Diagnosis:
    """The first (root-cause) finding of one failing labelled question, and all its findings."""

    question_id: str
    question: str
    findings: tuple[Finding, ...]

    @property
    def root(self) -> Finding:
        """The first finding: the stage where the evidence was lost."""
        return self.findings[0]

    def to_dict(self) -> JSONObject:
        return {"id": self.question_id, "question": self.question, "findings": [f.to_dict() for f in self.findings]}

    def failing_dict(self) -> JSONObject:
        """The row of ``evidencedesk diagnose --json``'s ``failing`` list: the root finding as ``first``."""
        return {
            "id": self.question_id,
            "question": self.question,
            "first": self.root.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True)
class LabelCount:
    """How many questions of a run have one finding (stage and label)."""

    stage: str
    label: str
    count: int

    def to_dict(self) -> JSONObject:
        return {"stage": self.stage, "label": self.label, "count": self.count}


def counts_rows(questions: Sequence[QuestionResult]) -> tuple[LabelCount, ...]:
    """The label counts of ``questions`` in stage then label order (taxonomy order; unknown ones last)."""
    from evidencedesk.evaluation.taxonomy import LABELS, STAGES, label_counts

    stage_at = {s: i for i, s in enumerate(STAGES)}
    label_at = {s: i for i, s in enumerate(LABELS)}
    counts = label_counts(questions)
    keys = sorted(counts, key=lambda sl: (stage_at.get(sl[0], 99), label_at.get(sl[1], 99), sl))
    return tuple(LabelCount(s, lab, counts[(s, lab)]) for s, lab in keys)


@dataclass(frozen=True)
class EvalRun:
    """One evaluation of labelled questions: the per-question rows and everything aggregated from them.

    ``questions`` are the scored questions; the overall and per-tag metrics (``overall``, ``slices``)
    and the label counts are computed from them. ``label_counts_unfiltered`` are the counts of the same
    run with no scope (None when not measured). ``labels`` names the labels ("(labels)" when they were
    given loaded); ``answers`` is the answer-level evaluation when the run answered its questions;
    ``size_series`` the recall against context size when measured; ``run_id`` the stored run's id.
    """

    method: str
    k: int
    scope: Mapping[str, object]
    questions: tuple[QuestionResult, ...]
    floor: float | None = None
    build_id: int | None = None
    chunking_hash: str = ""
    label_counts_unfiltered: tuple[LabelCount, ...] | None = None
    strategies: tuple[StrategyRow, ...] = ()
    curves: Mapping[str, Sequence[float]] = field(default_factory=dict)  # method -> recall@1..n
    extra: Mapping[str, object] = field(default_factory=dict)
    labels: str = "(labels)"
    suggested_floor: FloorSuggestion | None = None
    answers: AnswerEvaluation | None = None
    size_series: tuple[SizeSeries, ...] | None = None
    run_id: int | None = None

    @classmethod
    def of(
        cls,
        method: str,
        k: int,
        scope: Mapping[str, object],
        questions: Sequence[QuestionResult],
        *,
        unfiltered: Sequence[QuestionResult] | None = None,
        strategies: Sequence[StrategyRow] = (),
        curves: Mapping[str, Sequence[float]] | None = None,
        floor: float | None = None,
        build_id: int | None = None,
        chunking_hash: str = "",
        labels: str = "(labels)",
    ) -> EvalRun:
        """A run of scored ``questions``, its floor suggested from them; ``unfiltered`` is the same run
        with no scope, kept as its label counts."""
        from evidencedesk.evaluation.floor import suggest_floor

        return cls(
            method=method,
            k=k,
            scope=scope,
            questions=tuple(questions),
            floor=floor,
            build_id=build_id,
            chunking_hash=chunking_hash,
            label_counts_unfiltered=counts_rows(unfiltered) if unfiltered is not None else None,
            strategies=tuple(strategies),
            curves=dict(curves or {}),
            labels=labels,
            suggested_floor=suggest_floor(questions),
        )

    @cached_property
    def slices(self) -> dict[str, dict[str, Stat]]:
        """``{slice: {metric: Stat}}``: slice ``all`` holds every question, the others one tag each."""
        from evidencedesk.evaluation.slices import slices

        return slices((q.tags, q.metrics) for q in self.questions)

    @property
    def overall(self) -> dict[str, Stat]:
        """Every metric over all questions."""
        from evidencedesk.evaluation.slices import ALL

        return self.slices[ALL]

    @property
    def answerable(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.answerable]

    @property
    def unanswerable(self) -> list[QuestionResult]:
        return [q for q in self.questions if not q.answerable]

    @property
    def n_failed(self) -> int:
        """How many questions have a finding."""
        return sum(q.failed for q in self.questions)

    @property
    def junk_for_unanswerable(self) -> int:
        """How many unanswerable questions still got results."""
        return sum(q.returned > 0 for q in self.unanswerable)

    @cached_property
    def label_counts(self) -> tuple[LabelCount, ...]:
        """How many questions have each finding, inside the run's scope."""
        return counts_rows(self.questions)

    def to_dict(self) -> JSONObject:
        """The run as JSON: what ``--json`` prints (after ``run_id``), the service returns and the store keeps."""
        from evidencedesk.evaluation.slices import ALL, slices_to_dict

        table = slices_to_dict(self.slices)
        unfiltered = self.label_counts_unfiltered
        out: JSONObject = {
            "method": self.method,
            "k": self.k,
            "scope": dict(self.scope),
            "floor": self.floor,
            "build_id": self.build_id,
            "chunking_hash": self.chunking_hash,
            "n_questions": len(self.questions),
            "n_answerable": len(self.answerable),
            "n_unanswerable": len(self.unanswerable),
            "n_failed": self.n_failed,
            "junk_for_unanswerable": self.junk_for_unanswerable,
            "overall": table[ALL],
            "slices": table,
            "label_counts": [c.to_dict() for c in self.label_counts],
            "label_counts_unfiltered": [c.to_dict() for c in unfiltered] if unfiltered is not None else None,
            "strategies": [r.to_dict() for r in self.strategies],
            "curves": {m: list(c) for m, c in self.curves.items()},
            "questions": [q.to_dict() for q in self.questions],
            **({"extra": dict(self.extra)} if self.extra else {}),
            "labels": self.labels,
            "suggested_floor": self.suggested_floor.to_dict() if self.suggested_floor is not None else None,
        }
        if self.answers is not None:
            out["answers"] = self.answers.to_dict()
        if self.size_series is not None:
            out["size_series"] = [s.to_dict() for s in self.size_series]
        if self.run_id is not None:
            out["run_id"] = self.run_id
        return out

    def response(self) -> JSONObject:
        """What ``eval --json`` prints and ``POST /eval`` returns: ``run_id`` (None when not stored) first."""
        out = self.to_dict()
        out.pop("run_id", None)
        return {"run_id": self.run_id, **out}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EvalRun:
        """A run read back from its JSON (``to_dict()``, a stored run, or ``eval --json``'s output); a
        stored run's ``id`` becomes ``run_id``."""
        from evidencedesk.evaluation.answers import AnswerEvaluation
        from evidencedesk.evaluation.floor import FloorSuggestion
        from evidencedesk.evaluation.report_html import SizeSeries
        from evidencedesk.evaluation.runner import QuestionResult
        from evidencedesk.evaluation.strategies import StrategyRow

        unfiltered = d.get("label_counts_unfiltered")
        floor = d.get("suggested_floor")
        answers = d.get("answers")
        series = d.get("size_series")
        run_id = d.get("run_id", d.get("id"))
        return cls(
            method=str(d.get("method", "")),
            k=int(d["k"]),
            scope=dict(d.get("scope") or {}),
            questions=tuple(QuestionResult.from_dict(q) for q in d.get("questions", [])),
            floor=d.get("floor"),
            build_id=d.get("build_id"),
            chunking_hash=str(d.get("chunking_hash", "")),
            label_counts_unfiltered=tuple(LabelCount(**c) for c in unfiltered) if unfiltered is not None else None,
            strategies=tuple(StrategyRow.from_dict(r) for r in d.get("strategies", [])),
            curves={str(m): [float(v) for v in c] for m, c in (d.get("curves") or {}).items()},
            extra=dict(d.get("extra") or {}),
            labels=str(d.get("labels", "(labels)")),
            suggested_floor=FloorSuggestion(**floor) if floor else None,
            answers=AnswerEvaluation.from_dict(answers) if answers else None,
            size_series=tuple(SizeSeries.from_dict(s) for s in series) if series is not None else None,
            run_id=int(run_id) if run_id is not None else None,
        )


@dataclass(frozen=True)
class BeirSummary:
    """One method scored on a BEIR dataset: its scores (nDCG@10, recall@100, MRR@10) and how long it took."""

    method: str
    split: str
    n_queries: int
    n_docs: int
    scores: Mapping[str, float]  # "ndcg@10", "recall@100", "mrr@10", rounded to 4 places
    seconds: float

    def to_dict(self) -> JSONObject:
        return {
            "method": self.method,
            "split": self.split,
            "n_queries": self.n_queries,
            "n_docs": self.n_docs,
            **self.scores,
            "seconds": self.seconds,
        }


_EXPORTS = {
    "AnswerEvaluation": "evidencedesk.evaluation.answers",
    "AnswerRecord": "evidencedesk.evaluation.answers",
    "Comparison": "evidencedesk.evaluation.gate",
    "Delta": "evidencedesk.evaluation.gate",
    "FloorSuggestion": "evidencedesk.evaluation.floor",
    "QuestionResult": "evidencedesk.evaluation.runner",
    "SelectiveReport": "evidencedesk.evaluation.selective",
    "SizeSeries": "evidencedesk.evaluation.report_html",
    "Stat": "evidencedesk.evaluation.slices",
    "StrategyRow": "evidencedesk.evaluation.strategies",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AnswerEvaluation",
    "AnswerRecord",
    "BeirSummary",
    "Comparison",
    "Delta",
    "Diagnosis",
    "EvalRun",
    "FloorSuggestion",
    "JSONObject",
    "LabelCount",
    "QuestionResult",
    "SelectiveReport",
    "SizeSeries",
    "Stat",
    "StrategyRow",
    "counts_rows",
]
