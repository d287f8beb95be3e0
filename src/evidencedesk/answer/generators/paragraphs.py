"""Where each quotable unit sits: which paragraph of its chunk, so an answer can keep a sentence's neighbour.

A sentence often needs the one beside it: "Do not put an old battery in household waste." is
followed by "Bring it to the Dhanmondi showroom and we will recycle it free of charge." Paragraphs
are the stretches of a chunk's text between blank lines; a unit belongs to the paragraph where
its text starts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evidencedesk.answer.units import Unit

_BLANK = re.compile(r"\n[ \t]*\n")


def paragraph_ids(text: str, units: Sequence[Unit]) -> list[int]:
    """For units split from ``text`` in reading order, the index of the paragraph each one starts in.

    A unit whose text cannot be found (it never happens for units of ``text``) gets ``-1`` and so
    shares a paragraph with nothing.
    """
    breaks = [m.start() for m in _BLANK.finditer(text)]
    out: list[int] = []
    pos = 0
    for u in units:
        first_line = u.text.splitlines()[0] if u.text else ""
        at = text.find(first_line, pos) if first_line else -1
        if at < 0:
            out.append(-1)
            continue
        pos = at + len(first_line)
        out.append(sum(b < at for b in breaks))
    return out


def neighbours(index: int, units: Sequence[Unit], paragraphs: Sequence[int]) -> list[int]:
    """Indices of the prose sentences right before and after ``units[index]`` in its chunk and paragraph."""
    here = units[index]
    if here.kind != "sentence" or paragraphs[index] < 0:
        return []
    return [
        j
        for j, u in enumerate(units)
        if u.kind == "sentence"
        and u.chunk_id == here.chunk_id
        and abs(u.position - here.position) == 1
        and paragraphs[j] == paragraphs[index]
    ]


__all__ = ["neighbours", "paragraph_ids"]
