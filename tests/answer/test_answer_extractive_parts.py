"""The extractive generator's evidence: word matching, answer kinds, table-row keys, paragraphs, dense scores."""

from __future__ import annotations

import pytest

from evidencedesk.answer.generators.answer_types import asked, offers, quantities
from evidencedesk.answer.generators.dense_match import DenseScorer, default_dense_scorer, latin_share
from evidencedesk.answer.generators.lexical_match import LexicalScorer, holds, question_terms, text_terms
from evidencedesk.answer.generators.paragraphs import neighbours, paragraph_ids
from evidencedesk.answer.generators.table_rows import key_match, row_cells
from evidencedesk.answer.units import split_units
from tests.support.answer import make_chunk

TORQUE = "| Part | Size M | Size L | Note |\n"
SIZES = "| Rider height | Ridgeline (mountain) | Metro and Metro E (city) |\n"


def test_question_terms_drop_filler_and_keep_the_words_they_came_from() -> None:
    terms = question_terms("My brake pads wore out after a year. Is that a warranty repair?")
    assert {"brake", "pad", "warranti", "repair"} <= set(terms) and terms["pad"] == "pads"
    assert "is" not in terms and "my" not in terms
    assert "wear" in text_terms("Normal wear items are not covered, including brake pads.")
    bangla = question_terms("সাইকেল ফেরত দিলে টাকা কবে আর কোন মাধ্যমে ফেরত পাব?")
    assert "সাইকেল" in bangla and "ফেরত" in bangla
    assert not {"কবে", "আর", "কোন", "দিলে", "পাব"} & set(bangla)  # question words and light verbs


def test_holds_matches_bangla_suffixes_and_identifier_prefixes() -> None:
    terms = text_terms("আসল বাক্স ও প্যাকিং ছাড়া ফেরত দেওয়া সাইকেলের ক্ষেত্রে")
    assert holds("বাক্সটা", terms) and holds("সাইকেল", terms)  # "the box", "bicycle" + case suffix
    assert not holds("বা", terms)  # too short to match by prefix
    serials = text_terms("Only bikes with a serial beginning with KR24D are affected.")
    assert holds("kr24d0713", serials) and not holds("kr24e0001", serials)
    assert not holds("kr2", serials) and not holds("fork", serials)


def test_lexical_scorer_weighs_rare_words_and_names_the_absent_ones() -> None:
    units = [text_terms("Gift cards are valid for three years."), text_terms("Gift cards cannot be exchanged.")]
    lex = LexicalScorer.build("How long are gift cards valid in Sylhet?", units)
    assert lex.absent() == ["sylhet"]
    assert lex.weights["sylhet"] > lex.weights["valid"] > lex.weights["gift"]
    assert lex.coverage(0) > lex.coverage(1) > 0
    assert lex.coverage(0, {"valid"}) == pytest.approx(lex.weights["valid"] / lex.total)


@pytest.mark.parametrize(
    ("text", "dimensions"),
    [
        ("Can I still send back a bike I bought five weeks ago?", {"time"}),
        ("You can return most items within 30 days of the delivery date.", {"time"}),
        ("Refunds arrive within 5 business days.", {"time"}),
        ("Cash on delivery is available for orders up to 20,000 BDT.", {"money"}),
        ("I got a helmet at 40% off", {"percent"}),
        ("I've done about 60 km of weekend rides", {"length"}),
        ("The parcel weighs 2.5 kilograms", {"mass"}),
        ("It costs $25 or 20 € in Europe", {"money"}),
        ("Die Rückgabe ist innerhalb von 14 Tagen möglich und kostet 5 Euro.", {"time", "money"}),
        ("Founded on 12 March 1066 by the duke", {"date", "time"}),
        ("ডেলিভারির তারিখ থেকে ৩০ দিনের মধ্যে", {"time"}),
        ("১,৫০০ টাকা রিস্টকিং ফি", {"money"}),
        ("The bike is light and the days are long.", set()),
    ],
)
def test_quantities(text: str, dimensions: set[str]) -> None:
    # units, currencies and months come from CLDR (Babel) for the languages named, not from lists in code
    assert quantities(text, ("de", "bn")) == dimensions


