"""Tokenizer: text to index terms (lowercase, Unicode words kept whole, optional stopwords and stemming).

Words come from ``text.words`` (the one word pattern), stems from ``text.stems`` and stopword
lists from ``text.stopwords``, so an index and the answering stage read text the same way.

Languages: ``language="auto"`` stems each text in its own language (the ``lang`` code of its
document: ``en`` English, ``de`` German, ... any language Snowball has; a language without a Snowball
stemmer, such as Bangla, is left unstemmed), and ``stopwords="auto"`` drops that language's stopwords
(``language_stopwords``: none for a language without a list, such as Bangla). A query has no
language of its own: ``query_terms`` reads it in every language of the index, drops a word that is a
stopword in any of them and keeps each distinct term once.
A tokenizer's settings are part of an index's identity: ``to_dict``/``from_dict`` round-trip them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.text.stems import languages, snowball_name, stem_words, stemmer
from evidencedesk.text.stopwords import (
    DEFAULT_LANG,
    STOPWORD_LISTS,
    language_stopwords,
    stopword_list,
    union_stopwords,
)
from evidencedesk.text.words import normalize_text, word_regex

AUTO = "auto"


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
        if self.stem and self.language != AUTO and self.language not in languages():
            raise ValueError(
                f"language: no Snowball stemmer for {self.language!r}; choose auto or one of {', '.join(languages())}"
            )
        fixed = self.stopwords is not None and self.stopwords != AUTO
        object.__setattr__(self, "_stop", stopword_list(self.stopwords) if fixed else frozenset())
        # not a field (equality, hashing and to_dict ignore it): query words already read, per language set
        object.__setattr__(self, "_query_words", {})

    @property
    def per_language(self) -> bool:
        """Whether terms depend on the text's language (``auto`` stemming or stopwords)."""
        return self.stopwords == AUTO or (self.stem and self.language == AUTO)

    def words(self, text: str) -> list[str]:
        """The words of ``text`` as written (after Unicode normalisation), before any other step."""
        return word_regex().findall(normalize_text(text))

    def tokenize(self, text: str, lang: str = DEFAULT_LANG) -> list[str]:
        """The terms of ``text`` in order, repeats kept; ``lang`` (an ISO 639-1 code) matters only
        for ``auto`` stemming or stopwords."""
        if not text:
            return []
        text = normalize_text(text)
        if self.lowercase:
            text = text.lower()
        words = word_regex().findall(text)
        if self.min_length > 1:
            words = [w for w in words if len(w) >= self.min_length]
        stop = language_stopwords(lang) if self.stopwords == AUTO else self._stop
        if stop:
            words = [w for w in words if w not in stop]
        if self.stem:
            language = snowball_name(lang) if self.language == AUTO else self.language
            if language is not None:
                words = stem_words(words, language)
        return words

    def query_terms(self, text: str, langs: Iterable[str] = (DEFAULT_LANG,)) -> list[str]:
        """A query's distinct terms, first-seen order: its terms in each of ``langs`` (the languages of
        the indexed texts) when the tokenizer is per-language, else its terms once.

        Each word's terms are worked out once and remembered (per set of languages), so a query of words
        seen before costs a regular expression and a dictionary look-up per word."""
        words = self._query_words_for(tuple(langs) if self.per_language else ())
        text = normalize_text(text)
        found, read = words.terms, []
        for w in word_regex().findall(text.lower() if self.lowercase else text):
            terms = found.get(w)
            if terms is None:
                terms = words.read(w)
            if terms:
                read.append(terms)
        if words.n_names == 1:
            return list(dict.fromkeys([t[0] for t in read]))
        distinct: dict[str, None] = {}
        for n in range(words.n_names):  # language by language, as the stems of the whole query come
            distinct.update(dict.fromkeys([t[n] for t in read]))
        return list(distinct)

    def _query_words_for(self, langs: tuple[str, ...]) -> _QueryWords:
        cached: dict[tuple[str, ...], _QueryWords] = self._query_words  # type: ignore[attr-defined]
        words = cached.get(langs)
        if words is None:
            if len(cached) >= _MAX_LANGUAGE_SETS:
                cached.clear()
            words = cached[langs] = self._query_words_new(langs)
        return words

    def _query_words_new(self, langs: tuple[str, ...]) -> _QueryWords:
        names: list[str | None] = [self.language]
        if not self.per_language:
            stop = self._stop
        else:
            langs = tuple(dict.fromkeys(langs)) or (DEFAULT_LANG,)
            # a word that is a stopword in any indexed language is not a query term in any of them
            stop = union_stopwords(langs) if self.stopwords == AUTO else self._stop
            names = [snowball_name(lang) for lang in langs] if self.language == AUTO else [self.language]
        stemmers = tuple(dict.fromkeys(names)) if self.stem else (None,)
        return _QueryWords(self.min_length, stop, stemmers)

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


_MAX_LANGUAGE_SETS = 16  # sets of languages a tokenizer keeps query words for
_MAX_QUERY_WORDS = 100_000  # words kept per set; then the set starts afresh


class _QueryWords:
    """Query words already read for one set of languages: each word's terms, one per stemmer (an
    empty tuple for a word the tokenizer drops)."""

    def __init__(self, min_length: int, stop: frozenset[str], stemmers: tuple[str | None, ...]) -> None:
        self.min_length = min_length
        self.stop = stop
        self.stemmers = [stemmer(name) if name is not None else None for name in stemmers]
        self.n_names = len(stemmers)
        self.terms: dict[str, tuple[str, ...]] = {}

    def read(self, word: str) -> tuple[str, ...]:
        """``word``'s terms (remembered)."""
        if len(word) < self.min_length or word in self.stop:
            terms: tuple[str, ...] = ()
        else:
            terms = tuple(s.stemWord(word) if s is not None else word for s in self.stemmers)
        if len(self.terms) >= _MAX_QUERY_WORDS:
            self.terms.clear()
        self.terms[word] = terms
        return terms


DEFAULT_TOKENIZER = Tokenizer()


__all__ = ["DEFAULT_TOKENIZER", "STOPWORD_LISTS", "Tokenizer", "normalize_text", "stopword_list"]
