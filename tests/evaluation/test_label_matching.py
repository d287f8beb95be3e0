"""Evidence phrases survive formatting (table pipes, Markdown marks, line breaks), never match part of a
number, and a label may anchor its evidence to one document (``doc``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidencedesk.chunking import whole_evidence
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.evidence import gather_evidence
from evidencedesk.evaluation.labels import Gold, Label, read_labels
from evidencedesk.text.match import holds_phrase, match_form, names_document


def chunk(doc: str, n: int, text: str, source: str = "") -> Chunk:
    return Chunk(f"{doc}:c{n}", doc, text, source=source or f"pdfs/{doc.upper()}.pdf")


TRAVEL = chunk("travel-policy", 3, "| Meal | Limit |\n|---|---|\n| Dinner | 50 EUR |\n| Lunch | 25 EUR |")
BESTBUY = chunk(
    "bestbuy_2023_10k", 40, "| Segment | Stores |\n|---|---|\n| Domestic | 969 |", "data/pdfs/BESTBUY_2023_10K.pdf"
)
OTHER = chunk("amazon_2019_10k", 12, "Fulfillment centers: 969 in North America at year end.")
NOISE = chunk("costco_2021_10k", 5, "Warehouses opened: 1,969 since founding; 9690 members joined.")


def test_a_phrase_copied_from_a_table_matches_across_pipes_marks_and_line_breaks() -> None:
    assert Gold("Dinner 50 EUR", 2).held_by(TRAVEL)
    assert Gold("Dinner | 50 EUR", 2).held_by(TRAVEL)
    assert Gold("Meal Limit Dinner 50 EUR", 2).held_by(TRAVEL)  # header, separator line and row in one phrase
    marked = chunk("guide", 1, "## Refunds\n\n- **Refunds** go back to the\ncard you paid with.")
    assert Gold("Refunds go back to the card you paid with", 2).held_by(marked)
    assert Gold("## Refunds", 2).held_by(marked)
    assert not Gold("Dinner 25 EUR", 2).held_by(TRAVEL)  # the words still have to be in order
    assert match_form("max_bytes is _very_ `big`") == "max_bytes is very big"


def test_a_phrase_never_matches_part_of_a_number() -> None:
    assert not Gold("969", 2).held_by(NOISE)
    assert Gold("969", 2).held_by(OTHER) and Gold("1,969", 2).held_by(NOISE)
    assert holds_phrase("a 2,018 b", "2,018") and not holds_phrase("a 2,018.5 b", "2,018")
    assert holds_phrase("EBITDA 2,018.", "2,018")  # a full stop after a number ends it


def test_a_label_naming_its_document_counts_only_that_documents_chunks() -> None:
    loose = Label("q1", "How many domestic stores?", (), True, (Gold("969", 2),))
    assert loose.qrels([BESTBUY, OTHER, NOISE]) == {BESTBUY.id: 2, OTHER.id: 2}
    for doc in ("bestbuy_2023_10k", "BESTBUY_2023_10K.pdf", "pdfs/BESTBUY_2023_10K.pdf"):
        anchored = Label("q1", "How many domestic stores?", (), True, (Gold("969", 2),), doc=doc)
        assert anchored.qrels([BESTBUY, OTHER, NOISE]) == {BESTBUY.id: 2}, doc
        assert anchored.gold[0].doc == doc
        assert gather_evidence([[BESTBUY, OTHER, NOISE]], [anchored]).chunks == [BESTBUY]
    # a phrase's own doc wins over the label's
    mixed = Label("q2", "Stores?", (), True, (Gold("969", 2, doc="amazon_2019_10k"),), doc="bestbuy_2023_10k")
    assert mixed.qrels([BESTBUY, OTHER]) == {OTHER.id: 2}
    assert names_document("acme-returns", "acme:acme-returns", "") and not names_document("ESTBUY_2023_10K.pdf",
        "bestbuy_2023_10k", "data/pdfs/BESTBUY_2023_10K.pdf")  # fmt: skip


def test_doc_is_read_and_checked_in_labels_files(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "question": "Stores?", "answerable": True, "doc": "BESTBUY_2023_10K.pdf",
         "gold": [{"evidence": "969", "grade": 2}]},
        {"id": "b", "question": "Stores?", "answerable": True, "gold": [{"evidence": "969", "grade": 2, "doc": 7}]},
        {"id": "c", "question": "Stores?", "answerable": True, "doc": " ", "gold": [{"evidence": "969", "grade": 2}]},
        {"id": "d", "question": "Stores?", "answerable": True, "gold": [{"evidence": "| ** |", "grade": 2}]},
    ]  # fmt: skip
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    read = read_labels(path)
    assert [x.id for x in read.labels] == ["a"] and read.warnings == []
    assert read.labels[0].doc == "BESTBUY_2023_10K.pdf" and read.labels[0].to_dict()["doc"] == "BESTBUY_2023_10K.pdf"
    assert [(i.line, i.field) for i in read.issues] == [(2, "gold[0].doc"), (3, "doc"), (4, "gold[0].evidence")]
    assert "document id or source path" in read.issues[0].message
    assert "formatting marks" in read.issues[2].message
    with pytest.raises(ValueError, match="doc"):
        Label("x", "q?", (), True, (Gold("969", 2),), doc=7)  # type: ignore[arg-type]


def test_chunking_evidence_reads_labels_the_same_way() -> None:
    rows = [
        {"id": "a", "answerable": True, "gold": [{"evidence": "Dinner 50 EUR", "grade": 2, "with": ["Meal Limit"]}]},
        {"id": "b", "answerable": True, "doc": "amazon_2019_10k", "gold": [{"evidence": "969", "grade": 2}]},
    ]
    assert whole_evidence([TRAVEL, BESTBUY], rows) == (1, 2)  # 969 is in Best Buy's filing, not Amazon's
    assert whole_evidence([TRAVEL, OTHER], rows) == (2, 2)
