"""Evaluation: labels, ranking metrics, diagnosis by stage, slices, reports and the regression gate.

The names below are imported on first use, so importing one small module of this package (the
text helpers the answer pipeline uses, for instance) never pulls in searchers or chunkers.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Gold": "labels",
    "Label": "labels",
    "LabelError": "labels",
    "LabelIssue": "labels",
    "load_labels": "labels",
    "read_labels": "labels",
    "word_overlap": "overlap",
    "STAGES": "taxonomy",
    "LABELS": "taxonomy",
    "diagnose": "taxonomy",
    "label_counts": "taxonomy",
    "answer_matches": "table",
    "retrieval_by_answer": "table",
    "QuestionResult": "runner",
    "evaluate": "runner",
    "EvalRun": "run",
    "compare_strategies": "strategies",
    "recall_curve": "strategies",
    "Comparison": "gate",
    "compare": "gate",
    "render_report": "report_html",
    "write_report": "report_html",
    "chunk_size_series": "series",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
