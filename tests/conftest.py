"""What every test shares: the PostgreSQL fixtures, and a closing summary of what was skipped and why.

Helpers live in the ``tests.support`` package (paths, chunk builders, embedders, stores); import
them from there. Fixtures for one folder stay in that folder's conftest.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

pytest_plugins = ["tests.support.postgres", "tests.support.stores"]


def _reason(report: Any) -> str:
    """The skip reason of a report, without pytest's ``Skipped: `` prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(reason).removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """End with how many tests were skipped, grouped by reason (a run without a server says so here)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = Counter(_reason(r) for r in skipped)
    terminalreporter.section(f"{len(skipped)} skipped")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"{n:5d}  {reason}")
    if not os.environ.get("CI"):
        terminalreporter.write_line("(with CI set, a test that needs PostgreSQL fails instead of skipping)")
