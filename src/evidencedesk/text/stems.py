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


# ISO 639-1 language codes (the ``lang`` of a document) to Snowball stemmer names
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip


def snowball_name(lang: str) -> str | None:
    """The Snowball stemmer for an ISO 639-1 language code, or None when Snowball has none (Bangla)."""
    return SNOWBALL.get((lang or "en").split("-")[0].lower())


def stem_words(words: list[str], language: str = "english") -> list[str]:
    """Stems of ``words`` in ``language``, in order."""
    return stemmer(language).stemWords(words) if words else []


__all__ = ["SNOWBALL", "languages", "snowball_name", "stem", "stem_words", "stemmer"]
