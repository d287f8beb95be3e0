"""Figures in answers: normalisation of separators, currency, percent, scale words and table units."""

from __future__ import annotations

import pytest

from evidencedesk.evaluation.figures import figures, figures_found, holds_gold_figure


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Purchases of PP&E were 1,577 in 2018.", "$1577.00"),  # a table in millions
        ("The total is $8.4 billion.", "$8,400,000,000"),
        ("Borrowing capacity: 8,400 (millions)", "Total amount Pepsico may borrow = $8,400,000,000."),
        ("Diluted EPS $8.70", "$8.70"),
        ("The ratio was 24.3.", "24.26"),  # rounded by the answer
        ("Growth of 1.9 percent.", "1.9%"),
        ("Cash from operations was $1.8 bn in FY 2023.", "Best Buy generated ($1.8 bn)"),
    ],
)
def test_answer_states_the_gold_figure(answer: str, gold: str) -> None:
    assert holds_gold_figure(answer, gold) is True


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Purchases of PP&E were 1,578.", "$1577.00"),
        ("The figure is given in [2] and [c19].", "1.9%"),  # citation markers are not figures
        ("It was 2 percent.", "1.9%"),  # one digit states only an equal figure
        ("In 2022 margins fell.", "from 36.8% in FY 2021 to 34.6% in FY2022"),
    ],
)
def test_answer_does_not_state_the_gold_figure(answer: str, gold: str) -> None:
    assert holds_gold_figure(answer, gold) is False


def test_gold_without_a_figure_does_not_count() -> None:
    assert holds_gold_figure("Yes, it did.", "Yes") is None
    assert holds_gold_figure("anything", "Customer deposits in FY2022") is None  # a year is not a figure


def test_counts_each_gold_figure_once() -> None:
    gold = "declined from 36.8% in FY 2021 to 34.6% in FY2022, a drop of 2.2%"
    assert figures_found("Operating margin was 34.6% (36.8% a year before).", gold) == (2, 3)


def test_years_signs_and_scale_words() -> None:
    got = [(f.value, f.percent) for f in figures("In 2019 it fell (370) to -1.5% of $2 million")]
    assert got == [(-370.0, False), (-1.5, True), (2_000_000.0, False)]
