"""Re-ingest semantics: unchanged files are skipped, changed files re-chunked, removed files dropped."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from evidencedesk.chunking import chunk_document
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest import parse_file
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store

CONFIG = ChunkingConfig(name="section", size=200)


def by_doc(store: Store) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in store.chunks():
        out.setdefault(c.doc_id, []).append((c.id, c.text))
    return out


def test_first_ingest_stores_every_document_with_its_chunks(store: Store, corpus: Path) -> None:
    report = ingest_folder(store, corpus, CONFIG)
    assert sorted(report.added) == ["alpha", "beta", "notes-gamma"]
    assert report.updated == report.unchanged == report.removed == report.failed == []
    assert report.n_documents == 3 and report.n_chunks == len(store.chunks())
    for doc in store.documents():
        expected = chunk_document(parse_file(corpus / doc.path, doc.path), CONFIG)
        assert store.chunks(doc.id) == [replace(c, title=doc.title, source=doc.path) for c in expected]
    beta = store.document("beta")
    assert beta is not None and beta.metadata.status == "draft" and beta.path == "beta.md"
    assert all(c.metadata.status == "draft" and c.source == "beta.md" for c in store.chunks("beta"))


def test_editing_one_file_changes_only_its_chunks(store: Store, corpus: Path, policy: Callable[..., str]) -> None:
    ingest_folder(store, corpus, CONFIG)
    before = by_doc(store)
    assert len(before["beta"]) >= 4
    (corpus / "beta.md").write_text(policy("beta", {"Only": "Beta was cut down to one section."}), encoding="utf-8")
    report = ingest_folder(store, corpus, CONFIG)
    assert report.updated == ["beta"]
    assert sorted(report.unchanged) == ["alpha", "notes-gamma"]
    after = by_doc(store)
    assert after["alpha"] == before["alpha"] and after["notes-gamma"] == before["notes-gamma"]
    fresh = chunk_document(parse_file(corpus / "beta.md", "beta.md"), CONFIG)
    assert after["beta"] == [(c.id, c.text) for c in fresh]
    assert len(after["beta"]) < len(before["beta"])
    assert any("Beta second section." in t for _, t in before["beta"])
    assert not any(old in c.text for c in store.chunks() for old in ("first section", "second section", "third"))
    assert all(store.chunk(cid) is None for cid, _ in before["beta"][len(after["beta"]) :])
    assert store.document("beta").metadata.status == "current"  # the edit dropped status: draft
    assert all(c.metadata.status == "current" for c in store.chunks("beta"))


def test_unchanged_ingest_keeps_chunk_ids_and_records_a_build(store: Store, corpus: Path) -> None:
    first = ingest_folder(store, corpus, CONFIG)
    before = by_doc(store)
    second = ingest_folder(store, corpus, CONFIG)
    assert sorted(second.unchanged) == ["alpha", "beta", "notes-gamma"] and second.added == second.updated == []
    assert by_doc(store) == before
    builds = store.builds()
    assert [b.id for b in builds] == [first.build_id, second.build_id]
    assert builds[0].chunking_hash == builds[1].chunking_hash == CONFIG.hash()
    assert store.latest_build() == builds[1]
    assert builds[1].report == second.to_dict()


def test_deleting_a_file_removes_its_document_and_chunks(store: Store, corpus: Path) -> None:
    ingest_folder(store, corpus, CONFIG)
    (corpus / "alpha.md").unlink()
    report = ingest_folder(store, corpus, CONFIG)
    assert report.removed == ["alpha"]
    assert store.document("alpha") is None and store.chunks("alpha") == []
    assert {c.doc_id for c in store.chunks()} == {"beta", "notes-gamma"}
    assert report.n_documents == 2


def test_keep_missing_leaves_documents_of_deleted_files(store: Store, corpus: Path) -> None:
    ingest_folder(store, corpus, CONFIG)
    (corpus / "alpha.md").unlink()
    report = ingest_folder(store, corpus, CONFIG, remove_missing=False)
    assert report.removed == [] and store.document("alpha") is not None


def test_changing_the_chunker_size_rechunks_everything_in_a_new_build(store: Store, corpus: Path) -> None:
    ingest_folder(store, corpus, ChunkingConfig(name="fixed", size=40, unit="chars"))
    small = by_doc(store)
    report = ingest_folder(store, corpus, ChunkingConfig(name="fixed", size=400, unit="chars"))
    assert sorted(report.updated) == ["alpha", "beta", "notes-gamma"] and report.unchanged == []
    first, second = store.builds()
    assert first.chunking_hash != second.chunking_hash
    assert first.chunking["size"] == 40 and second.chunking["size"] == 400
    assert second.n_chunks < first.n_chunks
    assert sum(map(len, by_doc(store).values())) == second.n_chunks < sum(map(len, small.values()))


def test_renaming_a_file_with_a_declared_id_updates_the_path_only(store: Store, corpus: Path) -> None:
    ingest_folder(store, corpus, CONFIG)
    before = by_doc(store)["alpha"]
    (corpus / "alpha.md").rename(corpus / "renamed.md")
    report = ingest_folder(store, corpus, CONFIG)
    assert "alpha" in report.unchanged and report.removed == []
    assert store.document("alpha").path == "renamed.md"
    assert [(c.id, c.text) for c in store.chunks("alpha")] == before
    assert {c.source for c in store.chunks("alpha")} == {"renamed.md"}


def test_store_reopens_with_the_same_content(tmp_path: Path, corpus: Path) -> None:
    with Store(tmp_path / "s") as s:
        ingest_folder(s, corpus, CONFIG)
        docs, chunks = s.documents(), s.chunks()
    with Store(tmp_path / "s") as s:
        assert s.documents() == docs and s.chunks() == chunks
