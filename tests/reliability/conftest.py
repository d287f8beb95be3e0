"""Prints how many fuzz inputs, crash trials and concurrent requests the reliability suites ran."""

from __future__ import annotations

from typing import Any

from tests.support.reliability import COUNTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    terminalreporter.section("reliability counts")
    for name, n in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{name}: {n}")
