"""A floor suggested from the labels: the one that best separates answerable from unanswerable questions."""

from __future__ import annotations

from dataclasses import dataclass

from evidencedesk.evaluation.floor import suggest_floor


@dataclass
class Q:
    answerable: bool
    top_score: float | None


def test_the_floor_sits_half_way_between_the_scores_it_separates() -> None:
    questions = [Q(True, 20.0), Q(True, 15.0), Q(True, 9.0), Q(False, 8.0), Q(False, 3.0), Q(False, None)]
    found = suggest_floor(questions)
    assert found is not None and found.floor == 8.5
    assert (found.answerable_kept, found.n_answerable) == (3, 3)
    assert (found.unanswerable_abstained, found.n_unanswerable) == (3, 3)
    assert "--floor 8.5" in found.sentence("bm25")


def test_overlapping_scores_take_the_floor_that_gets_most_questions_right() -> None:
    # 12 would lose one answerable (10) to catch one unanswerable (11): no better; 7 catches one for free
    questions = [Q(True, 20.0), Q(True, 10.0), Q(False, 11.0), Q(False, 6.0)]
    found = suggest_floor(questions)
    assert found is not None and found.floor == 8.0
    assert (found.answerable_kept, found.unanswerable_abstained) == (2, 1)


def test_no_suggestion_without_both_kinds_or_when_no_floor_helps() -> None:
    assert suggest_floor([Q(True, 3.0), Q(True, 4.0)]) is None
    assert suggest_floor([Q(False, 3.0)]) is None
    assert suggest_floor([Q(True, 3.0), Q(False, 9.0)]) is None  # any floor that catches 9 loses 3
    assert suggest_floor([Q(True, 3.0), Q(False, None)]) is None  # it abstains already
