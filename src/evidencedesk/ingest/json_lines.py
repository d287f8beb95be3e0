"""Reading a JSON lines file (one JSON value per line): the manifest ``_manifest.jsonl`` and a BEIR corpus."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def json_lines(lines: Iterable[str], name: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each line that is not blank, numbered from 1; a line that is not JSON
    raises ValueError ``NAME line N: not JSON (why)``."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} line {n}: not JSON ({exc.msg})") from None
        yield n, value


__all__ = ["json_lines"]
