"""Words and numbers: the one word pattern every part of evidencedesk splits text with.

A word is a run of letters, digits, underscores and combining marks. Python's ``\\w`` alone does
not match combining marks (the Bangla vowel sign U+09BE is category Mc), so ``\\w+`` would cut
"ফেরত" into pieces; the pattern here adds every combining mark of the Basic Multilingual Plane
(which holds every script in modern use). Punctuation separates words, so "RD2-24" gives ``rd2``
and ``24``, while an identifier such as ``max_bytes`` stays whole. Zero-width joiners and soft
hyphens are removed and non-ASCII text is put in NFC form first, so the same word typed two ways
is the same word.

Numbers are digit runs with inner ``,`` or ``.`` separators; Bangla and other Unicode digits are
read as ASCII and thousands commas dropped, so ``১,৫০০`` and ``1500`` are the same number.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

_INVISIBLE = re.compile("[\u200c\u200d\u00ad\u2060\ufeff]")  # joiners, soft hyphen, word joiner, BOM
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")


def _ranges(codes: list[int]) -> str:
    """A regex character-class body for sorted code points, merged into ranges."""
    out: list[str] = []
    start = prev = codes[0]
    for c in [*codes[1:], -1]:
        if c == prev + 1:
            prev = c
            continue
        out.append(re.escape(chr(start)) if start == prev else f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
        start = prev = c
    return "".join(out)


@cache
def token_pattern() -> str:
    """The word pattern (a ``re`` pattern, so scikit-learn's ``token_pattern`` accepts it too)."""
    cat = unicodedata.category
    marks = [c for c in range(0x300, min(0x10000, sys.maxunicode + 1)) if cat(chr(c))[0] == "M"]
    return rf"[\w{_ranges(marks)}]+"


@cache
def word_regex() -> re.Pattern[str]:
    return re.compile(token_pattern())


def normalize_text(text: str) -> str:
    """NFC form without zero-width joiners or soft hyphens (ASCII text is returned as is)."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def normalise_space(text: str) -> str:
    """Runs of whitespace become one space; nothing else changes."""
    return _SPACE.sub(" ", text)


def words(text: str) -> list[str]:
    """Lowercased words of ``text`` in order, repeats kept."""
    return word_regex().findall(normalize_text(text).lower()) if text else []


def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def _ascii_digits(token: str) -> str:
    return "".join(str(unicodedata.digit(ch)) if ch.isdigit() else ch for ch in token)


def numbers(text: str) -> list[str]:
    """Numbers in ``text`` as canonical strings (ASCII digits, thousands commas removed), in order, no repeats."""
    out: dict[str, None] = {}
    for raw in _NUMBER.findall(text):
        out.setdefault(re.sub(r",(?=\d{3}(?!\d))", "", _ascii_digits(raw)), None)
    return list(out)


__all__ = ["normalise_space", "normalize_text", "numbers", "token_pattern", "word_regex", "word_set", "words"]
