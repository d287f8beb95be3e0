"""Whether answers survive chunking: hand-made chunks, then the bundled Kestrel corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidencedesk.chunking import ChunkingConfig, chunk_document, whole_evidence
from evidencedesk.documents import Chunk
from evidencedesk.ingest import parse_folder

KESTREL = Path(__file__).resolve().parents[2] / "examples" / "kestrel"


def chunk(text: str, n: int = 0) -> Chunk:
    return Chunk(id=f"d:c{n}", doc_id="d", text=text)


ROWS = [
    {"id": "a", "answerable": True, "gold": [{"evidence": "within 30 days", "grade": 2, "with": []}]},
    {"id": "b", "answerable": True, "gold": [{"evidence": "| Stem bolts | 5 Nm", "grade": 2, "with": ["| Part |"]}]},
    {"id": "c", "answerable": True, "gold": [{"evidence": "free of charge", "grade": 1, "with": []}]},
    {"id": "d", "answerable": False, "gold": []},
]


def test_counts_answerable_rows_with_a_whole_grade_two_phrase():
    chunks = [chunk("Return it within 30\n   days.", 0), chunk("| Part | Size |\n|---|---|\n| Stem bolts | 5 Nm |", 1)]
    assert whole_evidence(chunks, ROWS) == (2, 3)


def test_a_phrase_cut_in_two_or_parted_from_its_header_is_not_whole():
    chunks = [chunk("Return it within 30"), chunk("days."), chunk("| Stem bolts | 5 Nm |"), chunk("| Part | Size |")]
    assert whole_evidence(chunks, ROWS) == (0, 3)


def test_grade_one_evidence_does_not_count():
    assert whole_evidence([chunk("we recycle it free of charge")], ROWS) == (0, 3)


CONFIGS = {
    "fixed-60-chars": ChunkingConfig("fixed", size=60, unit="chars"),
    "fixed-120-words": ChunkingConfig("fixed", size=120, unit="words"),
    "recursive": ChunkingConfig("recursive"),
    "section": ChunkingConfig("section"),
    "paragraph": ChunkingConfig("paragraph"),
    "structure": ChunkingConfig("structure"),
    "parent_child": ChunkingConfig("parent_child"),
}


@pytest.fixture(scope="module")
def kestrel():
    result = parse_folder(KESTREL / "docs")
    assert result.documents and not result.failures
    rows = [json.loads(line) for line in (KESTREL / "labels.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return result.documents, rows


def counts(kestrel, name):
    docs, rows = kestrel
    return whole_evidence([c for d in docs for c in chunk_document(d, CONFIGS[name])], rows)


def test_sixty_character_windows_lose_answers(kestrel):
    whole, total = counts(kestrel, "fixed-60-chars")
    assert total >= 20
    assert whole <= total - 5


@pytest.mark.parametrize("name", ["structure", "parent_child"])
def test_structure_aware_chunkers_keep_every_answer(kestrel, name):
    whole, total = counts(kestrel, name)
    assert total >= 20 and whole == total
