"""Per-tenant BM25 statistics read from the snapshot equal one in-memory index per tenant.

With ``retrieval.tenant_statistics`` on, a search used to build one index per tenant from every stored
chunk. The snapshot now counts each tenant's rows, lengths and document frequencies from its segments;
ids and scores must be exactly what the in-memory indexes give, before and after an update that adds
a segment and tombstones rows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evidencedesk.config import parse_settings
from evidencedesk.desk import Desk

SETTINGS = {"retrieval": {"legs": [{"method": "bm25"}], "tenant_statistics": True}}
QUERIES = [
    "refund receipt within thirty days",
    "warranty claim for frames",
    "Rückerstattung der Quittung",  # the German tenant's language: its own stemmer and stopwords
    "policy policy receipt",
    "zzz-unknown-term",
]
SCOPES = [
    {"tenants": ["acme"], "statuses": None, "audiences": None},
    {"tenants": ["globex", "initech"], "statuses": None, "audiences": None},
    {"statuses": None, "audiences": None},
    {"tenants": ["acme", "globex"]},  # the default status and audience filters as well
    {"tenants": ["nobody"], "statuses": None, "audiences": None},
]
TEXT = {
    "acme": "Receipt needed for a refund within thirty days. Frames carry a warranty of two years.",
    "globex": "Refund policy policy policy: a receipt receipt and the warranty claim form for frames.",
    "initech": "Die Rückerstattung braucht die Quittung innerhalb von dreißig Tagen. Garantie für Rahmen.",
}


def _write(folder: Path, name: str, tenant: str, body: str, status: str = "current", audience: str = "public") -> None:
    lang = "de" if tenant == "initech" else "en"
    meta = f"id: {name}\ntenant: {tenant}\nlang: {lang}\nstatus: {status}\naudience: {audience}\n"
    (folder / f"{name}.md").write_text(f"---\n{meta}---\n\n# {name}\n\n{body}\n", encoding="utf-8")


def _docs(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for tenant, body in TEXT.items():
        for n in range(4):
            extra = " Receipt policy." * n if tenant != "initech" else " Quittung." * n
            _write(folder, f"{tenant}-{n}", tenant, body + extra, audience="staff" if n == 3 else "public")
    _write(folder, "acme-old", "acme", TEXT["acme"] + " Superseded frames rule.", status="superseded")


def _results(store: Path) -> tuple[str, list[list[tuple[str, float]]]]:
    with Desk(store, parse_settings(SETTINGS)) as desk:
        label = desk.searcher_label("bm25")
        out = [
            [(c.chunk.id, c.score) for c in desk.search(q, k=6, method="bm25", scope=scope)]
            for q in QUERIES
            for scope in SCOPES
        ]
    return label, out


def _in_memory(store: Path, tmp: Path) -> list[list[tuple[str, float]]]:
    """The same store searched without its snapshot: one in-memory index per tenant."""
    copy = tmp / "no-snapshot"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns("snapshot"))
    label, out = _results(copy)
    assert label.startswith("memory"), label
    return out


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    _docs(tmp_path / "docs")
    with Desk(tmp_path / "store", parse_settings(SETTINGS)) as desk:
        desk.ingest(tmp_path / "docs")
        desk.write_index(dense=False)
    return tmp_path / "store"


def test_snapshot_scores_each_tenant_with_its_own_statistics(store: Path, tmp_path: Path) -> None:
    label, got = _results(store)
    assert label == "snapshot-bm25"
    assert got == _in_memory(store, tmp_path)
    assert any(got), "the queries must find something"
    # a control: with shared statistics the scores of the one-tenant scope differ
    shared = parse_settings({**SETTINGS, "retrieval": {**SETTINGS["retrieval"], "tenant_statistics": False}})
    with Desk(store, shared) as desk:
        one = [(c.chunk.id, c.score) for c in desk.search(QUERIES[0], k=6, method="bm25", scope=SCOPES[0])]
    assert one != got[0] and {i for i, _ in one} == {i for i, _ in got[0]}


def test_after_an_update_and_a_removal_the_segments_still_agree(store: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "globex-1.md").unlink()
    _write(docs, "acme-2", "acme", "Refund refund receipt: the new rule for frames and warranty claims.")
    _write(docs, "initech-9", "initech", "Neue Quittung für jede Rückerstattung.")
    with Desk(store, parse_settings(SETTINGS)) as desk:
        desk.ingest(docs)
        assert "2 segments" in desk.snapshot_status() or "3 segments" in desk.snapshot_status()
    label, got = _results(store)
    assert label == "snapshot-bm25"
    assert got == _in_memory(store, tmp_path)
