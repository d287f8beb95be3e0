"""A score floor suggested by the user's own labels: the one that best separates the questions the
documents answer from those they do not.

``context.floor`` (``--floor``) drops every candidate scoring below it; a question whose candidates all
fall below it gets an empty context, and the generator abstains. Scores depend on the method (BM25's
are unbounded sums, a hybrid's are fused and scaled), so no floor fits every corpus; the labels do
tell which floor would have served this one. For each labelled question the top retrieved score is
known: a floor keeps an answerable question's context when its top score reaches the floor, and makes
an unanswerable one abstain when its top score is under it. The suggestion is the floor that gets the
most questions right this way (ties: the lowest such floor, which keeps the most context), placed
half-way between the two top scores it falls between. None when the labels hold no unanswerable
question, no answerable one, or no floor does better than none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol


class Scored(Protocol):
    answerable: bool
    top_score: float | None


@dataclass(frozen=True)
class FloorSuggestion:
    """A score floor learnt from labels, with how many questions it would get right each way."""

    floor: float
    answerable_kept: int
    n_answerable: int
    unanswerable_abstained: int
    n_unanswerable: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def sentence(self, method: str) -> str:
        return (
            f"suggested floor for {method}: {self.floor:.4g} (from these labels: {self.unanswerable_abstained} of "
            f"{self.n_unanswerable} unanswerable questions would abstain, {self.answerable_kept} of "
            f"{self.n_answerable} answerable ones keep their context); try --floor {self.floor:.4g} or set "
            f"context.floor"
        )


def suggest_floor(questions: Sequence[Scored]) -> FloorSuggestion | None:
    """The floor that best separates answerable from unanswerable questions by their top score."""
    answerable = [q.top_score for q in questions if q.answerable]
    unanswerable = [q.top_score for q in questions if not q.answerable]
    if not answerable or not unanswerable:
        return None
    scores = sorted({s for s in answerable + unanswerable if s is not None})
    if not scores:
        return None
    # every floor between two neighbouring scores does the same; try one per gap, and one above them all
    options = [(a + b) / 2 for a, b in zip(scores, scores[1:], strict=False)] + [scores[-1] + 1.0]

    def right(floor: float) -> tuple[int, int]:
        kept = sum(1 for s in answerable if s is not None and s >= floor)
        abstained = sum(1 for s in unanswerable if s is None or s < floor)
        return kept, abstained

    base_kept, base_abstained = right(float("-inf"))
    best: tuple[int, float, int, int] | None = None
    for floor in options:
        kept, abstained = right(floor)
        total = kept + abstained
        if best is None or total > best[0]:
            best = (total, floor, kept, abstained)
    if best is None or best[0] <= base_kept + base_abstained:
        return None
    _, floor, kept, abstained = best
    return FloorSuggestion(round(floor, 4), kept, len(answerable), abstained, len(unanswerable))


__all__ = ["FloorSuggestion", "suggest_floor"]
