"""Slices (n, mean, standard error, small flag), word overlap and the text helpers."""

from __future__ import annotations

import math

import pytest

from evidencedesk.evaluation.slices import SMALL_N, slices, stat
from evidencedesk.text import content_words, numbers, words
from evidencedesk.text.overlap import word_overlap


def test_stat_uses_the_sample_standard_deviation() -> None:
    s = stat([1.0, 0.0, 1.0, 1.0])
    sd = math.sqrt(((0.25**2) * 3 + 0.75**2) / 3)
    assert (s.n, s.mean, s.small) == (4, 0.75, True)
    assert s.se == pytest.approx(sd / 2)
    assert stat([0.5]).se == 0.0
    assert not stat([1.0] * SMALL_N).small


def test_slices_group_by_tag_and_skip_undefined_metrics() -> None:
    rows = [
        (("paraphrase",), {"recall@5": 1.0, "abstain": None}),
        (("paraphrase", "stale"), {"recall@5": 0.0, "abstain": None}),
        (("unanswerable",), {"recall@5": None, "abstain": 1.0}),
    ]
    table = slices(rows)
    assert list(table) == ["all", "paraphrase", "stale", "unanswerable"]
    assert table["all"]["recall@5"].n == 2 and table["all"]["recall@5"].mean == 0.5
    assert table["all"]["abstain"].n == 1
    assert "recall@5" not in table["unanswerable"]
    assert table["paraphrase"]["recall@5"].se == pytest.approx(0.5)


def test_word_overlap_is_containment_of_lowercased_word_sets() -> None:
    assert word_overlap("Return within 30 days.", "You can RETURN items within 30 days of delivery") == 1.0
    assert word_overlap("a b c d", "a b x y z") == pytest.approx(0.5)
    assert word_overlap("", "anything") == 0.0
    assert word_overlap("!!!", "...") == 0.0


def test_words_keep_bangla_whole_and_numbers_are_normalised() -> None:
    assert words("ডেলিভারির তারিখ থেকে ৩০ দিনের") == ["ডেলিভারির", "তারিখ", "থেকে", "৩০", "দিনের"]
    assert numbers("১,৫০০ টাকা, 1,500 BDT, 2.4 in, call 09612-550-224") == ["1500", "2.4", "09612", "550", "224"]
    assert content_words("The returns are accepted within 30 days") == ["return", "accept", "within", "day"]
