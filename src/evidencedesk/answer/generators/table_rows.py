"""Table rows as answers: how well a question names a row's key cell.

A table row answers a question when the question names the row: its first cell ("Stem bolts",
"E21", "Chattogram, Sylhet, Khulna") is the key, the other cells are the values. A key that lists
alternatives (commas or slashes) matches when any one of them does. A number in the question
matches a key that holds it, or a range ``a-b`` that contains it (175 cm falls in "170-180 cm").

``key_match(question, row_text)`` is the share of the key's words the question holds, best
alternative first; 0.0 for anything that is not a Markdown table row.
"""

from __future__ import annotations

import re

from evidencedesk.answer.generators.lexical_match import holds, question_terms, term
from evidencedesk.text import STOPWORDS, numbers, words

_RANGE = re.compile(r"(\d+(?:\.\d+)?)\s*[-–]\s*(\d+(?:\.\d+)?)")
_ALTERNATIVES = re.compile(r"\s*[,/;]\s*|\s+or\s+")


def row_cells(line: str) -> list[str]:
    """The cells of one Markdown table line, outer pipes removed."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _in_range(value: str, alternative: str) -> bool:
    x = _as_float(value)
    if x is None:
        return False
    for lo, hi in _RANGE.findall(alternative):
        a, b = float(lo), float(hi)
        if min(a, b) <= x <= max(a, b):
            return True
    return False


def _alternative_share(alternative: str, terms: frozenset[str], asked_numbers: list[str]) -> float:
    ranged = any(_in_range(n, alternative) for n in asked_numbers)
    text = _RANGE.sub(" ", alternative) if ranged else alternative
    key_words = [w for w in words(text) if w not in STOPWORDS and not w.isdigit() and not (w.isascii() and len(w) < 2)]
    key_numbers = numbers(text)
    parts = len(key_words) + len(key_numbers) + ranged
    if not parts:
        return 0.0
    hits = ranged + sum(n in asked_numbers for n in key_numbers) + sum(holds(term(w), terms) for w in key_words)
    return hits / parts


def key_match(question: str, unit_text: str) -> float:
    """How fully ``question`` names the key cell of the table row in ``unit_text`` (header line + row line)."""
    lines = [x for x in unit_text.splitlines() if x.strip().startswith("|")]
    if not lines:
        return 0.0
    cells = row_cells(lines[-1])
    alternatives = [a for a in _ALTERNATIVES.split(cells[0]) if a.strip()] if cells else []
    if not alternatives:
        return 0.0
    terms = frozenset(question_terms(question))
    asked = numbers(question)
    return max(_alternative_share(a, terms, asked) for a in alternatives)


__all__ = ["key_match", "row_cells"]
