"""Paths and helpers shared by the evaluation tests (the Kestrel example corpus)."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.documents import Chunk, Document
from evidencedesk.evaluation.labels import Label
from tests.support.paths import KESTREL_LABELS


def chunk_all(documents: list[Document], config: ChunkingConfig) -> list[Chunk]:
    return [c for d in documents for c in chunk_document(d, config)]


def by_id(labels: list[Label], label_id: str) -> Label:
    found = [x for x in labels if x.id == label_id]
    assert found, f"label {label_id} is missing from {KESTREL_LABELS}"
    return found[0]


def holder(label: Label, chunks: list[Chunk], grade: int = 2) -> Chunk:
    """The first chunk holding a phrase of ``label`` with ``grade`` (fails clearly when none does)."""
    found = [c for c in chunks if label.grade_of(c) == grade]
    assert found, f"no chunk holds a grade-{grade} phrase of label {label.id}"
    return found[0]
