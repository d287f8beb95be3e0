"""The regression gate: compare two evaluation runs slice by slice, metric by metric.

``run_a`` is the baseline, ``run_b`` the candidate (both as ``EvalRun.to_dict()`` or as the store
returns them). Every metric is "higher is better". A metric on a slice regresses when its mean in
``run_b`` is lower than in ``run_a`` by more than ``threshold``. Metrics or slices present in only
one run are listed in ``notes`` and never gate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.constants import EXIT_REGRESSED


@dataclass(frozen=True)
class Delta:
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

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "delta": self.delta}


@dataclass
class Comparison:
    threshold: float
    deltas: list[Delta] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(d.regressed for d in self.deltas)

    @property
    def regressions(self) -> list[Delta]:
        return [d for d in self.deltas if d.regressed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "regressed": self.regressed,
            "regressions": [d.to_dict() for d in self.regressions],
            "deltas": [d.to_dict() for d in self.deltas],
            "notes": list(self.notes),
        }


def _slices(run: dict[str, Any], name: str) -> dict[str, dict[str, dict[str, Any]]]:
    table = run.get("slices")
    if not isinstance(table, dict):
        raise ValueError(f"run {name}: has no 'slices' table; is it an evaluation run?")
    return table


def compare(run_a: dict[str, Any], run_b: dict[str, Any], threshold: float = 0.02) -> Comparison:
    """Per-slice, per-metric differences of ``run_b`` against ``run_a``; ``regressed`` when any drops."""
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold: must be at least 0 and below 1, got {threshold}")
    a, b = _slices(run_a, "A"), _slices(run_b, "B")
    out = Comparison(threshold)
    for key in ("k", "method", "chunking_hash", "scope"):
        if run_a.get(key) != run_b.get(key):
            out.notes.append(f"{key} differs: {run_a.get(key)!r} vs {run_b.get(key)!r}")
    for name in a:
        if name not in b:
            out.notes.append(f"slice {name!r} only in run A")
            continue
        for metric, sa in a[name].items():
            sb = b[name].get(metric)
            if sb is None:
                out.notes.append(f"metric {metric!r} on slice {name!r} only in run A")
                continue
            drop = float(sa["mean"]) - float(sb["mean"])
            out.deltas.append(
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
        out.notes.extend(f"metric {m!r} on slice {name!r} only in run B" for m in b[name] if m not in a[name])
    out.notes.extend(f"slice {name!r} only in run B" for name in b if name not in a)
    return out


__all__ = ["EXIT_REGRESSED", "Comparison", "Delta", "compare"]
