"""word_overlap: how much of the smaller of two texts the other repeats.

``|A ∩ B| / min(|A|, |B|)`` over the lowercased word sets, so a chunk wholly contained in another
scores 1.0 however long the other is. Two texts with no words score 0.0. Context assembly uses it
to drop near-duplicates, and diagnosis uses it to flag duplicate chunks in a prompt.
"""

from __future__ import annotations

from evidencedesk.evaluation.text import word_set

DUPLICATE_THRESHOLD = 0.8


def word_overlap(a: str, b: str) -> float:
    """Containment of word sets: ``|A ∩ B| / min(|A|, |B|)``, 0.0 when either text has no words."""
    wa, wb = word_set(a), word_set(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


__all__ = ["DUPLICATE_THRESHOLD", "word_overlap"]
