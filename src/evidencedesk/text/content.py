"""Whether a chunk's text holds content, or only labels: headings, a table's header, footnote markers.

A PDF page cut into chunks can leave pieces that hold nothing but a heading ("### ASSETS"), the
header row of a table whose rows went to the next chunk, or a run of footnote markers
("1,2,5 2,5 3,5"). Such a piece can match a question's words well (a heading is made of them) and
still answer nothing. The rule, on Markdown text:

* heading lines (``#``), a table's first line (its header) and ``|---|`` separator lines are labels;
* a table row after the header is content when one of its cells holds a letter or a digit;
* other lines are prose: the text holds content when its prose has at least ``MIN_WORDS`` words of
  two or more characters and no digit (numbers alone, as in a run of footnote markers, do not count);
* a fenced code block is content.
"""

from __future__ import annotations

import re

from evidencedesk.text.words import words

MIN_WORDS = 3
_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def holds_content(text: str) -> bool:
    """True unless ``text`` holds only headings, a table header, separators and fewer than
    ``MIN_WORDS`` prose words (see the module's rule)."""
    prose_words = 0
    in_table = False
    for raw in text.splitlines():
        line = raw.strip()
        if _FENCE.match(line):
            return True
        if line.startswith("|"):
            if in_table and not _SEPARATOR.match(line) and any(ch.isalnum() for ch in line):
                return True
            in_table = True
            continue
        in_table = False
        if not line or line.startswith("#"):
            continue
        prose_words += sum(1 for w in words(line) if len(w) >= 2 and not any(ch.isdigit() for ch in w))
        if prose_words >= MIN_WORDS:
            return True
    return False


__all__ = ["MIN_WORDS", "holds_content"]
