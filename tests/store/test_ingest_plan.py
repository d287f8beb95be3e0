"""The incremental-ingest plan, run on both backends: what counts as added, updated, unchanged or removed."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Document, Metadata
from evidencedesk.errors import IngestError
from evidencedesk.store.contract import StoreProtocol
from evidencedesk.store.ingest_plan import document_fingerprint

CONFIG = ChunkingConfig(name="paragraph", size=200)


def doc(doc_id: str, text: str, **meta: str) -> Document:
    return Document(
        id=doc_id,
        title=doc_id.title(),
        path=f"{doc_id}.txt",
        format="text",
        text=text,
        content_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        metadata=Metadata(**meta),
    )


def test_a_metadata_change_alone_updates_the_document_and_its_chunks(each_store: StoreProtocol) -> None:
    first = [doc("a", "Alpha one.\n\nAlpha two."), doc("b", "Beta.")]
    assert sorted(each_store.sync(first, CONFIG).added) == ["a", "b"]
    moved = replace(first[0], metadata=Metadata(status="superseded"))
    assert moved.content_hash == first[0].content_hash
    report = each_store.sync([moved, first[1]], CONFIG)
    assert report.updated == ["a"] and report.unchanged == ["b"] and report.added == report.removed == []
    assert {c.metadata.status for c in each_store.chunks("a")} == {"superseded"}
    stored = each_store.document("a")
    assert stored is not None and document_fingerprint(stored) == document_fingerprint(moved)


def test_unchanged_moved_and_removed(each_store: StoreProtocol) -> None:
    a, b, c = doc("a", "Alpha."), doc("b", "Beta."), doc("c", "Gamma.")
    each_store.sync([a, b, c], CONFIG)
    report = each_store.sync([a, replace(b, path="moved/b.txt")], CONFIG)
    assert sorted(report.unchanged) == ["a", "b"] and report.removed == ["c"]
    assert each_store.document("c") is None and each_store.chunks("c") == []
    moved = each_store.document("b")
    assert moved is not None and moved.path == "moved/b.txt"
    assert {ch.source for ch in each_store.chunks("b")} == {"moved/b.txt"}
    assert report.n_documents == 2 and report.n_chunks == each_store.chunk_count()


def test_a_new_chunking_updates_every_document(each_store: StoreProtocol) -> None:
    docs = [doc("a", "Alpha."), doc("b", "Beta.")]
    each_store.sync(docs, CONFIG)
    report = each_store.sync(docs, ChunkingConfig(name="fixed", size=50))
    assert sorted(report.updated) == ["a", "b"] and report.unchanged == []


def test_a_failed_file_keeps_its_stored_version_and_the_rest_goes_on(each_store: StoreProtocol) -> None:
    a, b = doc("a", "Alpha."), doc("b", "Beta.")
    each_store.sync([a, b], CONFIG)
    failure = IngestError("b.txt", "cannot parse")
    report = each_store.sync([replace(a, text="Alpha again.", content_hash="x")], CONFIG, failures=[failure])
    assert report.updated == ["a"] and report.removed == []
    assert report.failed == [{"path": "b.txt", "reason": "cannot parse", "kept": "b"}]
    assert each_store.document("b") is not None


def test_a_document_the_store_cannot_hold_fails_alone(each_store: StoreProtocol) -> None:
    bad = doc("bad", "Broken \ud800 text.")
    report = each_store.sync([doc("a", "Alpha."), bad, doc("c", "Gamma.")], CONFIG)
    assert sorted(report.added) == ["a", "c"]
    assert [f["path"] for f in report.failed] == ["bad.txt"] and "bad" in report.failed[0]["reason"]
    assert each_store.document("bad") is None and each_store.chunks("bad") == []
    assert report.n_documents == 2


def test_a_document_id_twice_in_one_run_is_refused(each_store: StoreProtocol) -> None:
    report = each_store.sync([doc("a", "Alpha."), replace(doc("a", "Other."), path="other.txt")], CONFIG)
    assert report.added == ["a"] and [f["path"] for f in report.failed] == ["other.txt"]
    assert "a.txt" in report.failed[0]["reason"]
