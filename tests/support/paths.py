"""Where the tests find the project, its example corpus and the shared data sets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
"""The project's root folder."""
EXAMPLES = ROOT / "examples"
KESTREL = EXAMPLES / "kestrel"
"""The bundled example corpus (a demo and test corpus, never tuning data)."""
KESTREL_DOCS = KESTREL / "docs"
KESTREL_LABELS = KESTREL / "labels.jsonl"
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
DATASETS = SHARED / "datasets"
SCIFACT = DATASETS / "scifact"


def kestrel_available() -> bool:
    return KESTREL_DOCS.is_dir() and any(KESTREL_DOCS.iterdir())


def require_dataset(path: Path, needed_by: str) -> Path:
    """Return a file (or non-empty folder) of a shared data set; skip the test without it, or fail when ``CI`` is set.

    CI provides the shared data sets, so there a missing one is a broken setup, never a quiet skip.
    """
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
        return path
    message = f"{needed_by} need the data set at {path}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so it must be there)", pytrace=False)
    pytest.skip(message)
