"""Measuring, splitting and packing character spans of a body, in characters or words.

``split`` cuts a span recursively on separators (the first that occurs, then the next inside any piece
still too long, then hard cuts) into pieces no longer than ``size``; each separator stays at the end of
the piece before it, so no text is lost. ``pack`` merges consecutive pieces back up to ``size``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evidencedesk.chunking.layout import Layout

_WORD = re.compile(r"\S+")

Span = tuple[int, int]


def measure(text: str, unit: str) -> int:
    """The length of ``text`` in ``unit``: characters, or whitespace-separated words."""
    return len(text) if unit == "chars" else len(text.split())


def hard_cut(layout: Layout, start: int, end: int, size: int, unit: str) -> list[Span]:
    """Consecutive pieces of ``size`` characters, or of ``size`` words, ignoring every boundary."""
    if unit == "chars":
        cuts = [(a, min(a + size, end)) for a in range(start, end, size)]
    else:
        words = [(m.start() + start, m.end() + start) for m in _WORD.finditer(layout.text[start:end])]
        cuts = [(words[i][0], words[min(i + size, len(words)) - 1][1]) for i in range(0, len(words), size)]
    trimmed = (layout.trim(a, b) for a, b in cuts)
    return [(a, b) for a, b in trimmed if a < b]


def split(layout: Layout, start: int, end: int, separators: Sequence[str], size: int, unit: str) -> list[Span]:
    """Pieces of ``[start, end)``, each at most ``size`` long, in order and covering all its non-blank text."""
    start, end = layout.trim(start, end)
    if start >= end:
        return []
    text = layout.text
    if measure(text[start:end], unit) <= size:
        return [(start, end)]
    for i, sep in enumerate(separators):
        at = text.find(sep, start, end)
        if at < 0:
            continue
        pieces: list[Span] = []
        prev = start
        while at >= 0:
            pieces.extend(split(layout, prev, at + len(sep), separators[i + 1 :], size, unit))
            prev = at + len(sep)
            at = text.find(sep, prev, end)
        pieces.extend(split(layout, prev, end, separators[i + 1 :], size, unit))
        return pieces
    return hard_cut(layout, start, end, size, unit)


def pack(layout: Layout, pieces: Sequence[Span], size: int, unit: str, overlap: int = 0) -> list[Span]:
    """Consecutive pieces merged greedily while the merged text is at most ``size`` long.

    With ``overlap``, a new span starts with the last pieces of the one before whose text is at most
    ``overlap`` long (whole pieces only, so a large piece gives no overlap).
    """
    text = layout.text
    out: list[Span] = []
    current: list[Span] = []
    for piece in pieces:
        if current and measure(text[current[0][0] : piece[1]], unit) > size:
            out.append((current[0][0], current[-1][1]))
            keep = 0
            while keep < len(current):
                first = current[-1 - keep][0]
                tail, joined = text[first : current[-1][1]], text[first : piece[1]]
                if measure(tail, unit) > overlap or measure(joined, unit) > size:
                    break
                keep += 1
            current = current[len(current) - keep :] if keep else []
        current.append(piece)
    if current:
        out.append((current[0][0], current[-1][1]))
    return out
