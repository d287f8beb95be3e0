"""EvalRun: one evaluation, aggregated: overall and per-tag metrics, label counts, question rows.

It is what ``Desk.evaluate`` returns, what ``Store.save_eval_run`` stores (as ``to_dict()``) and what
the gate compares. Its home is ``evidencedesk.results.evaluation``; it is named here too.
"""

from __future__ import annotations

from evidencedesk.results.evaluation import EvalRun, LabelCount, counts_rows

__all__ = ["EvalRun", "LabelCount", "counts_rows"]
