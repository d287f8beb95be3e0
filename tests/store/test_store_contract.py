"""The document half of the storage contract (``DocumentStore``) and the capability protocols, on each backend.

Every test runs once on the embedded store and once on PostgreSQL (``each_store``, see
``tests/support/contract.py``). The corpus (``corpus`` in this folder's conftest) holds ``alpha``
(two sections), ``beta`` (three, status draft) and ``notes-gamma`` (plain text, two paragraphs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Document, Metadata
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors, SearchesInside, StoreProtocol

CONFIG = ChunkingConfig()
DOC_IDS = ["alpha", "beta", "notes-gamma"]


def position(chunk_id: str) -> int:
    """The position in its document of the chunk ``<doc_id>:c<n>``."""
    found = re.fullmatch(r".+:c(\d+)", chunk_id)
    assert found is not None, chunk_id
    return int(found.group(1))


def fails_after_first_file(done: int, total: int, path: str) -> None:
    """A progress callback that breaks an ingest once its first file is stored."""
    raise RuntimeError(f"stopped after {path}")


def state(store: StoreProtocol) -> tuple[object, ...]:
    """Everything a reader of the document store sees."""
    return (store.documents(), store.chunks(), store.builds(), store.latest_build_id(), store.tenants())


# -- lifecycle ------------------------------------------------------------------------------------


def test_a_store_used_as_a_context_manager_is_itself_and_closes_at_the_end(
    each_store: StoreProtocol, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []
    monkeypatch.setattr(each_store, "close", lambda: closed.append(True))  # the fixture closes it for real
    with each_store as entered:
        assert entered is each_store and not closed
    assert closed == [True]


def test_an_empty_store_has_no_documents_chunks_builds_or_tenants(each_store: StoreProtocol) -> None:
    assert each_store.documents() == each_store.document_headers() == []
    assert each_store.chunks() == [] and each_store.chunk_ids() == [] and list(each_store.iter_chunks()) == []
    assert each_store.chunk_count() == 0 and each_store.chunk_counts() == {}
    assert each_store.builds() == [] and each_store.latest_build() is None and each_store.latest_build_id() is None
    assert each_store.tenants() == []


# -- ingest and sync ------------------------------------------------------------------------------


def test_an_ingest_stores_every_file_and_reports_it(each_store: StoreProtocol, corpus: Path) -> None:
    report = ingest_folder(each_store, corpus, CONFIG)
    assert sorted(report.added) == DOC_IDS
    assert report.updated == report.unchanged == report.removed == report.skipped == [] and report.failed == []
    assert [d.id for d in each_store.documents()] == DOC_IDS
    assert report.n_documents == 3 and report.n_chunks == each_store.chunk_count() > 3
    beta = each_store.document("beta")
    assert beta is not None and beta.path == "beta.md" and beta.metadata.status == "draft"


def test_an_ingest_calls_progress_after_each_file(each_store: StoreProtocol, corpus: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    ingest_folder(each_store, corpus, CONFIG, progress=lambda done, total, path: calls.append((done, total, path)))
    assert [(done, total) for done, total, _ in calls] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(path for _, _, path in calls) == ["alpha.md", "beta.md", "notes/gamma.txt"]


def test_a_file_over_max_bytes_fails_alone(each_store: StoreProtocol, corpus: Path) -> None:
    (corpus / "big.txt").write_text("Big text. " * 200, encoding="utf-8")
    report = ingest_folder(each_store, corpus, CONFIG, max_bytes=1000)
    assert [f["path"] for f in report.failed] == ["big.txt"]
    assert [d.id for d in each_store.documents()] == DOC_IDS


def test_a_failing_ingest_leaves_the_previous_build_readable(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    before = state(each_store)
    (corpus / "alpha.md").write_text("---\nid: alpha\n---\n\n# Alpha\n\nRewritten.\n", encoding="utf-8")
    (corpus / "delta.md").write_text("---\nid: delta\n---\n\n# Delta\n\nNew.\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="stopped after"):
        ingest_folder(each_store, corpus, CONFIG, progress=fails_after_first_file)
    assert state(each_store) == before
    report = ingest_folder(each_store, corpus, CONFIG)  # and the store takes the next ingest
    assert report.added == ["delta"] and report.updated == ["alpha"]


def test_a_failing_sync_leaves_the_previous_build_readable(each_store: StoreProtocol) -> None:
    def doc(doc_id: str, text: str) -> Document:
        return Document(doc_id, doc_id.title(), f"{doc_id}.txt", "text", text, f"h-{text}", Metadata())

    each_store.sync([doc("a", "First text."), doc("b", "Second text.")], CONFIG)
    before = state(each_store)

    def broken() -> Iterator[Document]:
        yield doc("a", "First text, changed.")
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        each_store.sync(broken(), CONFIG)
    assert state(each_store) == before


def test_sync_stores_parsed_documents_and_drops_those_not_given(each_store: StoreProtocol) -> None:
    docs = [Document(i, i.title(), f"{i}.txt", "text", f"Text of {i}.", f"h-{i}", Metadata()) for i in ("a", "b", "c")]
    assert each_store.sync(docs, CONFIG).added == ["a", "b", "c"]
    report = each_store.sync(docs[:2], CONFIG)
    assert report.unchanged == ["a", "b"] and report.removed == ["c"]
    assert [d.id for d in each_store.documents()] == ["a", "b"]
    kept = each_store.sync(docs[:1], CONFIG, remove_missing=False)
    assert kept.removed == [] and [d.id for d in each_store.documents()] == ["a", "b"]


def test_a_reingest_updates_changed_files_and_removes_missing_ones(
    each_store: StoreProtocol, corpus: Path, policy: Callable[..., str]
) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    (corpus / "alpha.md").write_text(policy("alpha", {"Only": "Alpha was rewritten."}), encoding="utf-8")
    (corpus / "notes" / "gamma.txt").unlink()
    report = ingest_folder(each_store, corpus, CONFIG)
    assert (report.updated, report.unchanged, report.removed) == (["alpha"], ["beta"], ["notes-gamma"])
    assert each_store.document("notes-gamma") is None and each_store.chunks("notes-gamma") == []
    assert "Alpha was rewritten." in " ".join(c.text for c in each_store.chunks("alpha"))
    assert "Alpha one says hello." not in " ".join(c.text for c in each_store.chunks())


def test_a_reingest_without_remove_missing_keeps_documents_of_missing_files(
    each_store: StoreProtocol, corpus: Path
) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    (corpus / "notes" / "gamma.txt").unlink()
    report = ingest_folder(each_store, corpus, CONFIG, remove_missing=False)
    assert report.removed == [] and report.unchanged == ["alpha", "beta"]
    assert [d.id for d in each_store.documents()] == DOC_IDS


# -- documents --------------------------------------------------------------------------------------


def test_documents_are_listed_by_id_and_looked_up_by_id(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    docs = each_store.documents()
    assert [d.id for d in docs] == DOC_IDS and all(d.text for d in docs)
    assert [each_store.document(d.id) for d in docs] == docs
    assert each_store.document("missing") is None


def test_document_headers_are_the_documents_without_text_or_sections(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    docs = each_store.documents()
    headers = each_store.document_headers()
    assert [d.id for d in headers] == [d.id for d in docs]
    assert all(h.text == "" and h.sections == () for h in headers)
    assert [(h.title, h.path, h.format, h.metadata, h.content_hash, h.first_line) for h in headers] == [
        (d.title, d.path, d.format, d.metadata, d.content_hash, d.first_line) for d in docs
    ]


def test_tenants_are_the_distinct_tenants_of_the_documents_sorted(
    each_store: StoreProtocol, corpus: Path, policy: Callable[..., str]
) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    assert each_store.tenants() == ["default"]
    for name, tenant in (("one.md", "zeta"), ("two.md", "acme"), ("three.md", "acme")):
        (corpus / name).write_text(policy(name[:-3], {"S": "Text."}, tenant=tenant), encoding="utf-8")
    ingest_folder(each_store, corpus, CONFIG)
    assert each_store.tenants() == ["acme", "default", "zeta"]
    assert each_store.document("acme:two") is not None and each_store.document("two") is None


# -- chunks ---------------------------------------------------------------------------------------


def test_chunks_are_ordered_by_document_id_then_position(
    each_store: StoreProtocol, corpus: Path, policy: Callable[..., str]
) -> None:
    # twelve sections: chunk c10 and c11 come after c9 by position, before c2 by id
    (corpus / "delta.md").write_text(policy("delta", {f"Part {i}": f"Delta part {i}." for i in range(12)}))
    ingest_folder(each_store, corpus, CONFIG)
    chunks = each_store.chunks()
    keys = [(c.doc_id, position(c.id)) for c in chunks]
    assert keys == sorted(keys) and len(each_store.chunks("delta")) >= 12
    assert [d for d, _ in keys] == sorted(d for d, _ in keys)
    for doc_id in [*DOC_IDS, "delta"]:
        assert each_store.chunks(doc_id) == [c for c in chunks if c.doc_id == doc_id]
    assert each_store.chunks("missing") == []


def test_chunk_ids_and_batches_follow_the_chunks_order(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    ids = [c.id for c in each_store.chunks()]
    assert each_store.chunk_ids() == ids
    batches = list(each_store.iter_chunks(batch=2))
    assert [c.id for batch in batches for c in batch] == ids
    assert all(len(batch) == 2 for batch in batches[:-1]) and 1 <= len(batches[-1]) <= 2
    with pytest.raises(ValueError, match="batch"):
        next(each_store.iter_chunks(batch=0))


def test_chunks_are_looked_up_by_id_in_the_order_asked(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    chunks = each_store.chunks()
    first, last = chunks[0], chunks[-1]
    assert each_store.chunk(first.id) == first and each_store.chunk("missing") is None
    assert each_store.chunks_by_id([last.id, "missing", first.id]) == [last, first]
    assert each_store.chunks_by_id([]) == []
    assert first.title and first.source  # a chunk carries its document's title and path
    assert each_store.document(first.doc_id) is not None


def test_chunk_counts_add_up_per_document(each_store: StoreProtocol, corpus: Path) -> None:
    ingest_folder(each_store, corpus, CONFIG)
    counts = each_store.chunk_counts()
    assert counts == {doc_id: len(each_store.chunks(doc_id)) for doc_id in DOC_IDS}
    assert each_store.chunk_count() == sum(counts.values()) == len(each_store.chunk_ids())


# -- builds ---------------------------------------------------------------------------------------


def test_each_ingest_records_a_build_and_the_latest_is_the_last(each_store: StoreProtocol, corpus: Path) -> None:
    first = ingest_folder(each_store, corpus, CONFIG)
    (corpus / "notes" / "gamma.txt").unlink()
    second = ingest_folder(each_store, corpus, ChunkingConfig(name="fixed", size=50))
    builds = each_store.builds()
    assert [b.id for b in builds] == [first.build_id, second.build_id] and builds[0].id < builds[1].id
    latest = each_store.latest_build()
    assert latest == builds[-1] and each_store.latest_build_id() == latest.id == second.build_id
    assert (latest.n_documents, latest.n_chunks) == (2, each_store.chunk_count())
    assert latest.chunking["name"] == "fixed" and builds[0].chunking_hash != latest.chunking_hash
    assert latest.report["removed"] == ["notes-gamma"]


# -- capabilities ---------------------------------------------------------------------------------

CAPABILITIES = {"Store": {"HoldsSnapshots"}, "PgStore": {"SearchesInside", "HoldsVectors"}}
"""What each backend can do beyond the contract; a backend missing here fails the test below."""


def test_each_backend_offers_exactly_its_capabilities(each_store: StoreProtocol, tmp_path: Path) -> None:
    held = {p.__name__ for p in (SearchesInside, HoldsVectors, HoldsSnapshots) if isinstance(each_store, p)}
    assert held == CAPABILITIES[type(each_store).__name__]
    if isinstance(each_store, HoldsSnapshots):
        assert each_store.snapshot_dir == tmp_path / "store" / "snapshot"
