"""Short answer lines for fact questions, and the shipped answerability model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidencedesk.answer.generators.answer_types import asked
from evidencedesk.answer.generators.answerability import FEATURES, AnswerabilityModel
from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.answer.generators.lexical_match import question_terms
from evidencedesk.answer.generators.question_words import kinds_asked
from evidencedesk.answer.generators.short_answer import MAX_WORDS, short_answer, typed_span
from evidencedesk.answer.validate import validate
from tests.support.answer import as_candidates, make_chunk

NORMANS = (
    "The Normans, led by William the Conqueror, conquered England in 1066 after the Battle of Hastings "
    "on the south coast."
)


def line(question: str, unit: str, langs: tuple[str, ...] = ("en",)) -> str:
    kinds = asked(question, langs) | kinds_asked(question)
    return short_answer(question_terms(question), unit, kinds, langs)


@pytest.mark.parametrize(
    ("question", "unit", "langs", "expected"),
    [
        ("When did the Normans conquer England?", NORMANS, ("en",), "1066"),
        ("Who led the Normans?", NORMANS, ("en",), "led by William the Conqueror"),  # the name with its clause
        ("How long do I have to return a bike?",
         "You can return an unused bike within 30 days of delivery for a full refund, shipping included.", ("en",),
         "30 days"),
        ("How much is shipping to Canada?",
         "Shipping to Canada costs $24.50 per parcel and takes about a week to arrive at most addresses.", ("en",),
         "$24.50"),
        ("Was kostet die Lieferung nach Österreich?",
         "Eine Lieferung nach Österreich oder in die Schweiz kostet 12 Euro und dauert drei bis fünf Werktage.",
         ("de",), "12 Euro"),
        ("কত দিনের মধ্যে ফেরত দিতে হবে?",
         "অব্যবহৃত সাইকেল ডেলিভারির ৩০ দিনের মধ্যে ফেরত দেওয়া যায় এবং পুরো টাকা ফেরত পাওয়া যায়, কোনো প্রশ্ন ছাড়াই।",
         ("bn",), "৩০ দিনের"),
        ("Can I return a worn helmet?",
         "Helmets cannot be returned once worn, for hygiene reasons, unless they arrive damaged.", ("en",),
         "cannot be returned once worn"),
        # a clause longer than the line keeps its number instead of stopping before it
        ("Can I return a bike after riding it?",
         "A complete bicycle can only be returned if it has been ridden no more than 20 km in total.", ("en",),
         "if it has been ridden no more than 20 km in total"),
    ],
)  # fmt: skip
def test_fact_questions_get_a_few_words_copied_from_the_unit(
    question: str, unit: str, langs: tuple[str, ...], expected: str
) -> None:
    got = line(question, unit, langs)
    assert got == expected
    assert len(got.split()) <= MAX_WORDS
    assert got in " ".join(unit.split())  # copied verbatim from the unit


def test_why_and_how_questions_get_no_short_line() -> None:
    assert line("Why did the Normans conquer England?", NORMANS) == ""
    assert line("How did the Normans conquer England?", NORMANS) == ""


def test_generated_answer_puts_the_fact_first_and_passes_validation() -> None:
    chunk = make_chunk("kc-h:c0", "History.\n\n" + NORMANS + " They built castles across the country.")
    context = as_candidates([chunk])
    gen = ExtractiveGenerator(threshold=0.001).generate("When did the Normans conquer England?", context, "")
    lines = gen.answer.splitlines()
    assert lines[0] == "1066 [kc-h:c0]"
    assert NORMANS in lines[1]
    checked = validate(gen, context, {chunk.id: chunk})
    assert not checked.abstained and checked.answer.splitlines()[0] == "1066 [kc-h:c0]"
    assert all(s.supported for s in checked.sentences)
    assert gen.details["short_answer"] == "1066"


def test_typed_span_is_the_kind_asked_and_absent_from_the_question() -> None:
    def span(question: str, unit: str) -> str:
        return typed_span(question_terms(question), unit, asked(question) | kinds_asked(question))

    assert span("When did the Normans conquer England?", NORMANS) == "1066"
    assert span("Who led the Normans?", NORMANS) == "led by William the Conqueror"
    assert span("When did the Normans conquer England?", "The Normans conquered England after a long war.") == ""
    assert span("What did the Normans conquer?", NORMANS) == ""  # no kind asked: nothing typed to find
    assert span("Which country did the Normans conquer?", NORMANS) == "conquered England in 1066"


def test_warm_embeds_every_unit_once_so_answers_never_wait_for_them() -> None:
    chunks = [make_chunk("kc-w:c0", "Gift cards are valid for three years. They cannot be exchanged for cash."),
              make_chunk("kc-w:c1", "Orders ship within two business days from our warehouse.")]  # fmt: skip
    gen = ExtractiveGenerator()
    scorer = gen.scorer_for("a question", as_candidates(chunks))[1]
    assert scorer is not None
    first = gen.warm(chunks)
    assert first == {"minilm": 5}  # three sentences and two chunks
    assert gen.warm(chunks) == {"minilm": 0}  # everything is cached now
    before = scorer.cached
    gen.generate("How long are gift cards valid?", as_candidates(chunks))
    assert scorer.cached == before + 1  # only the question itself was embedded
    assert ExtractiveGenerator(dense=False).warm(chunks) == {}


def test_shipped_model_covers_every_scorer_and_bad_files_are_named(tmp_path: Path) -> None:
    model = AnswerabilityModel.load()
    assert sorted(model.models) == ["e5", "minilm", "minilm-reader", "words"]
    for m in model.models.values():
        assert set(m.features) <= set(FEATURES) and 0 < m.threshold < 1
    high = {f: 1.0 for f in FEATURES} | {"missing": 0.0}
    low = {f: 0.0 for f in FEATURES} | {"missing": 1.0}
    minilm = model.for_scorer("minilm")
    assert minilm.probability(high) > minilm.probability(low)
    bad = tmp_path / "model.json"
    bad.write_text(json.dumps({"models": {"minilm": {"features": ["nope"], "mean": [0], "scale": [1], "coef": [1],
                                                      "intercept": 0, "threshold": 0.5}}}))  # fmt: skip
    with pytest.raises(ValueError, match=r"model.json: models.minilm: unknown feature\(s\) nope"):
        AnswerabilityModel.load(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="model.json: not valid JSON"):
        AnswerabilityModel.load(bad)