def test_asked_and_offers() -> None:
    assert asked("How long does a parts delivery to Bandarban take, and what does it cost?") == {"time", "money"}
    assert asked("Which command shows the latest error codes?") == {"code"}
    assert asked("When does the showroom open?") == {"time", "date"}
    # "when" mid-sentence asks no time; the question opens with "Can": yes or no
    assert asked("Can I pay in cash when the courier brings my 45,000 taka bike?") == {"money", "yesno"}
    assert asked("Do you sell electric scooters?") == {"yesno"}
    assert asked("Who led the Normans?") == {"person"} and asked("Wo ist das Lager?") == {"place"}
    assert asked("Why are helmets not refunded?") == {"reason"} and asked("What is the Rhine?") == set()
    assert offers("kestrel-diag errors --last 10", "code", {"code"})
    assert offers("Orders up to 20,000 BDT.", "sentence", {"money"})
    assert not offers("Orders up to 20,000 BDT.", "sentence", {"time"})
    assert not offers("anything", "sentence", set())


def test_key_match_names_rows_by_their_first_cell() -> None:
    question = "How tight should the stem bolts be on a size M Ridgeline?"
    assert key_match(question, TORQUE + "| Stem bolts | 5 Nm | 5 Nm | x |") == 1.0
    assert key_match(question, TORQUE + "| Stem faceplate bolts | 6 Nm | 6 Nm | x |") == pytest.approx(2 / 3)
    assert key_match(question, TORQUE + "| Pedals | 35 Nm | 35 Nm | x |") == 0.0
    assert key_match("I'm 175 cm tall", SIZES + "| 170-180 cm | M | L (54 cm) |") == 1.0
    assert key_match("I'm 165 cm tall", SIZES + "| 170-180 cm | M | L (54 cm) |") < 1.0
    region = "| Region | Parts |\n| Rangamati, Khagrachari, Bandarban | 200 BDT |"
    assert key_match("How long does delivery to Bandarban take?", region) == 1.0  # one of the listed alternatives
    assert key_match("How tight?", "A sentence, not a row.") == 0.0
    assert row_cells("| a | b c |  |") == ["a", "b c", ""]


def test_paragraph_ids_and_neighbours() -> None:
    text = "## Disposal\n\nFirst one. Second one.\n\nThird one.\n\n| A | B |\n|---|---|\n| 1 | 2 |"
    chunk = make_chunk("kc-p:c0", text)
    units = split_units(chunk)
    assert [u.text for u in units] == ["First one.", "Second one.", "Third one.", "| A | B |\n| 1 | 2 |"]
    paras = paragraph_ids(chunk.text, units)
    assert paras[0] == paras[1] < paras[2] < paras[3]
    assert neighbours(0, units, paras) == [1] and neighbours(1, units, paras) == [0]
    assert neighbours(2, units, paras) == [] and neighbours(3, units, paras) == []


def test_dense_scorer_caches_and_reads_only_latin_script_questions() -> None:
    assert latin_share("Can I return it?") == 1.0 and latin_share("সাইকেল ফেরত E21") < 0.5
    assert DenseScorer.applies("Can I return it?") and not DenseScorer.applies("সাইকেল ফেরত দিলে টাকা কবে পাব?")
    shared = default_dense_scorer()
    assert default_dense_scorer() is shared
    small = DenseScorer(shared.embedder, cache_size=2)
    texts = ["Returns are accepted within 30 days.", "The showroom opens at 10:00.", "Stem bolts take 5 Nm."]
    first = small.similarities("How long do I have to return a bike?", texts)
    assert len(small._cache) == 2  # bounded: the least recently used texts were dropped
    assert small.similarities("How long do I have to return a bike?", texts) == first
    assert first[0] == max(first)  # the returns sentence is the closest in meaning
    with pytest.raises(ValueError, match="cache_size"):
        DenseScorer(shared.embedder, cache_size=-1)
