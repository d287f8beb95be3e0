"""Selective answering: how often the desk answers, how often those answers are right, and at what threshold.

Each question contributes a ``Selective`` record: whether it has an answer (answerable label),
whether the run answered it, whether that answer was right, the reader's best score for it, and
whether the reader's best unit alone would have been right (for the questions the run abstained
on, what a lower threshold would have said).

* coverage: the share of questions answered;
* accuracy among answered: the share of answered questions answered right (an answered unanswerable
  question is wrong);
* answered but wrong: how many answers were wrong;
* the risk-coverage curve: for each candidate threshold (the scores seen), the coverage and the risk
  (1 - accuracy among answered) had the reader's threshold been there: a question is answered when its
  score reaches the threshold, and right when its answer (or, below the run's threshold, its best
  unit) was right;
* the suggested threshold: the one that answers the most questions right while the risk stays at or
  below ``max_risk`` (the lowest-risk threshold when none does).

Questions without a reader score (another generator, or a language the reader skipped) count in
coverage and accuracy but not in the curve.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_RISK = 0.2  # the suggested threshold keeps wrong answers at or below this share of answers


@dataclass(frozen=True)
class Selective:
    """One question as selective answering sees it."""

    answerable: bool
    answered: bool
    correct: bool  # answered and right (never true for an unanswerable question)
    score: float | None = None  # the reader's best unit score
    best_correct: bool = False  # the reader's best unit alone would have been right

    def right_if_answered(self) -> bool:
        """Whether the question's answer is right when it is answered (below the run's threshold: its best unit)."""
        if not self.answerable:
            return False
        return self.correct if self.answered else self.best_correct


@dataclass(frozen=True)
class CurvePoint:
    """The run had the reader's threshold been ``threshold``: coverage, risk and the answers' counts."""

    threshold: float
    coverage: float
    risk: float | None  # wrong answers / answers; None when nothing is answered
    answered: int
    correct: int
    wrong: int

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "coverage": self.coverage,
            "risk": self.risk,
            "answered": self.answered,
            "correct": self.correct,
            "wrong": self.wrong,
        }


@dataclass(frozen=True)
class SuggestedThreshold:
    """The reader threshold suggested for these labels: its point of the curve, and the rule that chose it."""

    point: CurvePoint
    max_risk: float
    rule: str

    @property
    def threshold(self) -> float:
        return self.point.threshold

    def to_dict(self) -> dict[str, object]:
        return {**self.point.to_dict(), "max_risk": self.max_risk, "rule": self.rule}


@dataclass(frozen=True)
class SelectiveReport:
    """Selective answering over a set of questions: coverage, accuracy among answered, answered-but-wrong,
    the risk-coverage curve and the suggested threshold (None for an empty ratio or no scored question)."""

    n: int
    answered: int
    coverage: float | None
    correct: int
    accuracy_answered: float | None
    answered_wrong: int
    answered_unanswerable: int
    curve: tuple[CurvePoint, ...]
    suggested_threshold: SuggestedThreshold | None

    def to_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "answered": self.answered,
            "coverage": self.coverage,
            "correct": self.correct,
            "accuracy_answered": self.accuracy_answered,
            "answered_wrong": self.answered_wrong,
            "answered_unanswerable": self.answered_unanswerable,
            "curve": [p.to_dict() for p in self.curve],
            "suggested_threshold": self.suggested_threshold.to_dict() if self.suggested_threshold else None,
        }


def summary(records: Sequence[Selective]) -> dict[str, object]:
    """Coverage, accuracy among answered and answered-but-wrong over ``records`` (None for an empty ratio)."""
    found = assess(records)
    return {
        "n": found.n,
        "answered": found.answered,
        "coverage": found.coverage,
        "correct": found.correct,
        "accuracy_answered": found.accuracy_answered,
        "answered_wrong": found.answered_wrong,
        "answered_unanswerable": found.answered_unanswerable,
    }


def _point(records: Sequence[Selective], threshold: float, total: int) -> CurvePoint:
    answered = [r for r in records if r.score is not None and r.score >= threshold]
    correct = sum(r.right_if_answered() for r in answered)
    wrong = len(answered) - correct
    return CurvePoint(
        round(threshold, 4),
        len(answered) / total if total else 0.0,
        wrong / len(answered) if answered else None,
        len(answered),
        correct,
        wrong,
    )


def risk_coverage(records: Sequence[Selective], thresholds: Iterable[float] | None = None) -> list[CurvePoint]:
    """The curve over ``thresholds`` (default: every distinct score seen), lowest threshold first."""
    scored = [r for r in records if r.score is not None]
    chosen = sorted(set(thresholds if thresholds is not None else (float(r.score or 0.0) for r in scored)))
    return [_point(scored, t, len(scored)) for t in chosen]


def suggested(curve: Sequence[CurvePoint], max_risk: float = MAX_RISK) -> SuggestedThreshold | None:
    """The threshold that answers the most questions right with risk <= ``max_risk``, and the rule that chose it."""
    points = [p for p in curve if p.risk is not None]
    if not points:
        return None
    safe = [p for p in points if p.risk is not None and p.risk <= max_risk]
    if safe:
        best = max(safe, key=lambda p: (p.correct, -p.threshold))
        rule = f"the most right answers with at most {max_risk:.0%} of answers wrong"
    else:
        best = min(points, key=lambda p: (p.risk if p.risk is not None else 1.0, -p.correct))
        rule = f"no threshold keeps wrong answers at or below {max_risk:.0%}: the lowest risk"
    return SuggestedThreshold(best, max_risk, rule)


def suggest(curve: Sequence[CurvePoint], max_risk: float = MAX_RISK) -> dict[str, object] | None:
    """:func:`suggested` as JSON."""
    found = suggested(curve, max_risk)
    return found.to_dict() if found is not None else None


def assess(records: Sequence[Selective], max_risk: float = MAX_RISK) -> SelectiveReport:
    """The summary, the risk-coverage curve and the suggested threshold."""
    curve = risk_coverage(records)
    answered = [r for r in records if r.answered]
    right = sum(r.correct for r in answered)
    return SelectiveReport(
        n=len(records),
        answered=len(answered),
        coverage=len(answered) / len(records) if records else None,
        correct=right,
        accuracy_answered=right / len(answered) if answered else None,
        answered_wrong=len(answered) - right,
        answered_unanswerable=sum(not r.answerable for r in answered),
        curve=tuple(curve),
        suggested_threshold=suggested(curve, max_risk),
    )


def report(records: Sequence[Selective], max_risk: float = MAX_RISK) -> dict[str, object]:
    """:func:`assess` as one JSON-ready dict."""
    return assess(records, max_risk).to_dict()


__all__ = [
    "MAX_RISK",
    "CurvePoint",
    "Selective",
    "SelectiveReport",
    "SuggestedThreshold",
    "assess",
    "report",
    "risk_coverage",
    "suggest",
    "suggested",
    "summary",
]
