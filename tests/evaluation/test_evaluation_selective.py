"""Selective answering: coverage, accuracy among answered, answered-but-wrong, the risk-coverage curve and
the suggested threshold, from per-question records with the reader's best score."""

from __future__ import annotations

from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.evaluation.answers import evaluate_answers
from evidencedesk.evaluation.labels import Gold, Label
from evidencedesk.evaluation.report_html import render_report
from evidencedesk.evaluation.selective import Selective, report, risk_coverage, suggest, summary
from evidencedesk.retrieval.factory import make_searcher
from tests.evaluation.test_evaluation_answers import TINY

# answerable and right (3.0, 2.0), answerable and wrong (1.5), unanswerable answered (1.0),
# answerable abstained whose best unit was right (-0.5), unanswerable abstained (-2.0)
RECORDS = [
    Selective(True, True, True, 3.0),
    Selective(True, True, True, 2.0),
    Selective(True, True, False, 1.5),
    Selective(False, True, False, 1.0),
    Selective(True, False, False, -0.5, best_correct=True),
    Selective(False, False, False, -2.0),
]


def test_summary_counts_coverage_accuracy_among_answered_and_wrong_answers() -> None:
    got = summary(RECORDS)
    assert (got["n"], got["answered"], got["correct"], got["answered_wrong"]) == (6, 4, 2, 2)
    assert got["coverage"] == 4 / 6 and got["accuracy_answered"] == 0.5 and got["answered_unanswerable"] == 1
    assert summary([])["coverage"] is None and summary([Selective(False, False, False)])["accuracy_answered"] is None


def test_the_curve_answers_what_reaches_each_threshold() -> None:
    curve = {p.threshold: p for p in risk_coverage(RECORDS)}
    assert sorted(curve) == [-2.0, -0.5, 1.0, 1.5, 2.0, 3.0]
    assert (curve[3.0].answered, curve[3.0].risk, curve[3.0].coverage) == (1, 0.0, 1 / 6)
    assert (curve[1.0].correct, curve[1.0].wrong) == (2, 2)
    # below the run's threshold the abstained question's best unit counts: it was right
    assert (curve[-0.5].correct, curve[-0.5].wrong, curve[-0.5].answered) == (3, 2, 5)
    assert curve[-2.0].coverage == 1.0 and curve[-2.0].wrong == 3


def test_the_suggested_threshold_keeps_risk_under_the_limit_with_the_most_right_answers() -> None:
    curve = risk_coverage(RECORDS)
    found = suggest(curve, max_risk=0.34)
    assert found is not None and found["threshold"] == 1.5 and found["correct"] == 2 and found["wrong"] == 1
    none_safe = suggest(curve, max_risk=-1.0)
    assert none_safe is not None and none_safe["threshold"] == 2.0 and "lowest risk" in none_safe["rule"]
    assert suggest([]) is None
    assert report(RECORDS)["suggested_threshold"] == suggest(curve)


def test_records_without_a_reader_score_count_in_coverage_but_not_in_the_curve() -> None:
    records = [*RECORDS, Selective(True, True, True, None)]
    assert summary(records)["answered"] == 5
    assert max(p.answered for p in risk_coverage(records)) == 6


def test_eval_answers_report_selective_answering_from_the_reader_and_the_html_shows_it() -> None:
    labels = [
        Label("t1", "How many days do I have to return a purchase?", ("paraphrase",), True,
              (Gold("Returns are accepted within 30 days", 2),), answer="30 days from delivery."),
        Label("t3", "Do you sell electric scooters?", ("unanswerable",), False),
    ]  # fmt: skip
    result = evaluate_answers(make_searcher("bm25", TINY), labels, TINY, ExtractiveGenerator(reader="reader"), k=2)
    assert result.records[0].reader_score is not None  # the answerable one reached the reader
    sel = result.to_dict()["selective"]
    assert sel["n"] == 2 and len(sel["curve"]) >= 1 and sel["suggested_threshold"] is not None
    html = render_report({"answers": result.to_dict()})
    assert "id=selective" in html and "risk-coverage" in html and "id=suggested-threshold" in html
