"""Finding a label's evidence phrase in a chunk whatever the formatting around it.

A phrase copied from a document reads "Dinner 50 EUR" while the chunk holding it reads
"| Dinner | 50 EUR |"; a phrase copied from a rendered page lacks the ``**`` of its Markdown source.
Both sides are compared in their ``match_form``:

* NFC text without zero-width joiners or soft hyphens;
* table separator lines (``|---|---|``) removed and every ``|`` read as a space;
* Markdown marks removed: ``#`` heading marks, ``>`` quote marks and ``-``/``*``/``+`` bullets at the
  start of a line, ``**``, ``__``, ``~~``, ``*`` and backticks anywhere, and ``_`` where it opens or
  closes emphasis (an identifier such as ``max_bytes`` keeps its underscore);
* every run of whitespace, line breaks included, read as one space; the ends stripped.

``holds_phrase`` also refuses a match that cuts a number: "969" is not found in "1,969" or "9690"
(a phrase that starts or ends with a digit must not continue a number there).
"""

from __future__ import annotations

import re
from functools import lru_cache

from evidencedesk.text.words import normalize_text

_SEPARATOR_LINE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.MULTILINE)
_LINE_MARK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+)", re.MULTILINE)
_INLINE_MARK = re.compile(r"\*\*|__|~~|[*`]|(?<!\w)_|_(?!\w)")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def match_form(text: str) -> str:
    """``text`` as evidence matching reads it (see the module's list)."""
    text = _SEPARATOR_LINE.sub("", normalize_text(text))
    text = _LINE_MARK.sub("", text).replace("|", " ")
    return _SPACE.sub(" ", _INLINE_MARK.sub("", text)).strip()


def _cuts_a_number(haystack: str, start: int, end: int) -> bool:
    """Whether ``haystack[start:end]`` begins or ends in the middle of a number."""
    if haystack[start].isdigit() and start > 0:
        before = haystack[start - 1]
        if before.isdigit() or (before in ",." and start > 1 and haystack[start - 2].isdigit()):
            return True
    if haystack[end - 1].isdigit() and end < len(haystack):
        after = haystack[end]
        if after.isdigit() or (after in ",." and end + 1 < len(haystack) and haystack[end + 1].isdigit()):
            return True
    return False


def holds_phrase(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` without cutting a number; both already in ``match_form``."""
    if not needle:
        return False
    at = haystack.find(needle)
    while at >= 0:
        if not _cuts_a_number(haystack, at, at + len(needle)):
            return True
        at = haystack.find(needle, at + 1)
    return False


def names_document(doc: str, doc_id: str, source: str) -> bool:
    """Whether ``doc`` (a label's anchor: a document id or a source path) names the document with
    ``doc_id`` (a tenant's prefix may be left out) read from ``source`` (the path may be given from any
    folder up: ``pdfs/BESTBUY_2023_10K.pdf`` names ``/data/fin/pdfs/BESTBUY_2023_10K.pdf``)."""
    doc = doc.strip().replace("\\", "/")
    if doc in (doc_id, doc_id.rpartition(":")[2]):
        return True
    path = source.replace("\\", "/")
    return bool(path) and (path == doc or path.endswith("/" + doc.lstrip("/")))


__all__ = ["holds_phrase", "match_form", "names_document"]
