"""Lexical evidence for the extractive generator: which question words a unit of the context holds.

A question's terms are its content words (stopwords and question filler removed, "long" in "how
long" too) with the word each one came from, so an abstention can name what is missing. English
words are stemmed (an irregular form such as "wore" for "wear" is left to the dense scorer). Two
words also match when:

* both are non-Latin (Bangla has no stemmer here) and one is the other plus a short suffix
  (``সাইকেলটা`` holds ``সাইকেল``; ``বাক্সটা``, ``বাক্স``);
* both are identifiers mixing letters and digits and the document's starts the question's (a
  serial KR24D0713 is one of the "serials beginning KR24D").

Each term is weighted by its rarity among the units shown, ``ln(1 + (N + 1) / (df + 0.5))``: a word
that no unit holds weighs the most, so a context that misses the question's subject scores low.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evidencedesk.text import STOPWORDS, stem, words
from evidencedesk.text.words import normalize_text

# Words that shape a question without naming what it is about; never required of an answer.
_FILLER = frozenset(
    {
        "about", "actually", "again", "ago", "am", "any", "anyone", "anything", "anyway", "back", "been", "being",
        "bit", "could", "currently", "dear", "does", "doesn", "don", "else", "even", "ever", "every", "exactly", "get",
        "gets", "getting", "got", "hello", "help", "hi", "isn", "know", "let", "like", "ll", "lot", "lots", "make",
        "many", "might", "much", "need", "needs", "now", "ok", "okay", "please", "pls", "plz", "possible", "re",
        "really", "should", "some", "someone", "something", "still", "sure", "tell", "thank", "thanks", "there", "ve",
        "very", "want", "wanted", "wants", "way", "well", "won", "yet",
        # Bangla question words, pronouns and particles
        "কি", "কী", "কে", "কেন", "কোন", "কোনো", "কবে", "কখন", "কোথায়", "কীভাবে", "কিভাবে", "কত", "কতটা", "কতদিন",
        "আর", "ও", "এবং", "বা", "এখন", "এখনো", "এখনও", "আমি", "আমার", "আমাকে", "আমরা", "আপনি", "আপনার", "তুমি",
        "হবে", "হয়", "যায়", "পারব", "পারি", "পারবো", "করতে", "দিতে", "নিতে", "হচ্ছে", "আছে", "না",
        "কিছু", "একটা", "একটি", "এই", "সেই", "তো", "কিন্তু",
        # Bangla light verbs and auxiliaries (give, take, do, be, keep, get, go) in their common forms
        "দিলে", "দিয়ে", "দিয়েছি", "দেব", "দেবো", "নিলে", "নিয়ে", "করলে", "করে", "করা", "হলে", "হয়ে", "রাখা",
        "রাখতে", "পাব", "পাবো", "পেতে", "যাবে", "যাব",
    }
)  # fmt: skip
QUESTION_FILLER = frozenset(normalize_text(w) for w in _FILLER)
HOW_WORDS = frozenset({"long", "much", "many", "soon", "often", "far"})
MAX_SUFFIX = 3  # characters a non-Latin word may add to another and still count as the same word
MIN_PREFIX = 3
MIN_CODE_PREFIX = 4  # an identifier prefix needs this many characters


def _is_latin(word: str) -> bool:
    return word.isascii()


def term(word: str) -> str:
    """The term a lowercase word becomes: its English stem (other scripts pass through unchanged)."""
    return stem(word)


def _is_code(word: str) -> bool:
    """An identifier that mixes letters and digits (a serial, a model, an error code)."""
    return word.isascii() and any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


def question_terms(question: str) -> dict[str, str]:
    """Each content term of ``question`` mapped to the first word that produced it, in order."""
    out: dict[str, str] = {}
    before = ""
    for w in words(normalize_text(question)):
        shape = before == "how" and w in HOW_WORDS  # "how long", "how much": the kind of answer, not the topic
        before = w
        if shape or w in STOPWORDS or w in QUESTION_FILLER or w.isdigit() or (w.isascii() and len(w) < 2):
            continue
        out.setdefault(term(w), w)
    return out


def text_terms(text: str) -> frozenset[str]:
    """The stemmed words of ``text`` (stopwords kept out), the set a unit is matched against."""
    return frozenset(term(w) for w in words(normalize_text(text)) if w not in STOPWORDS and not w.isdigit())


def _near(one: str, other: str) -> bool:
    short, long = (one, other) if len(one) <= len(other) else (other, one)
    return len(short) >= MIN_PREFIX and len(long) - len(short) <= MAX_SUFFIX and long.startswith(short)


def holds(wanted: str, terms: frozenset[str]) -> bool:
    """True when ``terms`` holds ``wanted``: the same term; for a non-Latin word, the same word with a short
    suffix; for an identifier, one that starts the other (serial KR24D0713 is a KR24D serial)."""
    if wanted in terms:
        return True
    if len(wanted) < MIN_PREFIX:
        return False
    if _is_code(wanted):
        return any(_is_code(t) and len(t) >= MIN_CODE_PREFIX and wanted.startswith(t) for t in terms)
    if _is_latin(wanted):
        return False
    return any(not _is_latin(t) and _near(wanted, t) for t in terms)


@dataclass(frozen=True)
class LexicalScorer:
    """idf-weighted coverage of a question's terms by each of a context's units (their term sets)."""

    surface: dict[str, str]  # question term -> the word it came from
    weights: dict[str, float]
    found: list[frozenset[str]]  # per unit: the question terms it holds

    @classmethod
    def build(cls, question: str, unit_terms: Sequence[frozenset[str]]) -> LexicalScorer:
        surface = question_terms(question)
        found = [frozenset(t for t in surface if holds(t, terms)) for terms in unit_terms]
        n = len(unit_terms)
        df = {t: sum(t in f for f in found) for t in surface}
        weights = {t: math.log(1 + (n + 1) / (df[t] + 0.5)) for t in surface}
        return cls(surface, weights, found)

    @property
    def total(self) -> float:
        return sum(self.weights.values())

    def coverage(self, index: int, wanted: Iterable[str] | None = None) -> float:
        """The share of the question's term weight that unit ``index`` holds (counting only ``wanted`` if given)."""
        total = self.total
        if not total:
            return 0.0
        pool = self.found[index] if wanted is None else self.found[index] & set(wanted)
        return sum(self.weights[t] for t in pool) / total

    def coverage_of(self, indices: Iterable[int]) -> float:
        """The share of the question's term weight that the units ``indices`` hold together."""
        total = self.total
        held = set().union(*(self.found[i] for i in indices))
        return sum(self.weights[t] for t in held) / total if total else 0.0

    def context_coverage(self) -> float:
        """The share of the question's term weight that some unit holds."""
        total = self.total
        seen = set().union(*self.found) if self.found else set()
        return sum(self.weights[t] for t in seen) / total if total else 0.0

    def absent(self) -> list[str]:
        """The question's words that no unit holds, as the question wrote them."""
        seen = set().union(*self.found) if self.found else set()
        return [w for t, w in self.surface.items() if t not in seen]


__all__ = ["QUESTION_FILLER", "LexicalScorer", "holds", "question_terms", "term", "text_terms"]
