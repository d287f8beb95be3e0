"""Excerpts: a chunk cut down to the units that best match a question, when the whole does not fit.

A chunk is read as the units ``answer.units`` quotes (prose sentences, table rows, code blocks) plus
the labels around them (headings, a table's header and separator, a short caption line right above a
table). Units are ranked by how well they match the question: each question word (stemmed, no
stopwords) or number found in the unit adds its weight, ``log((n + 1) / (df + 0.5))``, where ``n`` is
the chunk's number of units and ``df`` how many of them hold the word; a word every row repeats
("million") thus weighs little, and a row label the question names weighs most. Ties keep reading
order.

``excerpt`` adds units best first while the excerpt still ``fits`` (a caller's test, e.g. the
context's token budget); shorter units after one that did not fit may still go in (a unit at least as
long as one that did not fit is not tried). The excerpt keeps
reading order, each kept row under its table's header (and caption), each kept unit under the headings
in effect above it; nothing is reworded, so every kept sentence or row is verbatim chunk text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from evidencedesk.answer.units import split_sentences
from evidencedesk.documents import Chunk
from evidencedesk.text import content_words, numbers

_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s")
CAPTION_WORDS = 12  # a line this short right above a table is its caption (title, units)


@dataclass(frozen=True)
class Piece:
    """One part of a chunk's text: a unit (``sentence``, ``row``, ``code``) or a label
    (``heading``, ``header``: a table's header and separator lines, ``caption``)."""

    kind: str
    text: str
    line: int  # the first source line (0-based) the piece comes from
    level: int = 0  # a heading's level (1 for ``#``)
    table: int = -1  # the table a row, header or caption belongs to

    @property
    def is_unit(self) -> bool:
        return self.kind in ("sentence", "row", "code")


def pieces(text: str, kind: str = "text") -> list[Piece]:
    """The pieces of ``text`` in reading order (a ``code`` chunk without fences is one unit)."""
    lines = text.splitlines()
    if kind == "code" and not any(_FENCE.match(x) for x in lines):
        return [Piece("code", text.strip(), 0)] if text.strip() else []
    out: list[Piece] = []
    fence: list[str] | None = None
    fence_line = 0
    table = -1
    in_table = False
    for n, line in enumerate(lines):
        if fence is not None:
            fence.append(line)
            if _FENCE.match(line):
                out.append(Piece("code", "\n".join(fence), fence_line))
                fence = None
            continue
        if _FENCE.match(line):
            fence, fence_line, in_table = [line], n, False
            continue
        stripped = line.strip()
        if stripped.startswith("|"):
            if not in_table:
                table, in_table = table + 1, True
                _caption(out, n, table)
                out.append(Piece("header", stripped, n, table=table))
            elif _SEPARATOR.match(stripped):
                out.append(Piece("header", stripped, n, table=table))
            else:
                out.append(Piece("row", stripped, n, table=table))
            continue
        in_table = False
        if not stripped:
            continue
        heading = _HEADING.match(stripped)
        if heading:
            out.append(Piece("heading", stripped, n, level=len(heading.group(1))))
            continue
        out.extend(Piece("sentence", s, n) for s in split_sentences(stripped))
    if fence is not None:  # an unclosed fence: the rest is code
        out.append(Piece("code", "\n".join(fence), fence_line))
    return out


def _caption(out: list[Piece], line: int, table: int) -> None:
    """Make the short prose line right above a table (no blank line between) the table's caption."""
    if not out or out[-1].kind != "sentence" or out[-1].line != line - 1:
        return
    if any(p.line == line - 1 for p in out[:-1] if p.kind == "sentence"):
        return  # the line holds several sentences: prose, not a caption
    last = out[-1]
    if len(last.text.split()) <= CAPTION_WORDS:
        out[-1] = Piece("caption", last.text, last.line, table=table)


def unit_scores(question: str, units: Sequence[Piece]) -> list[float]:
    """How well each unit matches ``question`` (see the module's weighting); 0.0 for no shared word."""
    wanted = {*content_words(question), *(f"#{x}" for x in numbers(question))}
    if not wanted:
        return [0.0] * len(units)
    terms = [wanted.intersection({*content_words(u.text), *(f"#{x}" for x in numbers(u.text))}) for u in units]
    df: dict[str, int] = {}
    for found in terms:
        for t in found:
            df[t] = df.get(t, 0) + 1
    n = len(units)
    return [sum(math.log((n + 1) / (df[t] + 0.5)) for t in found) for found in terms]


def render_pieces(all_pieces: Sequence[Piece], keep: set[int]) -> str:
    """The text of the units at positions ``keep`` of ``all_pieces`` with the labels they need, in order."""
    headings: dict[int, int] = {}  # level -> index of the heading in effect
    shown_headings: set[int] = set()
    shown_tables: set[int] = set()
    out: list[tuple[Piece, str]] = []  # (piece, text) in output order
    for i, p in enumerate(all_pieces):
        if p.kind == "heading":
            headings = {lv: at for lv, at in headings.items() if lv < p.level}
            headings[p.level] = i
            continue
        if i not in keep:
            continue
        for lv in sorted(headings):
            if headings[lv] not in shown_headings:
                shown_headings.add(headings[lv])
                out.append((all_pieces[headings[lv]], all_pieces[headings[lv]].text))
        if p.kind == "row" and p.table not in shown_tables:
            shown_tables.add(p.table)
            out += [(q, q.text) for q in all_pieces if q.table == p.table and q.kind in ("caption", "header")]
        out.append((p, p.text))
    return _join(out)


def _join(parts: list[tuple[Piece, str]]) -> str:
    """Sentences of one source line share a line; a table's lines stay together; other breaks get a blank line."""
    text = ""
    last: Piece | None = None
    for p, body in parts:
        if last is None:
            text = body
        elif p.line == last.line and p.kind == last.kind == "sentence":
            text += " " + body
        elif p.table >= 0 and p.table == last.table:
            text += "\n" + body
        else:
            text += "\n\n" + body
        last = p
    return text


@dataclass(frozen=True)
class Excerpt:
    """A chunk cut to some of its units: the chunk (same id, the excerpt as its text) and what was kept."""

    chunk: Chunk
    kept: tuple[int, ...]  # positions (0-based, reading order) of the kept units among the chunk's units
    units: int  # the chunk's units in all
    kinds: tuple[str, ...]  # the kind of each kept unit

    def describe(self) -> str:
        rows = sum(k == "row" for k in self.kinds)
        what = f"{rows} row(s)" if rows == len(self.kinds) else f"{len(self.kinds)} unit(s)"
        where = ", ".join(str(n + 1) for n in self.kept)
        return f"kept {what} of {self.units} (units {where}), best matches for the question first"


def with_text(chunk: Chunk, text: str) -> Chunk:
    """``chunk`` showing ``text`` instead of its own (a parent-child chunk's parent text too)."""
    return replace(chunk, text=text, parent_text=text if chunk.parent_text is not None else None)


def _read(chunk: Chunk, question: str) -> tuple[list[Piece], list[int], list[float]]:
    """The chunk's pieces, the positions of its units among them, and each unit's score."""
    parts, at, scores = _read_text(chunk.parent_text or chunk.text, chunk.kind, question)
    return list(parts), list(at), list(scores)


@lru_cache(maxsize=512)
def _read_text(text: str, kind: str, question: str) -> tuple[tuple[Piece, ...], tuple[int, ...], tuple[float, ...]]:
    parts = pieces(text, kind)
    at = [i for i, p in enumerate(parts) if p.is_unit]
    return tuple(parts), tuple(at), tuple(unit_scores(question, [parts[i] for i in at]))


def _cut(chunk: Chunk, parts: list[Piece], at: list[int], chosen: set[int]) -> Excerpt:
    kept = tuple(sorted(chosen))
    text = render_pieces(parts, {at[u] for u in kept})
    return Excerpt(with_text(chunk, text), kept, len(at), tuple(parts[at[u]].kind for u in kept))


def best_unit(chunk: Chunk, question: str) -> Excerpt | None:
    """``chunk`` cut to its one unit that best matches ``question``; None when it has fewer than two
    units or none shares a word or number with the question."""
    parts, at, scores = _read(chunk, question)
    if len(at) < 2 or max(scores) <= 0:
        return None
    return _cut(chunk, parts, at, {max(range(len(at)), key=lambda u: (scores[u], -u))})


def excerpt(chunk: Chunk, question: str, fits: Callable[[Chunk], bool], matching_only: bool = False) -> Excerpt | None:
    """The best-matching units of ``chunk`` that together still ``fits``; None when not one unit does,
    or the chunk has fewer than two units (nothing to cut). ``matching_only``: only units that share a
    word or number with the question are candidates."""
    parts, at, scores = _read(chunk, question)
    if len(at) < 2:
        return None
    order = sorted((u for u in range(len(at)) if scores[u] > 0 or not matching_only), key=lambda u: (-scores[u], u))
    chosen: set[int] = set()
    too_long = math.inf  # the shortest unit that did not fit: a longer one will not fit either
    for u in order:
        size = len(parts[at[u]].text)
        if size >= too_long:
            continue
        if fits(_cut(chunk, parts, at, {*chosen, u}).chunk):
            chosen.add(u)
        else:
            too_long = size
    return _cut(chunk, parts, at, chosen) if chosen else None


def units_of(chunk: Chunk) -> int:
    """How many units ``excerpt`` may choose from in ``chunk``."""
    return sum(1 for p in pieces(chunk.parent_text or chunk.text, chunk.kind) if p.is_unit)


__all__ = [
    "CAPTION_WORDS",
    "Excerpt",
    "Piece",
    "best_unit",
    "excerpt",
    "pieces",
    "render_pieces",
    "unit_scores",
    "units_of",
    "with_text",
]
