"""Per-tag slices: every metric's n, mean and standard error, with small slices flagged.

The standard error is the sample standard deviation over sqrt(n) (0.0 when n < 2). A slice with
fewer than ``SMALL_N`` questions is flagged ``small``: one question moves its mean a lot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from evidencedesk.evaluation.labels import TAGS

SMALL_N = 10
ALL = "all"


@dataclass(frozen=True)
class Stat:
    n: int
    mean: float
    se: float
    small: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def stat(values: Sequence[float]) -> Stat:
    """n, mean, standard error (sample sd / sqrt(n)) and the small-n flag of some values."""
    n = len(values)
    if n == 0:
        return Stat(0, 0.0, 0.0, True)
    mean = sum(values) / n
    se = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else 0.0
    return Stat(n, mean, se, n < SMALL_N)


def slices(rows: Iterable[tuple[Sequence[str], Mapping[str, float | None]]]) -> dict[str, dict[str, Stat]]:
    """``{slice: {metric: Stat}}`` from ``(tags, metrics)`` rows; slice ``all`` holds every row.

    A metric that is None for a row (not defined for that question) is left out of that row's slices.
    Tags come in the order of ``TAGS``, unknown tags after them in order of appearance.
    """
    values: dict[str, dict[str, list[float]]] = {ALL: {}}
    for tags, metrics in rows:
        for name in (ALL, *tags):
            bucket = values.setdefault(name, {})
            for metric, v in metrics.items():
                if v is not None:
                    bucket.setdefault(metric, []).append(float(v))
    order = [ALL] + [t for t in TAGS if t in values] + [t for t in values if t != ALL and t not in TAGS]
    return {name: {m: stat(vs) for m, vs in values[name].items()} for name in order}


def slices_to_dict(table: Mapping[str, Mapping[str, Stat]]) -> dict[str, dict[str, dict[str, object]]]:
    return {s: {m: st.to_dict() for m, st in ms.items()} for s, ms in table.items()}


__all__ = ["ALL", "SMALL_N", "Stat", "slices", "slices_to_dict", "stat"]
