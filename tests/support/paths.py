"""Where the tests find the project, its example corpus and the shared data sets."""

from __future__ import annotations

from pathlib import Path

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
