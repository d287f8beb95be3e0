"""Stopwords: every list of words evidencedesk may leave out, in one place.

``STOPWORDS`` is the list for matching facts (answer validation, extractive answering, reranking
by overlap, diagnosis): function words only, kept short on purpose, because a longer list would
drop words that carry a fact ("back", "system", "full"). The named lists are what an index's
tokenizer may drop (``Tokenizer(stopwords="english")``); a name is part of an index's identity,
so a named list never changes under a stored index.
"""

from __future__ import annotations

from functools import cache

_FUNCTION_WORDS = """a an and are as at be been but by can could do does did for from had has have how i if in into is
    it its may me my no not of on or our so such than that the their them then there these they this to too up us was
    we were what when where which who why will with would you your yes also any all only just more most"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())

STOPWORD_LISTS = ("english", "auto")
"""Names a tokenizer accepts: ``english`` is scikit-learn's list (shipped as ``english_stopwords.txt``);
``auto`` is each text's language's list (``language_stopwords``)."""
DEFAULT_LANG = "en"


@cache
def stopword_list(name: str) -> frozenset[str]:
    """The named stopword list, read from the package's data (no library is imported for it)."""
    if name == "english":
        from importlib.resources import files

        text = files("evidencedesk.text").joinpath("english_stopwords.txt").read_text(encoding="utf-8")
        return frozenset(w for w in (line.strip() for line in text.splitlines()) if w and not w.startswith("#"))
    raise ValueError(f"stopwords: must be one of {', '.join(STOPWORD_LISTS)} or None, got {name!r}")


@cache
def language_stopwords(lang: str) -> frozenset[str]:
    """The stopwords of an ISO 639-1 language code: scikit-learn's list for English (its 318 words
    score higher on English development sets than the 1,333 of the ``stop-words`` package), the
    ``stop-words`` package's list for its 32 other languages, none for a language it lacks (Bangla)."""
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    from evidencedesk.text.words import normalize_text

    code = (lang or DEFAULT_LANG).split("-")[0].lower()
    if code == "en":
        return stopword_list("english")
    if code not in LANGUAGE_MAPPING:
        return frozenset()
    return frozenset(normalize_text(w).lower() for w in get_stop_words(code))


@cache
def union_stopwords(langs: tuple[str, ...]) -> frozenset[str]:
    """Every stopword of the given languages (a query read in all of them drops each one)."""
    return frozenset().union(*(language_stopwords(lang) for lang in langs))


__all__ = ["DEFAULT_LANG", "STOPWORDS", "STOPWORD_LISTS", "language_stopwords", "stopword_list", "union_stopwords"]
