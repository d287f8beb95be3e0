"""Tokenizer: text to index terms (lowercase, Unicode words kept whole, optional stopwords and stemming).

Words come from ``text.words`` (the one word pattern), stems from ``text.stems`` and stopword
lists from ``text.stopwords``, so an index and the answering stage read text the same way.
A tokenizer's settings are part of an index's identity: ``to_dict``/``from_dict`` round-trip them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.text.stems import languages, stem_words
from evidencedesk.text.stopwords import STOPWORD_LISTS, stopword_list
from evidencedesk.text.words import normalize_text, word_regex


@dataclass(frozen=True)
class Tokenizer:
    """Turns text into terms.

    ``lowercase``: fold case (``str.lower``). ``min_length``: drop shorter words (2 reproduces
    scikit-learn's default ``token_pattern``, which drops one-character words). ``stopwords``:
    the name of a stopword list (``"english"``) or None. ``stem``: Snowball stemming with PyStemmer
    in ``language``.
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
        if self.stem and self.language not in languages():
            raise ValueError(
                f"language: no Snowball stemmer for {self.language!r}; choose from {', '.join(languages())}"
            )
        object.__setattr__(self, "_stop", stopword_list(self.stopwords) if self.stopwords else frozenset())

    def words(self, text: str) -> list[str]:
        """The words of ``text`` as written (after Unicode normalisation), before any other step."""
        return word_regex().findall(normalize_text(text))

    def tokenize(self, text: str) -> list[str]:
        """The terms of ``text`` in order, repeats kept."""
        if not text:
            return []
        text = normalize_text(text)
        if self.lowercase:
            text = text.lower()
        words = word_regex().findall(text)
        if self.min_length > 1:
            words = [w for w in words if len(w) >= self.min_length]
        if self._stop:
            words = [w for w in words if w not in self._stop]
        if self.stem:
            words = stem_words(words, self.language)
        return words

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


__all__ = ["DEFAULT_TOKENIZER", "STOPWORD_LISTS", "Tokenizer", "normalize_text", "stopword_list"]
