"""How much two texts share: content words, the share of needed words present, word-set containment.

``word_overlap`` is ``|A ∩ B| / min(|A|, |B|)`` over the lowercased word sets, so a chunk wholly
contained in another scores 1.0 however long the other is; two texts with no words score 0.0.
Context assembly uses it to drop near-duplicates, and diagnosis uses it to flag duplicate chunks.
"""

from __future__ import annotations

from evidencedesk.text.stems import stem
from evidencedesk.text.stopwords import STOPWORDS
from evidencedesk.text.words import word_set, words

DUPLICATE_THRESHOLD = 0.8


def content_words(text: str) -> list[str]:
    """Stemmed words that are not stopwords and not pure numbers, in order, without repeats."""
    out: dict[str, None] = {}
    for w in words(text):
        if w in STOPWORDS or w.isdigit() or (w.isascii() and len(w) < 2):
            continue
        out.setdefault(stem(w), None)
    return list(out)


def share_present(needed: list[str], have: set[str] | frozenset[str]) -> float:
    """The fraction of ``needed`` found in ``have`` (1.0 when nothing is needed)."""
    if not needed:
        return 1.0
    return sum(w in have for w in needed) / len(needed)


def word_overlap(a: str, b: str) -> float:
    """Containment of word sets: ``|A ∩ B| / min(|A|, |B|)``, 0.0 when either text has no words."""
    wa, wb = word_set(a), word_set(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


__all__ = ["DUPLICATE_THRESHOLD", "content_words", "share_present", "word_overlap"]
