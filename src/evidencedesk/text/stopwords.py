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

STOPWORD_LISTS = ("english",)
"""Names a tokenizer accepts: ``english`` is scikit-learn's list."""


@cache
def stopword_list(name: str) -> frozenset[str]:
    """The named stopword list (``"english"`` imports scikit-learn only when asked for)."""
    if name == "english":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    raise ValueError(f"stopwords: must be one of {', '.join(STOPWORD_LISTS)} or None, got {name!r}")


__all__ = ["STOPWORDS", "STOPWORD_LISTS", "stopword_list"]
