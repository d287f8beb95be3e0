"""Answerable units of a chunk: sentences of prose, table rows with their header, code lines.

The extractive generator quotes units verbatim, and validation splits answers into sentences
the same way, so both sides agree on what "a sentence" is.

* Prose is split into sentences after ``.``, ``!``, ``?`` or the danda ``।`` when a capital,
  digit, quote or non-Latin letter follows; every line break also ends a sentence.
* A Markdown table row becomes ``header line + "\\n" + row line``: a cell means nothing without
  its column names. The ``|---|`` separator line is skipped.
* Code (a fenced block, or a chunk of kind ``code``) is kept line by line; comment lines stay
  attached to the command that follows them.
* Headings (``#`` lines outside code) are labels, not statements, and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidencedesk.documents import Chunk

_SENTENCE_END = re.compile(r"(?<=[.!?।])\s+(?=[\"'(\[A-Z0-9]|[^\x00-\x7f])")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*(#|//|--\s|;)")


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a chunk, verbatim, and where it sits."""

    text: str
    chunk_id: str
    kind: str  # sentence, row, code
    position: int  # order within the chunk


def split_sentences(text: str) -> list[str]:
    """Sentences of prose ``text``: split at line breaks and after sentence-ending punctuation."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def _code_units(lines: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    comments: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if _COMMENT.match(line):
            comments.append(line.rstrip())
            continue
        out.append(("code", "\n".join([*comments, line.rstrip()])))
        comments = []
    if comments:
        out.append(("code", "\n".join(comments)))
    return out


def _pieces(text: str, kind: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    if kind == "code" and not any(_FENCE.match(x) for x in lines):
        return _code_units(lines)
    out: list[tuple[str, str]] = []
    code: list[str] | None = None
    header: str | None = None
    for line in lines:
        if _FENCE.match(line):
            if code is None:
                code = []
            else:
                out.extend(_code_units(code))
                code = None
            continue
        if code is not None:
            code.append(line)
            continue
        stripped = line.strip()
        if stripped.startswith("|"):
            if header is None:
                header = stripped
            elif not _TABLE_SEPARATOR.match(stripped):
                out.append(("row", f"{header}\n{stripped}"))
            continue
        header = None
        if not stripped or stripped.startswith("#"):
            continue
        out.extend(("sentence", s) for s in split_sentences(stripped))
    if code:
        out.extend(_code_units(code))
    return out


def split_units(chunk: Chunk) -> list[Unit]:
    """The quotable units of the text a generator is shown for ``chunk``, in reading order."""
    shown = chunk.parent_text or chunk.text  # context.shown_text (context imports this module, via excerpt)
    return [Unit(text, chunk.id, kind, i) for i, (kind, text) in enumerate(_pieces(shown, chunk.kind))]


__all__ = ["Unit", "split_sentences", "split_units"]
