"""Figures in answers: does an answer state the figure a gold answer gives?

Financial and policy questions are often answered by one number ("$1577.00", "1.9%", "$8.4 billion").
An answer states that figure when one of its numbers equals it once both are normalised: thousands
separators, currency signs and percent signs dropped, scale words applied ("8.4 billion" is
8,400,000,000), and a table's unit allowed for (a filing's "(Millions) 1,577" states $1,577,000,000
as 1,577). Equality is up to the precision the answer gives: 24.3 states 24.26, 1,578 does not state
1,577, and a one-digit number states only a figure it equals. Citation markers ("[2]") are not
figures. Years (a whole number from 1900 to 2100 written without a separator, sign or decimals) are
dates, not figures, and are ignored on both sides.

>>> holds_gold_figure("Capital expenditure was 1,577 (millions).", "$1577.00")
True
>>> holds_gold_figure("It rose in 2022.", "Yes")
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Figure", "figures", "figures_found", "holds_gold_figure", "states"]

_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "trillion": 1e12,
}
_CITATION = re.compile(r"\[[^\]\n]{0,80}\]")  # "[1]", "[doc:c12]": markers, not figures
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−(])?\s?(?P<cur>[$€£])?\s?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?"
    r"(?:\s?(?P<pct>%|percent\b)|\s?(?P<scale>thousand|millions?|billions?|trillion|mn|bn|k|m)\b)?",
    re.IGNORECASE,
)
# a table's unit: a figure written in thousands, millions or billions of the gold's unit
_UNITS = (1.0, 1e3, 1e6, 1e9)


@dataclass(frozen=True)
class Figure:
    """One number as written: its value with any scale word applied, and the decimals it was given to."""

    value: float
    decimals: int
    percent: bool
    digits: int  # significant digits written: "2" has 1, "24.3" has 3

    def tolerance(self) -> float:
        """Half a unit of the last digit written: 24.3 covers 24.25 to 24.35."""
        return 0.5 * 10.0 ** (-self.decimals)


def _is_year(m: re.Match[str]) -> bool:
    text = m.group("int")
    return (
        m.group("dec") is None
        and m.group("cur") is None
        and m.group("sign") is None
        and m.group("pct") is None
        and m.group("scale") is None
        and "," not in text
        and len(text) == 4
        and 1900 <= int(text) <= 2100
    )


def figures(text: str) -> list[Figure]:
    """Every number in ``text`` that is not a year or inside a citation marker, in order."""
    out: list[Figure] = []
    for m in _NUMBER.finditer(_CITATION.sub(" ", text)):
        if _is_year(m):
            continue
        dec = m.group("dec") or ""
        value = float(m.group("int").replace(",", "") + ("." + dec if dec else ""))
        scale = _SCALES.get((m.group("scale") or "").lower(), 1.0)
        if m.group("sign"):
            value = -value
        digits = len((m.group("int").replace(",", "") + dec).lstrip("0")) or 1
        out.append(
            Figure(
                value * scale,
                len(dec) - (len(str(int(scale))) - 1 if scale > 1 else 0),
                percent=m.group("pct") is not None,
                digits=digits,
            )
        )
    return out


def states(answer_figure: Figure, gold: Figure) -> bool:
    """True when ``answer_figure`` writes ``gold``, to the answer's precision, in the gold's unit or a
    thousand, million or billion of it (signs ignored: "(370)" in a table is a decrease of 370).
    A one-digit number only states a gold figure it equals: "2" is not 1.9."""
    a, g = abs(answer_figure.value), abs(gold.value)
    tol = max(answer_figure.tolerance(), 1e-9) if answer_figure.digits >= 2 else 1e-9
    return any(abs(a * unit - g) <= tol * unit for unit in _UNITS)


def figures_found(answer: str, gold: str) -> tuple[int, int]:
    """(gold figures the answer states, gold figures) for one question."""
    golds = figures(gold)
    have = figures(answer)
    found = sum(1 for g in golds if any(states(a, g) for a in have))
    return found, len(golds)


def holds_gold_figure(answer: str, gold: str) -> bool | None:
    """True when the answer states at least one of the gold answer's figures; None when the gold
    answer gives no figure (a yes/no or a description), so the question does not count."""
    found, total = figures_found(answer, gold)
    return None if total == 0 else found > 0
