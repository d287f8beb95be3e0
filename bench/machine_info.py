"""One line describing the machine a benchmark ran on, for the headers in bench/RESULTS.md."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> str:
    """System, cores, CPU model, memory and the load average when the benchmark started."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        memory = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM"
    except (ValueError, OSError, AttributeError):
        memory = ""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}){memory}, "
        f"Python {platform.python_version()}, load avg {load:.1f} at start"
    )


def write_section(results: Path, heading: str, section: str) -> None:
    """Replace (or append) the section starting with ``heading`` in the file ``results`` (created when missing)."""
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
    results.write_text(replace_section(text, heading, section), encoding="utf-8")


def replace_section(text: str, heading: str, section: str) -> str:
    """``text`` (a RESULTS.md) with the section that starts with ``heading`` replaced by ``section``
    (appended when absent); the section ends at the next ``## `` heading."""
    start = text.find(heading)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + section
    end = text.find("\n## ", start + len(heading))
    return text[:start] + section + (text[end + 1 :] if end >= 0 else "")
