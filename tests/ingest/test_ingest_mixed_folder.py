"""A folder of PDFs and Word files whose metadata lives beside them: superseded files and tenants hold on every path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docx
import pytest
from fastapi.testclient import TestClient

from evidencedesk import Desk
from evidencedesk.config import Settings
from evidencedesk.ingest import parse_docx
from evidencedesk.results.ask import AskResult
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState

ACME_KEY = "acme-key-0123456789abc"
GLOBEX_KEY = "globex-key-0123456789ab"
QUESTION = "How many euros per day may employees claim for meals while travelling?"
ALLOWANCES = [
    ("Domestic", "55 euros", "150 euros"),
    ("Europe", "70 euros", "180 euros"),
    ("North America", "75 euros", "210 euros"),
    ("Asia", "80 euros", "200 euros"),
    ("Africa", "60 euros", "140 euros"),
    ("South America", "65 euros", "160 euros"),
]


def policy_docx(path: Path) -> None:
    """A Word travel policy: headings, a list and an allowance table with a header row."""
    document = docx.Document()
    document.core_properties.title = "Acme travel policy 2024"
    document.add_heading("Travel policy 2024", level=1)
    document.add_paragraph("Employees may claim up to 55 euros a day for meals while travelling in their country.")
    document.add_heading("Before you travel", level=2)
    document.add_paragraph("Book through the travel desk.", style="List Bullet")
    document.add_paragraph("Get your manager's approval in writing.", style="List Bullet")
    document.add_heading("Allowances by region", level=2)
    table = document.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Region", "Daily meal allowance", "Hotel cap per night"), strict=True):
        cell.text = text
    for row in ALLOWANCES:
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text
    document.save(str(path))


@pytest.fixture
def folder(tmp_path: Path, text_pdf: Callable[..., bytes]) -> Path:
    root = tmp_path / "docs"
    (root / "acme").mkdir(parents=True)
    (root / "globex").mkdir()
    (root / "acme" / "_meta.yaml").write_text("tenant: acme\n", encoding="utf-8")
    (root / "globex" / "_meta.yaml").write_text("tenant: globex\n", encoding="utf-8")
    (root / "acme" / "travel-2023.pdf").write_bytes(
        text_pdf(["Travel policy 2023.\nEmployees may claim up to 40 euros per day for meals while travelling."])
    )
    (root / "acme" / "travel-2023.pdf.meta.yaml").write_text("status: superseded\n", encoding="utf-8")
    policy_docx(root / "acme" / "travel-2024.docx")
    (root / "globex" / "travel.pdf").write_bytes(
        text_pdf(["Globex travel policy.\nEmployees may claim up to 90 euros per day for meals while travelling."])
    )
    return root


def _desk(folder: Path, store: Path, size: int = 120) -> Desk:
    desk = Desk(store, Settings())
    report = desk.ingest(folder, size=size)
    assert not report.failed and len(report.added) == 3
    return desk


def _context_docs(result: AskResult) -> set[str]:
    """The documents of every chunk retrieved, shown to the generator or cited."""
    ids = {c.doc_id for c in result.retrieved} | {c.doc_id for c in result.reranked}
    return ids | {c.rpartition(":")[0] for c in [*result.context, *result.citations]}


def test_superseded_pdf_never_reaches_a_context_and_tenants_stay_apart(folder: Path, tmp_path: Path) -> None:
    with _desk(folder, tmp_path / "store") as desk:
        stored = {d.id: d.metadata for d in desk.store.documents()}
        old = stored["acme:acme-travel-2023"]
        assert old.status == "superseded" and old.tenant == "acme"
        assert stored["acme:acme-travel-2024"].tenant == "acme" and stored["globex:globex-travel"].tenant == "globex"
        for tenant in (None, "acme"):
            scope = {"tenants": [tenant]} if tenant else None
            result = desk.ask(QUESTION, scope=scope, method="bm25", save=False)
            assert result.context and not result.abstained
            docs = _context_docs(result)
            assert "acme:acme-travel-2023" not in docs
            assert "40 euros" not in result.answer
            if tenant:
                assert docs == {"acme:acme-travel-2024"}
        hits = desk.search(QUESTION, k=10, method="bm25", scope={"tenants": ["globex"]})
        assert hits and {h.chunk.doc_id for h in hits} == {"globex:globex-travel"}


def test_a_tenant_key_never_sees_another_tenants_files(folder: Path, tmp_path: Path) -> None:
    with _desk(folder, tmp_path / "store"):
        pass
    service = parse_service_settings(
        {
            "allow_anonymous": False,
            "keys": [
                {"name": "acme", "key": ACME_KEY, "scope": {"tenants": ["acme"]}},
                {"name": "globex", "key": GLOBEX_KEY, "scope": {"tenants": ["globex"]}},
            ],
        }
    )
    client = TestClient(create_app(ServiceState(tmp_path / "store", Settings(), service)))
    for key, own in ((ACME_KEY, {"acme:acme-travel-2024"}), (GLOBEX_KEY, {"globex:globex-travel"})):
        h = {"X-API-Key": key}
        found = client.post("/search", json={"query": QUESTION, "k": 20, "method": "bm25"}, headers=h)
        assert found.status_code == 200, found.text
        assert {hit["doc_id"] for hit in found.json()} == own
        # asking for the other tenant's scope cannot widen the key's own
        other = {"tenants": ["globex" if key == ACME_KEY else "acme"]}
        wider = client.post("/search", json={"query": QUESTION, "method": "bm25", "scope": other}, headers=h)
        assert wider.status_code in (200, 403)
        if wider.status_code == 200:
            assert wider.json() == []
        answer = client.post("/ask", json={"question": QUESTION, "method": "bm25"}, headers=h)
        assert answer.status_code == 200, answer.text
        assert {c.rpartition(":")[0] for c in answer.json()["citations"]} <= own


def test_word_table_chunks_repeat_the_header_and_the_answer_cites_the_right_row(tmp_path: Path) -> None:
    path = tmp_path / "policy.docx"
    policy_docx(path)
    doc = parse_docx(path.read_bytes(), "policy.docx")
    assert doc.format == "docx" and doc.title == "Acme travel policy 2024"
    assert "- Book through the travel desk.\n- Get your manager's approval in writing." in doc.text
    assert [s.heading_path for s in doc.sections][-1] == ("Travel policy 2024", "Allowances by region")
    folder = tmp_path / "docs"
    folder.mkdir()
    path.rename(folder / "policy.docx")
    with Desk(tmp_path / "store", Settings()) as desk:
        desk.ingest(folder, size=16)
        tables = [c for c in desk.store.chunks() if c.kind == "table"]
        assert len(tables) >= 2
        for chunk in tables:
            assert chunk.text.startswith("| Region | Daily meal allowance | Hotel cap per night |\n| --- |")
            assert chunk.location.heading_path == ("Travel policy 2024", "Allowances by region")
        result = desk.ask("What is the hotel cap per night in Asia?", method="bm25", save=False)
        assert not result.abstained, result.abstain_reason
        cited = [desk.store.chunk(c) for c in result.citations]
        assert cited and all(c is not None and "| Asia | 80 euros | 200 euros |" in c.text for c in cited)
        assert "200 euros" in result.answer
