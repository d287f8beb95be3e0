"""Tokenizer: Bangla words whole, case folding, stopwords, stemming, settings round-trip."""

from __future__ import annotations

import re
import unicodedata

import pytest

from evidencedesk.text import Tokenizer, normalize_text, token_pattern

BANGLA = "ডেলিভারির তারিখ থেকে ৩০ দিনের মধ্যে বেশিরভাগ পণ্য ফেরত দেওয়া যায়।"


def test_bangla_words_stay_whole() -> None:
    words = Tokenizer().tokenize(BANGLA)
    assert words == ["ডেলিভারির", "তারিখ", "থেকে", "৩০", "দিনের", "মধ্যে", "বেশিরভাগ", "পণ্য", "ফেরত", "দেওয়া", "যায়"]
    # Python's \\w alone splits at vowel signs (category Mc/Mn): the reason for the pattern
    assert len(re.findall(r"\w+", "ফেরত")) > 1
    assert all(unicodedata.category(ch)[0] in "LMN" for w in words for ch in w)


def test_other_scripts_with_combining_marks() -> None:
    assert Tokenizer().tokenize("हिन्दी भाषा, தமிழ் மொழி") == ["हिन्दी", "भाषा", "தமிழ்", "மொழி"]


def test_lowercase_punctuation_digits_and_identifiers() -> None:
    tok = Tokenizer()
    assert tok.tokenize("Reset the ROUTER: RD2-24, 5 days; max_bytes!") == [
        "reset", "the", "router", "rd2", "24", "5", "days", "max_bytes",
    ]  # fmt: skip
    assert Tokenizer(lowercase=False).tokenize("Reset ROUTER") == ["Reset", "ROUTER"]
    assert Tokenizer(min_length=2).tokenize("a 5 kg bag") == ["kg", "bag"]


def test_normalisation_joins_equivalent_spellings() -> None:
    composed, decomposed = "café", "cafe\u0301"
    assert Tokenizer().tokenize(decomposed) == Tokenizer().tokenize(composed) == ["café"]
    assert normalize_text("soft\u00adware") == "software"
    assert Tokenizer().tokenize("র\u200d্যাব") == ["র্যাব"]
    assert normalize_text("plain ascii") == "plain ascii"


def test_stopwords_and_stemming() -> None:
    text = "The routers are resetting and the passwords were changed"
    assert Tokenizer(stopwords="english").tokenize(text) == ["routers", "resetting", "passwords", "changed"]
    assert Tokenizer(stem=True).tokenize("routers resetting passwords") == ["router", "reset", "password"]
    assert Tokenizer(stopwords="english", stem=True).tokenize(text) == ["router", "reset", "password", "chang"]
    assert Tokenizer(stem=True, language="german").tokenize("Häuser") == ["haus"]
    assert Tokenizer(stem=False).tokenize("routers") == ["routers"]


def test_empty_and_punctuation_only() -> None:
    tok = Tokenizer()
    assert tok.tokenize("") == [] and tok.tokenize("  ?!-- ") == []
    assert tok.term("The") == "the" and Tokenizer(stopwords="english").term("The") is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"min_length": 0}, "min_length"),
        ({"stopwords": "klingon"}, "stopwords"),
        ({"stem": True, "language": "xx"}, "language"),
    ],
)
def test_invalid_settings_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Tokenizer(**kwargs)


def test_settings_round_trip_and_identity() -> None:
    tok = Tokenizer(stopwords="english", stem=True, min_length=2)
    d = tok.to_dict()
    assert d == {"lowercase": True, "min_length": 2, "stopwords": "english", "stem": True, "language": "english"}
    assert Tokenizer.from_dict(d) == tok and hash(Tokenizer.from_dict(d)) == hash(tok)
    assert Tokenizer() != tok
    with pytest.raises(ValueError, match="unknown"):
        Tokenizer.from_dict({"lowercase": True, "shout": 1})


def test_token_pattern_is_a_plain_re_pattern_for_scikit_learn() -> None:
    assert re.compile(token_pattern()).findall("ফেরত ও 5") == ["ফেরত", "ও", "5"]


def test_auto_language_stems_and_drops_stopwords_in_each_texts_language() -> None:
    tok = Tokenizer(stem=True, stopwords="auto", language="auto")
    assert tok.per_language
    # German: the German stemmer and the German stopword list ("die", "der", "nach" are stopwords)
    assert tok.tokenize("Die Rücksendungen der Fahrräder nach dreißig", "de") == ["rucksend", "fahrrad", "dreissig"]
    # the same words read as English are not stemmed the German way
    assert "fahrrad" not in tok.tokenize("Die Rücksendungen der Fahrräder", "en")
    assert tok.tokenize("The returns of the bikes", "en") == ["return", "bike"]
    # Bangla has neither a Snowball stemmer nor a stopword list: it is tokenised as before
    assert tok.tokenize(BANGLA, "bn") == Tokenizer().tokenize(BANGLA)


def test_query_terms_cover_every_indexed_language_once() -> None:
    tok = Tokenizer(stem=True, stopwords="auto", language="auto")
    terms = tok.query_terms("Fahrräder returns", ["de", "en"])
    assert "fahrrad" in terms and "return" in terms
    assert len(terms) == len(set(terms))
    # English stopwords stay out even though Bangla (also indexed) has no list; Bangla is not stemmed
    assert set(tok.query_terms("can I return the bikes", ["bn", "en"])) == {"return", "bike", "bikes"}
    fixed = Tokenizer(stem=True, stopwords="english")
    assert not fixed.per_language
    assert fixed.query_terms("the returns returns", ["de", "bn"]) == ["return"]


def test_auto_settings_round_trip_and_unknown_language_is_refused() -> None:
    tok = Tokenizer(stem=True, stopwords="auto", language="auto")
    assert Tokenizer.from_dict(tok.to_dict()) == tok
    with pytest.raises(ValueError, match="language"):
        Tokenizer(stem=True, language="klingon")


def test_query_terms_remembered_per_word_give_what_reading_afresh_gives() -> None:
    """Query words are read once and remembered per set of languages; a repeated query, a query of words
    seen before, or the same words under other languages give what a fresh tokenizer gives."""
    queries = ["Returns of the bikes", "the bikes returns returns", "Fahrräder zurückgeben returns", "a I", ""]
    langs_sets = [["en"], ["de", "en"], ["en", "de", "bn"], ["bn"]]
    for settings in ({"stopwords": "auto", "stem": True, "language": "auto"}, {"stopwords": "english", "stem": True}):
        warm = Tokenizer(**settings)
        for _ in range(2):
            for langs in langs_sets:
                for q in queries:
                    assert warm.query_terms(q, langs) == Tokenizer(**settings).query_terms(q, langs), (q, langs)
    # two stemmers: the stems in each language in turn (the whole query in German, then in English)
    tok = Tokenizer(stopwords="auto", stem=True, language="auto")
    stems = {lang: Tokenizer(stem=True, language=name).tokenize("Fahrräder returns") for lang, name in
             (("de", "german"), ("en", "english"))}  # fmt: skip
    assert tok.query_terms("Fahrräder returns", ["de", "en"]) == list(dict.fromkeys([*stems["de"], *stems["en"]]))
    # what is remembered is no part of the tokenizer's identity
    assert tok == Tokenizer(stopwords="auto", stem=True, language="auto") and "_query_words" not in tok.to_dict()
