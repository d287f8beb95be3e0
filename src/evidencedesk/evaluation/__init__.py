"""Evaluation: labels, ranking metrics, diagnosis by stage, slices, reports and the regression gate.

The names below are imported on first use, so importing one small module of this package (the
text helpers the answer pipeline uses, for instance) never pulls in searchers or chunkers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and editors
    from evidencedesk.evaluation.gate import Comparison as Comparison
    from evidencedesk.evaluation.gate import compare as compare
    from evidencedesk.evaluation.labels import Gold as Gold
    from evidencedesk.evaluation.labels import Label as Label
    from evidencedesk.evaluation.labels import LabelError as LabelError
    from evidencedesk.evaluation.labels import LabelIssue as LabelIssue
    from evidencedesk.evaluation.labels import load_labels as load_labels
    from evidencedesk.evaluation.labels import read_labels as read_labels
    from evidencedesk.evaluation.report_html import render_report as render_report
    from evidencedesk.evaluation.report_html import write_report as write_report
    from evidencedesk.evaluation.run import EvalRun as EvalRun
    from evidencedesk.evaluation.runner import QuestionResult as QuestionResult
    from evidencedesk.evaluation.runner import evaluate as evaluate
    from evidencedesk.evaluation.series import chunk_size_series as chunk_size_series
    from evidencedesk.evaluation.strategies import compare_strategies as compare_strategies
    from evidencedesk.evaluation.strategies import recall_curve as recall_curve
    from evidencedesk.evaluation.table import answer_matches as answer_matches
    from evidencedesk.evaluation.table import retrieval_by_answer as retrieval_by_answer
    from evidencedesk.evaluation.taxonomy import LABELS as LABELS
    from evidencedesk.evaluation.taxonomy import STAGES as STAGES
    from evidencedesk.evaluation.taxonomy import diagnose as diagnose
    from evidencedesk.evaluation.taxonomy import label_counts as label_counts
    from evidencedesk.text.overlap import word_overlap as word_overlap

_EXPORTS = {
    "Gold": "labels",
    "Label": "labels",
    "LabelError": "labels",
    "LabelIssue": "labels",
    "load_labels": "labels",
    "read_labels": "labels",
    "word_overlap": "evidencedesk.text.overlap",  # a dotted name: a module outside this package
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


def __getattr__(name: str) -> object:
    """Import an exported name's module on first use (type checkers see the imports above instead)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
