"""Tokenizer: text to index terms (lowercase, Unicode words kept whole, optional stopwords and stemming).

A word is a run of letters, digits, underscores and combining marks. Python's ``\\w`` alone does not match
combining marks (the Bangla vowel sign U+09BE is category Mc), so ``\\w+`` would cut "ফেরত" into
pieces; the pattern here adds every combining mark of the Basic Multilingual Plane (which holds
every script in modern use). Punctuation separates words, so "RD2-24" gives ``rd2`` and ``24``,
while an identifier such as ``max_bytes`` stays whole. Zero-width joiners and soft hyphens are
removed and non-ASCII text is put in NFC form first, so the same word typed two ways gives the
same term.

Languages: ``language="auto"`` stems each text in its own language (the ``lang`` code of its
document: ``en`` English, ``de`` German, ... any language Snowball has; a language without a Snowball
stemmer, such as Bangla, is left unstemmed), and ``stopwords="auto"`` drops that language's stopwords
(``language_stopwords``: none for a language without a list, such as Bangla). A query has no
language of its own: ``query_terms`` tokenises it in every language of the index and keeps each
distinct term once.

A tokenizer's settings are part of an index's identity: ``to_dict``/``from_dict`` round-trip them.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

import Stemmer

STOPWORD_LISTS = ("english", "auto")
AUTO = "auto"
# ISO 639-1 language codes (the ``lang`` of a document) to Snowball stemmer names
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
DEFAULT_LANG = "en"
_INVISIBLE = re.compile("[\u200c\u200d\u00ad\u2060\ufeff]")  # joiners, soft hyphen, word joiner, BOM


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
def _compiled() -> re.Pattern[str]:
    return re.compile(token_pattern())


def normalize_text(text: str) -> str:
    """NFC form without zero-width joiners or soft hyphens (ASCII text is returned as is)."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@cache
def stopword_list(name: str) -> frozenset[str]:
    """A named stopword list (``"english"``: scikit-learn's list, imported only when asked for)."""
    if name != "english":
        raise ValueError(f"stopwords: must be one of {', '.join(STOPWORD_LISTS)} or None, got {name!r}")
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@cache
def language_stopwords(lang: str) -> frozenset[str]:
    """The stopwords of an ISO 639-1 language code: scikit-learn's list for English (its 318 words
    score higher on English development sets than the 1,333 of the ``stop-words`` package), the
    ``stop-words`` package's list for its 32 other languages, none for a language it lacks (Bangla)."""
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    code = (lang or DEFAULT_LANG).split("-")[0].lower()
    if code == "en":
        return stopword_list("english")
    if code not in LANGUAGE_MAPPING:
        return frozenset()
    return frozenset(normalize_text(w).lower() for w in get_stop_words(code))


@cache
def _union_stopwords(langs: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*(language_stopwords(lang) for lang in langs))


def snowball_name(lang: str) -> str | None:
    """The Snowball stemmer for an ISO 639-1 language code, or None when Snowball has none."""
    return SNOWBALL.get((lang or DEFAULT_LANG).split("-")[0].lower())


@cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


@dataclass(frozen=True)
class Tokenizer:
    """Turns text into terms.

    ``lowercase``: fold case (``str.lower``). ``min_length``: drop shorter words (2 reproduces
    scikit-learn's default ``token_pattern``, which drops one-character words). ``stopwords``:
    the name of a stopword list (``"english"``), ``"auto"`` (each text's own language) or None.
    ``stem``: Snowball stemming with PyStemmer in ``language`` (a Snowball name, or ``"auto"``).
    """

    lowercase: bool = True
    min_length: int = 1
    stopwords: str | None = None
    stem: bool = False
    language: str = "english"
    _stop: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.min_length, int) or self.min_length < 1:
            raise ValueError(f"min_length: must be an integer >= 1, got {self.min_length!r}")
        if self.stopwords is not None and self.stopwords not in STOPWORD_LISTS:
            raise ValueError(f"stopwords: must be one of {', '.join(STOPWORD_LISTS)} or None, got {self.stopwords!r}")
        if self.stem and self.language != AUTO and self.language not in Stemmer.algorithms():
            raise ValueError(
                f"language: no Snowball stemmer for {self.language!r}; choose auto or one of "
                f"{', '.join(Stemmer.algorithms())}"
            )
        fixed = self.stopwords is not None and self.stopwords != AUTO
        object.__setattr__(self, "_stop", stopword_list(self.stopwords) if fixed else frozenset())

    @property
    def per_language(self) -> bool:
        """Whether terms depend on the text's language (``auto`` stemming or stopwords)."""
        return self.stopwords == AUTO or (self.stem and self.language == AUTO)

    def words(self, text: str) -> list[str]:
        """The words of ``text`` as written (after Unicode normalisation), before any other step."""
        return _compiled().findall(normalize_text(text))

    def tokenize(self, text: str, lang: str = DEFAULT_LANG) -> list[str]:
        """The terms of ``text`` in order, repeats kept; ``lang`` (an ISO 639-1 code) matters only
        for ``auto`` stemming or stopwords."""
        if not text:
            return []
        text = normalize_text(text)
        if self.lowercase:
            text = text.lower()
        words = _compiled().findall(text)
        if self.min_length > 1:
            words = [w for w in words if len(w) >= self.min_length]
        stop = language_stopwords(lang) if self.stopwords == AUTO else self._stop
        if stop:
            words = [w for w in words if w not in stop]
        if self.stem and words:
            language = snowball_name(lang) if self.language == AUTO else self.language
            if language is not None:
                words = _stemmer(language).stemWords(words)
        return words

    def query_terms(self, text: str, langs: Iterable[str] = (DEFAULT_LANG,)) -> list[str]:
        """A query's distinct terms, first-seen order: its terms in each of ``langs`` (the languages of
        the indexed texts) when the tokenizer is per-language, else its terms once."""
        if not self.per_language:
            return list(dict.fromkeys(self.tokenize(text)))
        langs = tuple(dict.fromkeys(langs)) or (DEFAULT_LANG,)
        text = normalize_text(text)
        words = _compiled().findall(text.lower() if self.lowercase else text)
        if self.min_length > 1:
            words = [w for w in words if len(w) >= self.min_length]
        # a word that is a stopword in any indexed language is not a query term in any of them
        stop = _union_stopwords(langs) if self.stopwords == AUTO else self._stop
        if stop:
            words = [w for w in words if w not in stop]
        if not self.stem or not words:
            return list(dict.fromkeys(words))
        terms: dict[str, None] = {}
        names = [snowball_name(lang) for lang in langs] if self.language == AUTO else [self.language]
        for name in dict.fromkeys(names):
            terms.update(dict.fromkeys(_stemmer(name).stemWords(words) if name is not None else words))
        return list(terms)

    __call__ = tokenize

    def term(self, word: str) -> str | None:
        """The term one word becomes, or None when the tokenizer drops it."""
        terms = self.tokenize(word)
        return terms[0] if len(terms) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("_stop")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tokenizer:
        known = {"lowercase", "min_length", "stopwords", "stem", "language"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown tokenizer field(s): {', '.join(sorted(unknown))}")
        return cls(**d)


DEFAULT_TOKENIZER = Tokenizer()
