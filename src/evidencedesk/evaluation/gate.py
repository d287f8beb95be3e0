"""The regression gate: compare two evaluation runs slice by slice, metric by metric.

``run_a`` is the baseline, ``run_b`` the candidate (both as ``EvalRun.to_dict()`` or as the store
returns them). Every metric is "higher is better". A metric on a slice regresses when its mean in
``run_b`` is lower than in ``run_a`` by more than ``threshold``. Metrics or slices present in only
one run are listed in ``notes`` and never gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from evidencedesk.constants import EXIT_REGRESSED


@dataclass(frozen=True)
class Delta:
    """One metric on one slice in both runs: its means, its question counts, and whether it regressed."""

    slice: str
    metric: str
    a: float
    b: float
    n_a: int
    n_b: int
    small: bool
    regressed: bool

    @property
    def delta(self) -> float:
        return self.b - self.a

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "delta": self.delta}


@dataclass(frozen=True)
class Comparison:
    """Two runs compared: every shared metric on every shared slice, and notes on what only one holds."""

    threshold: float
    deltas: tuple[Delta, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        return any(d.regressed for d in self.deltas)

    @property
    def regressions(self) -> list[Delta]:
        return [d for d in self.deltas if d.regressed]

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "regressed": self.regressed,
            "regressions": [d.to_dict() for d in self.regressions],
            "deltas": [d.to_dict() for d in self.deltas],
            "notes": list(self.notes),
        }


def _slices(run: Mapping[str, Any], name: str) -> dict[str, dict[str, dict[str, Any]]]:
    table = run.get("slices")
    if not isinstance(table, dict):
        raise ValueError(f"run {name}: has no 'slices' table; is it an evaluation run?")
    return table


def compare(run_a: Mapping[str, Any], run_b: Mapping[str, Any], threshold: float = 0.02) -> Comparison:
    """Per-slice, per-metric differences of ``run_b`` against ``run_a``; ``regressed`` when any drops."""
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold: must be at least 0 and below 1, got {threshold}")
    a, b = _slices(run_a, "A"), _slices(run_b, "B")
    deltas: list[Delta] = []
    notes: list[str] = []
    for key in ("k", "method", "chunking_hash", "scope"):
        if run_a.get(key) != run_b.get(key):
            notes.append(f"{key} differs: {run_a.get(key)!r} vs {run_b.get(key)!r}")
    for name in a:
        if name not in b:
            notes.append(f"slice {name!r} only in run A")
            continue
        for metric, sa in a[name].items():
            sb = b[name].get(metric)
            if sb is None:
                notes.append(f"metric {metric!r} on slice {name!r} only in run A")
                continue
            drop = float(sa["mean"]) - float(sb["mean"])
            deltas.append(
                Delta(
                    slice=name,
                    metric=metric,
                    a=float(sa["mean"]),
                    b=float(sb["mean"]),
                    n_a=int(sa["n"]),
                    n_b=int(sb["n"]),
                    small=bool(sa.get("small") or sb.get("small")),
                    regressed=drop > threshold + 1e-12,
                )
            )
        notes.extend(f"metric {m!r} on slice {name!r} only in run B" for m in b[name] if m not in a[name])
    notes.extend(f"slice {name!r} only in run B" for name in b if name not in a)
    return Comparison(threshold, tuple(deltas), tuple(notes))


__all__ = ["EXIT_REGRESSED", "Comparison", "Delta", "compare"]
