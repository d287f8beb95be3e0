"""Word, number and content-word helpers shared by diagnosis and answer matching.

Words are runs of letters, digits and combining marks (so Bangla words stay whole), lowercased.
Numbers are digit runs with inner ``,`` or ``.`` separators; Bangla and other Unicode digits are
read as ASCII and thousands commas dropped, so ``১,৫০০`` and ``1500`` are the same number.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer


def _mark_class() -> str:
    """A regex character class body holding every combining mark (category M*) in the BMP."""
    spans: list[tuple[int, int]] = []
    for cp in range(0x0300, 0x10000):
        if unicodedata.category(chr(cp)).startswith("M"):
            if spans and spans[-1][1] == cp - 1:
                spans[-1] = (spans[-1][0], cp)
            else:
                spans.append((cp, cp))
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" if a != b else re.escape(chr(a)) for a, b in spans)


_WORD = re.compile(rf"(?:[^\W_]|[{_mark_class()}])+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

# Function words that carry no fact; kept short on purpose.
_STOP = """a an and are as at be been but by can could do does did for from had has have how i if in into is it its
    may me my no not of on or our so such than that the their them then there these they this to too up us was we
    were what when where which who why will with would you your yes also any all only just more most"""
STOPWORDS = frozenset(_STOP.split())

_stemmer = Stemmer.Stemmer("english")


def normalise_space(text: str) -> str:
    """Runs of whitespace become one space; nothing else changes."""
    return re.sub(r"\s+", " ", text)


def words(text: str) -> list[str]:
    """Lowercased words of ``text`` in order."""
    return [w.lower() for w in _WORD.findall(text)]


def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer.stemWord(word) if word.isascii() else word


def content_words(text: str) -> list[str]:
    """Stemmed words that are not stopwords and not pure numbers, in order, without repeats."""
    out: dict[str, None] = {}
    for w in words(text):
        if w in STOPWORDS or w.isdigit() or (w.isascii() and len(w) < 2):
            continue
        out.setdefault(stem(w), None)
    return list(out)


def _ascii_digits(token: str) -> str:
    return "".join(str(unicodedata.digit(ch)) if ch.isdigit() else ch for ch in token)


def numbers(text: str) -> list[str]:
    """Numbers in ``text`` as canonical strings (ASCII digits, thousands commas removed), in order."""
    out: dict[str, None] = {}
    for raw in _NUMBER.findall(text):
        out.setdefault(re.sub(r",(?=\d{3}(?!\d))", "", _ascii_digits(raw)), None)
    return list(out)


def share_present(needed: list[str], have: set[str] | frozenset[str]) -> float:
    """The fraction of ``needed`` found in ``have`` (1.0 when nothing is needed)."""
    if not needed:
        return 1.0
    return sum(w in have for w in needed) / len(needed)


__all__ = ["STOPWORDS", "content_words", "normalise_space", "numbers", "share_present", "stem", "word_set", "words"]
