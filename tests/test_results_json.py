"""The typed results give the public JSON: an ingest report and search hits on examples/kestrel read back
from their JSON equal to what was written, and give the same JSON again, key order included."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from evidencedesk import Desk, Settings
from evidencedesk.documents import Chunk, Document, Metadata
from evidencedesk.results.ingest import FileFailure, IngestReport, SnapshotUpdate, UnknownSupersedes
from evidencedesk.results.records import DocumentListing
from evidencedesk.results.search import SearchHit
from evidencedesk.retrieval.candidates import Candidate, Part
from tests.support.paths import ROOT

KESTREL = ROOT / "examples" / "kestrel" / "docs"


def _text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def _round_trip(report: IngestReport) -> None:
    text = _text(report.to_dict())
    again = IngestReport.from_dict(json.loads(text))
    assert again == report and _text(again.to_dict()) == text


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    with Desk(tmp_path_factory.mktemp("results") / "store", Settings()) as opened:
        yield opened


def test_ingest_reports_round_trip(desk: Desk) -> None:
    first = desk.ingest(KESTREL)
    assert first.added and first.progress.files is not None and first.progress.index is None
    assert list(first.to_dict()) == [
        "added", "updated", "unchanged", "removed", "failed", "skipped", "build_id", "chunking", "n_documents",
        "n_chunks", "progress",
    ]  # fmt: skip
    _round_trip(first)
    desk.write_index(dense=False)
    again = desk.ingest(KESTREL)  # the snapshot is brought up to date: progress.index says how
    assert isinstance(again.progress.index, SnapshotUpdate) and set(again.unchanged) == set(first.added)
    assert list(again.progress.to_dict()) == ["files", "index"]
    _round_trip(again)


def test_a_report_with_failures_and_unknown_supersedes_round_trips() -> None:
    report = IngestReport.from_dict(
        {
            "added": ["a"], "updated": [], "unchanged": [], "removed": [],
            "failed": [{"path": "bad.pdf", "reason": "not a PDF", "kept": "bad"}], "skipped": ["x.png"],
            "build_id": 3, "chunking": {"name": "fixed", "size": 60, "overlap": 0, "unit": "chars",
                                        "separators": ["\n\n", "\n", ". ", " "], "hash": "0123456789abcdef"},
            "n_documents": 2, "n_chunks": 5,
            "progress": {"files": {"count": 3, "total": 3, "seconds": 0.5, "per_second": 6.0},
                         "index": {"error": "snapshot not updated: gone"}},
            "unknown_supersedes": [{"path": "a.md", "doc_id": "a", "supersedes": "nothing"}],
        }
    )  # fmt: skip
    assert report.failed == (FileFailure("bad.pdf", "not a PDF", "bad"),)
    assert report.unknown_supersedes == (UnknownSupersedes("a.md", "a", "nothing"),)
    assert report.chunking is not None and report.chunking.name == "fixed"
    _round_trip(report)
    assert "unknown_supersedes" not in IngestReport().to_dict() and IngestReport().to_dict()["chunking"] == {}


def test_search_hits_round_trip_and_give_the_json_of_a_candidate(desk: Desk) -> None:
    if not desk.store.chunk_count():
        desk.ingest(KESTREL)
    hits = desk.search_rows("stem bolt torque size M", k=5, method="bm25")
    found = desk.search("stem bolt torque size M", k=5, method="bm25")
    assert [h.chunk_id for h in hits] == [c.chunk.id for c in found] and hits[0].shared_words
    for hit, candidate in zip(hits, found, strict=True):
        text = _text(hit.to_dict())
        assert text == _text({**candidate.to_dict(), "shared_words": list(hit.shared_words)})
        again = SearchHit.from_dict(json.loads(text))
        assert again == hit and _text(again.to_dict()) == text


def test_a_collapsed_hit_keeps_the_key_before_shared_words() -> None:
    top, folded = Chunk("d:c0", "d", "first"), Chunk("d:c1", "d", "second")
    parts = (Part("bm25", 1, 2.0), Part("dense", 3, 0.5))
    candidate = Candidate(top, 0.1, 1, "hybrid", parts, folded=(Candidate(folded, 0.05, 2, "hybrid"),))
    hit = SearchHit.of(candidate, ["first"])
    assert list(hit.to_dict())[-2:] == ["collapsed", "shared_words"]
    assert _text(hit.to_dict()) == _text({**candidate.to_dict(), "shared_words": ["first"]})
    assert SearchHit.from_dict(json.loads(_text(hit.to_dict()))) == hit


def test_document_listings_give_both_shapes(desk: Desk) -> None:
    if not desk.store.chunk_count():
        desk.ingest(KESTREL)
    doc = desk.store.document_headers()[0]
    listed = DocumentListing.of(doc, 4)
    assert listed.to_dict() == {"id": doc.id, "title": doc.title, "path": doc.path, "format": doc.format,
                                "metadata": doc.metadata.to_dict(), "n_chunks": 4}  # fmt: skip
    meta = doc.metadata.to_dict()
    assert listed.to_row() == {
        "id": doc.id, "title": doc.title, "path": doc.path, "format": doc.format,
        **{k: meta[k] for k in ("status", "audience", "lang", "tenant", "version", "valid_from", "valid_to")},
        "n_chunks": 4, "content_hash": doc.content_hash,
    }  # fmt: skip


def test_the_service_models_name_fields_the_results_give() -> None:
    """``server.models`` describes these results for the OpenAPI schema: every field it names is one the
    result's ``to_dict()`` gives."""
    from evidencedesk.server.models import DocumentSummary, IngestReportOut
    from evidencedesk.server.models import SearchHit as SearchHitOut

    hit = SearchHit.of(Candidate(Chunk("d:c0", "d", "text"), 1.0, 1, "bm25"), ["text"])
    listed = DocumentListing.of(Document("d", "D", "d.md", "markdown", "text", "hash", Metadata()), 1)
    assert set(IngestReportOut.model_fields) <= set(IngestReport().to_dict())
    assert set(SearchHitOut.model_fields) == set(hit.to_dict())
    assert set(DocumentSummary.model_fields) == set(listed.to_dict())
