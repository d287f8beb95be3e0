"""EvalRun: one evaluation, aggregated: overall and per-tag metrics, label counts, question rows.

It is what ``Store.save_eval_run`` stores (as ``to_dict()``) and what the gate compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evidencedesk.evaluation.runner import QuestionResult
from evidencedesk.evaluation.slices import ALL, Stat, slices, slices_to_dict
from evidencedesk.evaluation.taxonomy import LABELS, STAGES, label_counts

_STAGE = {s: i for i, s in enumerate(STAGES)}
_LABEL = {s: i for i, s in enumerate(LABELS)}


def counts_rows(questions: Sequence[QuestionResult]) -> list[dict[str, Any]]:
    """Label counts as ``[{"stage", "label", "count"}]`` in stage then label order."""
    counts = label_counts(questions)
    keys = sorted(counts, key=lambda sl: (_STAGE.get(sl[0], 99), _LABEL.get(sl[1], 99), sl))
    return [{"stage": s, "label": lab, "count": counts[(s, lab)]} for s, lab in keys]


@dataclass
class EvalRun:
    method: str
    k: int
    scope: dict[str, Any]
    questions: list[QuestionResult]
    floor: float | None = None
    build_id: int | None = None
    chunking_hash: str = ""
    unfiltered: list[QuestionResult] | None = None  # the same run with no scope at all, for label counts
    strategies: list[dict[str, Any]] = field(default_factory=list)
    curves: dict[str, list[float]] = field(default_factory=dict)  # method -> recall@1..n
    extra: dict[str, Any] = field(default_factory=dict)

    def slices(self) -> dict[str, dict[str, Stat]]:
        return slices((q.tags, q.metrics) for q in self.questions)

    @property
    def overall(self) -> dict[str, Stat]:
        return self.slices()[ALL]

    def to_dict(self) -> dict[str, Any]:
        table = self.slices()
        answerable = [q for q in self.questions if q.answerable]
        unanswerable = [q for q in self.questions if not q.answerable]
        return {
            "method": self.method,
            "k": self.k,
            "scope": self.scope,
            "floor": self.floor,
            "build_id": self.build_id,
            "chunking_hash": self.chunking_hash,
            "n_questions": len(self.questions),
            "n_answerable": len(answerable),
            "n_unanswerable": len(unanswerable),
            "n_failed": sum(q.failed for q in self.questions),
            "junk_for_unanswerable": sum(q.returned > 0 for q in unanswerable),
            "overall": slices_to_dict(table)[ALL],
            "slices": slices_to_dict(table),
            "label_counts": counts_rows(self.questions),
            "label_counts_unfiltered": counts_rows(self.unfiltered) if self.unfiltered is not None else None,
            "strategies": list(self.strategies),
            "curves": dict(self.curves),
            "questions": [q.to_dict() for q in self.questions],
            **({"extra": self.extra} if self.extra else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvalRun:
        return cls(
            method=d.get("method", ""),
            k=int(d["k"]),
            scope=dict(d.get("scope") or {}),
            questions=[QuestionResult.from_dict(q) for q in d.get("questions", [])],
            floor=d.get("floor"),
            build_id=d.get("build_id"),
            chunking_hash=d.get("chunking_hash", ""),
            strategies=list(d.get("strategies", [])),
            curves=dict(d.get("curves", {})),
            extra=dict(d.get("extra", {})),
        )


__all__ = ["EvalRun", "counts_rows"]
