"""Stems: the one stemmer (Snowball, through PyStemmer) for indexes and for matching facts."""

from __future__ import annotations

from functools import cache, lru_cache

import Stemmer


def languages() -> list[str]:
    """The languages a Snowball stemmer exists for."""
    return list(Stemmer.algorithms())


@cache
def stemmer(language: str = "english") -> Stemmer.Stemmer:
    """The (shared) Snowball stemmer for ``language``."""
    return Stemmer.Stemmer(language)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English stem of one lowercased word; words outside ASCII are returned as they are."""
    return stemmer("english").stemWord(word) if word.isascii() else word


def stem_words(words: list[str], language: str = "english") -> list[str]:
    """Stems of ``words`` in ``language``, in order."""
    return stemmer(language).stemWords(words) if words else []


__all__ = ["languages", "stem", "stem_words", "stemmer"]
