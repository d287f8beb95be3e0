"""The storage contract as tests a backend inherits: ``StoreContract`` and ``RecordStoreContract``.

A backend's test class inherits one or both mixins and gives a ``store`` fixture that yields an
empty store of that backend (closed after the test); pytest then runs every contract test on it::

    class TestMyStore(StoreContract, RecordStoreContract):
        capabilities = frozenset({"SearchesInside"})

        @pytest.fixture
        def store(self, tmp_path: Path) -> Iterator[StoreProtocol]:
            with MyStore(tmp_path / "db") as store:
                yield store

``StoreContract`` checks the document half (``DocumentStore``: ``sync``, documents, chunks, builds,
and a folder ingested through ``ingest_folder`` over ``sync``) and that the store offers exactly the
optional capabilities named in ``capabilities``. ``RecordStoreContract`` checks traces and evaluation
runs (``RecordStore``). The mixins' names do not start with ``Test``, so pytest collects them only
through a backend's class. They need pytest (the ``dev`` extra).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import ClassVar

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Document, Metadata
from evidencedesk.errors import IngestError
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.progress import Meter
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors, RecordStore, SearchesInside, StoreProtocol
from evidencedesk.store.json_data import JsonObject

CONFIG = ChunkingConfig()
DOC_IDS = ["alpha", "beta", "notes-gamma"]
"""The ids of the documents in the ``corpus`` fixture's folder."""
CAPABILITIES = (SearchesInside, HoldsVectors, HoldsSnapshots)


def policy(doc_id: str, sections: dict[str, str], **front: str) -> str:
    """A Markdown document with front matter and one ``##`` section per entry of ``sections``."""
    head = "\n".join(f"{k}: {v}" for k, v in {"id": doc_id, "title": doc_id.title(), **front}.items())
    body = "\n\n".join(f"## {name}\n\n{text}" for name, text in sections.items())
    return f"---\n{head}\n---\n\n# {doc_id.title()}\n\n{body}\n"


def write_corpus(folder: Path) -> Path:
    """Write the contract's corpus into ``folder``: ``alpha`` (two sections), ``beta`` (three, status
    draft) and ``notes-gamma`` (plain text, two paragraphs)."""
    folder.mkdir(parents=True, exist_ok=True)
    alpha = policy("alpha", {"One": "Alpha one says hello.", "Two": "Alpha two says goodbye."})
    (folder / "alpha.md").write_text(alpha, encoding="utf-8")
    beta = {"First": "Beta first section.", "Second": "Beta second section.", "Third": "Beta third section."}
    (folder / "beta.md").write_text(policy("beta", beta, status="draft"), encoding="utf-8")
    (folder / "notes").mkdir(exist_ok=True)
    (folder / "notes" / "gamma.txt").write_text("Gamma is plain text.\n\nWith two paragraphs.\n", encoding="utf-8")
    return folder


def text_document(doc_id: str, text: str) -> Document:
    """A parsed plain-text document ``doc_id`` at ``<doc_id>.txt`` (its hash is made from its text)."""
    return Document(doc_id, doc_id.title(), f"{doc_id}.txt", "text", text, f"h-{text}", Metadata())


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


class StoreContract:
    """The document half of the storage contract (``DocumentStore``) and the capability protocols.

    Inherit it in a test class that gives a ``store`` fixture (an empty store, closed afterwards) and
    sets ``capabilities`` to the names of the optional protocols the store implements.
    """

    capabilities: ClassVar[frozenset[str]] = frozenset()
    """Which of ``SearchesInside``, ``HoldsVectors`` and ``HoldsSnapshots`` the backend offers."""

    @pytest.fixture
    def corpus(self, tmp_path: Path) -> Path:
        """A folder of three documents (see ``write_corpus``), beside the store."""
        return write_corpus(tmp_path / "corpus")

    # -- lifecycle ---------------------------------------------------------------------------------

    def test_a_store_used_as_a_context_manager_is_itself_and_closes_at_the_end(
        self, store: StoreProtocol, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        closed: list[bool] = []
        monkeypatch.setattr(store, "close", lambda: closed.append(True))  # the fixture closes it for real
        with store as entered:
            assert entered is store and not closed
        assert closed == [True]

    def test_an_empty_store_has_no_documents_chunks_builds_or_tenants(self, store: StoreProtocol) -> None:
        assert store.documents() == store.document_headers() == []
        assert store.chunks() == [] and store.chunk_ids() == [] and list(store.iter_chunks()) == []
        assert store.chunk_count() == 0 and store.chunk_counts() == {}
        assert store.builds() == [] and store.latest_build() is None and store.latest_build_id() is None
        assert store.tenants() == []

    # -- sync ---------------------------------------------------------------------------------------

    def test_sync_stores_parsed_documents_and_drops_those_not_given(self, store: StoreProtocol) -> None:
        docs = [text_document(i, f"Text of {i}.") for i in ("a", "b", "c")]
        assert store.sync(docs, CONFIG).added == ["a", "b", "c"]
        report = store.sync(docs[:2], CONFIG)
        assert report.unchanged == ["a", "b"] and report.removed == ["c"]
        assert [d.id for d in store.documents()] == ["a", "b"]
        kept = store.sync(docs[:1], CONFIG, remove_missing=False)
        assert kept.removed == [] and [d.id for d in store.documents()] == ["a", "b"]

    def test_a_failure_in_the_stream_is_reported_in_place_and_keeps_the_stored_version(
        self, store: StoreProtocol
    ) -> None:
        store.sync([text_document("a", "First."), text_document("b", "Second.")], CONFIG)
        stream: list[Document | IngestError] = [
            IngestError("b.txt", "cannot read"),
            text_document("a", "First."),
            IngestError("z.txt", "empty"),
        ]
        report = store.sync(stream, CONFIG, failures=[IngestError("y.txt", "late")], skipped=["x.bin"])
        assert report.failed == [
            {"path": "b.txt", "reason": "cannot read", "kept": "b"},
            {"path": "z.txt", "reason": "empty", "kept": None},
            {"path": "y.txt", "reason": "late", "kept": None},
        ]
        assert report.unchanged == ["a"] and report.removed == [] and report.skipped == ["x.bin"]
        assert [d.id for d in store.documents()] == ["a", "b"]
        assert report.progress == {} and store.latest_build() is not None

    def test_a_meter_follows_each_item_and_its_summary_is_recorded(self, store: StoreProtocol) -> None:
        calls: list[tuple[int, int, str]] = []
        meter = Meter(callback=lambda done, total, path: calls.append((done, total, path)))
        docs: list[Document | IngestError] = [
            text_document("a", "First."),
            IngestError("bad.txt", "no text"),
            text_document("b", "Second."),
        ]
        report = store.sync(docs, CONFIG, meter=meter)
        assert calls == [(1, 3, "a.txt"), (2, 3, "bad.txt"), (3, 3, "b.txt")]
        assert report.progress["files"]["count"] == report.progress["files"]["total"] == 3
        latest = store.latest_build()
        assert latest is not None and latest.report["progress"] == report.progress

    def test_a_failing_sync_leaves_the_previous_build_readable(self, store: StoreProtocol) -> None:
        store.sync([text_document("a", "First text."), text_document("b", "Second text.")], CONFIG)
        before = state(store)

        def broken() -> Iterator[Document]:
            yield text_document("a", "First text, changed.")
            raise RuntimeError("the source broke")

        with pytest.raises(RuntimeError, match="the source broke"):
            store.sync(broken(), CONFIG)
        assert state(store) == before

    def test_a_second_document_with_an_id_already_given_fails_naming_both(self, store: StoreProtocol) -> None:
        twin = replace(text_document("a", "Other."), path="other.txt")
        report = store.sync([text_document("a", "Alpha."), twin], CONFIG)
        assert report.added == ["a"]
        assert report.failed == [
            {"path": "other.txt", "reason": "duplicate id 'a': already used by a.txt", "kept": None}
        ]

    # -- a folder, through ingest_folder over sync --------------------------------------------------

    def test_an_ingest_stores_every_file_and_reports_it(self, store: StoreProtocol, corpus: Path) -> None:
        report = ingest_folder(store, corpus, CONFIG)
        assert sorted(report.added) == DOC_IDS
        assert report.updated == report.unchanged == report.removed == report.skipped == [] and report.failed == []
        assert [d.id for d in store.documents()] == DOC_IDS
        assert report.n_documents == 3 and report.n_chunks == store.chunk_count() > 3
        beta = store.document("beta")
        assert beta is not None and beta.path == "beta.md" and beta.metadata.status == "draft"
        assert report.progress["files"]["count"] == 3

    def test_an_ingest_calls_progress_after_each_file(self, store: StoreProtocol, corpus: Path) -> None:
        calls: list[tuple[int, int, str]] = []
        ingest_folder(store, corpus, CONFIG, progress=lambda done, total, path: calls.append((done, total, path)))
        assert [(done, total) for done, total, _ in calls] == [(1, 3), (2, 3), (3, 3)]
        assert sorted(path for _, _, path in calls) == ["alpha.md", "beta.md", "notes/gamma.txt"]

    def test_a_file_over_max_bytes_fails_alone(self, store: StoreProtocol, corpus: Path) -> None:
        (corpus / "big.txt").write_text("Big text. " * 200, encoding="utf-8")
        report = ingest_folder(store, corpus, CONFIG, max_bytes=1000)
        assert [f["path"] for f in report.failed] == ["big.txt"]
        assert [d.id for d in store.documents()] == DOC_IDS

    def test_a_failing_ingest_leaves_the_previous_build_readable(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        before = state(store)
        (corpus / "alpha.md").write_text("---\nid: alpha\n---\n\n# Alpha\n\nRewritten.\n", encoding="utf-8")
        (corpus / "delta.md").write_text("---\nid: delta\n---\n\n# Delta\n\nNew.\n", encoding="utf-8")
        with pytest.raises(RuntimeError, match="stopped after"):
            ingest_folder(store, corpus, CONFIG, progress=fails_after_first_file)
        assert state(store) == before
        report = ingest_folder(store, corpus, CONFIG)  # and the store takes the next ingest
        assert report.added == ["delta"] and report.updated == ["alpha"]

    def test_a_reingest_updates_changed_files_and_removes_missing_ones(
        self, store: StoreProtocol, corpus: Path
    ) -> None:
        ingest_folder(store, corpus, CONFIG)
        (corpus / "alpha.md").write_text(policy("alpha", {"Only": "Alpha was rewritten."}), encoding="utf-8")
        (corpus / "notes" / "gamma.txt").unlink()
        report = ingest_folder(store, corpus, CONFIG)
        assert (report.updated, report.unchanged, report.removed) == (["alpha"], ["beta"], ["notes-gamma"])
        assert store.document("notes-gamma") is None and store.chunks("notes-gamma") == []
        assert "Alpha was rewritten." in " ".join(c.text for c in store.chunks("alpha"))
        assert "Alpha one says hello." not in " ".join(c.text for c in store.chunks())

    def test_a_reingest_without_remove_missing_keeps_documents_of_missing_files(
        self, store: StoreProtocol, corpus: Path
    ) -> None:
        ingest_folder(store, corpus, CONFIG)
        (corpus / "notes" / "gamma.txt").unlink()
        report = ingest_folder(store, corpus, CONFIG, remove_missing=False)
        assert report.removed == [] and report.unchanged == ["alpha", "beta"]
        assert [d.id for d in store.documents()] == DOC_IDS

    # -- documents ----------------------------------------------------------------------------------

    def test_documents_are_listed_by_id_and_looked_up_by_id(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        docs = store.documents()
        assert [d.id for d in docs] == DOC_IDS and all(d.text for d in docs)
        assert [store.document(d.id) for d in docs] == docs
        assert store.document("missing") is None

    def test_document_headers_are_the_documents_without_text_or_sections(
        self, store: StoreProtocol, corpus: Path
    ) -> None:
        ingest_folder(store, corpus, CONFIG)
        docs = store.documents()
        headers = store.document_headers()
        assert [d.id for d in headers] == [d.id for d in docs]
        assert all(h.text == "" and h.sections == () for h in headers)
        assert [(h.title, h.path, h.format, h.metadata, h.content_hash, h.first_line) for h in headers] == [
            (d.title, d.path, d.format, d.metadata, d.content_hash, d.first_line) for d in docs
        ]

    def test_tenants_are_the_distinct_tenants_of_the_documents_sorted(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        assert store.tenants() == ["default"]
        for name, tenant in (("one.md", "zeta"), ("two.md", "acme"), ("three.md", "acme")):
            (corpus / name).write_text(policy(name[:-3], {"S": "Text."}, tenant=tenant), encoding="utf-8")
        ingest_folder(store, corpus, CONFIG)
        assert store.tenants() == ["acme", "default", "zeta"]
        assert store.document("acme:two") is not None and store.document("two") is None

    # -- chunks -------------------------------------------------------------------------------------

    def test_chunks_are_ordered_by_document_id_then_position(self, store: StoreProtocol, corpus: Path) -> None:
        # twelve sections: chunk c10 and c11 come after c9 by position, before c2 by id
        (corpus / "delta.md").write_text(policy("delta", {f"Part {i}": f"Delta part {i}." for i in range(12)}))
        ingest_folder(store, corpus, CONFIG)
        chunks = store.chunks()
        keys = [(c.doc_id, position(c.id)) for c in chunks]
        assert keys == sorted(keys) and len(store.chunks("delta")) >= 12
        assert [d for d, _ in keys] == sorted(d for d, _ in keys)
        for doc_id in [*DOC_IDS, "delta"]:
            assert store.chunks(doc_id) == [c for c in chunks if c.doc_id == doc_id]
        assert store.chunks("missing") == []

    def test_chunk_ids_and_batches_follow_the_chunks_order(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        ids = [c.id for c in store.chunks()]
        assert store.chunk_ids() == ids
        batches = list(store.iter_chunks(batch=2))
        assert [c.id for batch in batches for c in batch] == ids
        assert all(len(batch) == 2 for batch in batches[:-1]) and 1 <= len(batches[-1]) <= 2
        with pytest.raises(ValueError, match="batch"):
            next(store.iter_chunks(batch=0))

    def test_chunks_are_looked_up_by_id_in_the_order_asked(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        chunks = store.chunks()
        first, last = chunks[0], chunks[-1]
        assert store.chunk(first.id) == first and store.chunk("missing") is None
        assert store.chunks_by_id([last.id, "missing", first.id]) == [last, first]
        assert store.chunks_by_id([]) == []
        assert first.title and first.source  # a chunk carries its document's title and path
        assert store.document(first.doc_id) is not None

    def test_chunk_counts_add_up_per_document(self, store: StoreProtocol, corpus: Path) -> None:
        ingest_folder(store, corpus, CONFIG)
        counts = store.chunk_counts()
        assert counts == {doc_id: len(store.chunks(doc_id)) for doc_id in DOC_IDS}
        assert store.chunk_count() == sum(counts.values()) == len(store.chunk_ids())

    # -- builds -------------------------------------------------------------------------------------

    def test_each_ingest_records_a_build_and_the_latest_is_the_last(self, store: StoreProtocol, corpus: Path) -> None:
        first = ingest_folder(store, corpus, CONFIG)
        (corpus / "notes" / "gamma.txt").unlink()
        second = ingest_folder(store, corpus, ChunkingConfig(name="fixed", size=50))
        builds = store.builds()
        assert [b.id for b in builds] == [first.build_id, second.build_id] and builds[0].id < builds[1].id
        latest = store.latest_build()
        assert latest == builds[-1] and store.latest_build_id() == latest.id == second.build_id
        assert (latest.n_documents, latest.n_chunks) == (2, store.chunk_count())
        assert latest.chunking["name"] == "fixed" and builds[0].chunking_hash != latest.chunking_hash
        assert latest.report["removed"] == ["notes-gamma"]

    # -- capabilities -------------------------------------------------------------------------------

    def test_the_store_offers_exactly_its_capabilities(self, store: StoreProtocol) -> None:
        held = {p.__name__ for p in CAPABILITIES if isinstance(store, p)}
        assert held == set(self.capabilities)


def save_traces(store: RecordStore, owners: dict[str, str | None]) -> None:
    """Save one trace per ``{trace id: owner}``, in that order (so the last is the newest)."""
    for trace_id, owner in owners.items():
        store.save_trace(trace_id, {"trace_id": trace_id}, owner=owner)


def ids(records: list[JsonObject], key: str = "trace_id") -> list[object]:
    """The value under ``key`` of each record."""
    return [r[key] for r in records]


class RecordStoreContract:
    """The record half of the storage contract (``RecordStore``): traces and evaluation runs.

    Inherit it in a test class that gives a ``store`` fixture (an empty store, closed afterwards). An
    owner is the API key that made a record: a read with an owner sees only that key's records, a
    read without one (outside the service, or an admin) sees all.
    """

    # -- traces -------------------------------------------------------------------------------------

    def test_a_saved_trace_loads_back_as_plain_json(self, store: StoreProtocol) -> None:
        store.save_trace("t1", {"query": "hello", "day": date(2024, 5, 1), "hits": [1, 2]})
        assert store.load_trace("t1") == {"query": "hello", "day": "2024-05-01", "hits": [1, 2]}
        assert store.load_trace("missing") is None

    def test_traces_are_listed_newest_first_up_to_the_limit(self, store: StoreProtocol) -> None:
        assert store.traces() == []
        save_traces(store, {"t1": None, "t2": None, "t3": None})
        assert ids(store.traces()) == ["t3", "t2", "t1"]
        assert ids(store.traces(limit=2)) == ["t3", "t2"]
        with pytest.raises(ValueError, match="limit"):
            store.traces(limit=0)

    def test_saving_a_trace_again_replaces_it_and_makes_it_the_newest(self, store: StoreProtocol) -> None:
        save_traces(store, {"t1": None, "t2": None})
        store.save_trace("t1", {"trace_id": "t1", "again": True})
        assert store.load_trace("t1") == {"trace_id": "t1", "again": True}
        assert ids(store.traces()) == ["t1", "t2"]

    def test_only_the_newest_traces_are_kept(self, store: StoreProtocol) -> None:
        save_traces(store, {"t1": None, "t2": None, "t3": None})
        store.save_trace("t4", {"trace_id": "t4"}, keep=2)
        assert ids(store.traces()) == ["t4", "t3"] and store.load_trace("t1") is None
        store.save_trace("t5", {"trace_id": "t5"}, keep=None)
        assert ids(store.traces()) == ["t5", "t4", "t3"]

    def test_an_empty_trace_id_or_a_keep_below_one_is_refused(self, store: StoreProtocol) -> None:
        with pytest.raises(ValueError, match="trace_id"):
            store.save_trace("", {})
        with pytest.raises(ValueError, match="keep"):
            store.save_trace("t1", {}, keep=0)
        assert store.traces() == []

    def test_an_owner_sees_only_its_own_traces(self, store: StoreProtocol) -> None:
        save_traces(store, {"a1": "key-a", "b1": "key-b", "n1": None, "a2": "key-a"})
        assert ids(store.traces(owner="key-a")) == ["a2", "a1"]
        assert ids(store.traces(owner="key-b")) == ["b1"]
        assert store.traces(owner="key-c") == []
        assert store.load_trace("a1", owner="key-a") == {"trace_id": "a1"}
        assert store.load_trace("a1", owner="key-b") is None and store.load_trace("n1", owner="key-a") is None
        assert ids(store.traces()) == ["a2", "n1", "b1", "a1"]  # without an owner: every trace

    # -- evaluation runs ----------------------------------------------------------------------------

    def test_a_saved_eval_run_loads_back_with_its_id_time_and_build(self, store: StoreProtocol) -> None:
        before = store.save_eval_run({"metrics": {"mrr": 0.25}})
        build = store.sync([text_document("a", "Alpha.")], CONFIG).build_id
        run_id = store.save_eval_run({"metrics": {"mrr": 0.5}, "day": date(2024, 5, 1)})
        saved = store.load_eval_run(run_id)
        assert saved is not None and saved["id"] == run_id and saved["created_at"]
        assert {k: saved[k] for k in ("metrics", "day", "build_id")} == {
            "metrics": {"mrr": 0.5},
            "day": "2024-05-01",
            "build_id": build,
        }
        unbuilt = store.load_eval_run(before)
        assert unbuilt is not None and unbuilt["build_id"] is None  # saved before any build
        assert store.load_eval_run(run_id + 1000) is None

    def test_an_eval_run_keeps_the_build_it_names(self, store: StoreProtocol) -> None:
        first = store.sync([text_document("a", "Alpha.")], CONFIG).build_id
        store.sync([text_document("a", "Alpha.")], ChunkingConfig(name="fixed", size=50))
        saved = store.load_eval_run(store.save_eval_run({"build_id": first}))
        assert saved is not None and saved["build_id"] == first

    def test_eval_runs_are_listed_oldest_first(self, store: StoreProtocol) -> None:
        assert store.eval_runs() == []
        run_ids = [store.save_eval_run({"n": n}) for n in range(3)]
        runs = store.eval_runs()
        assert ids(runs, "id") == run_ids == sorted(run_ids) and ids(runs, "n") == [0, 1, 2]
        assert runs == [store.load_eval_run(i) for i in run_ids]

    def test_an_owner_sees_only_its_own_eval_runs(self, store: StoreProtocol) -> None:
        a1 = store.save_eval_run({"n": 1}, owner="key-a")
        b1 = store.save_eval_run({"n": 2}, owner="key-b")
        n1 = store.save_eval_run({"n": 3})
        a2 = store.save_eval_run({"n": 4}, owner="key-a")
        assert ids(store.eval_runs(owner="key-a"), "id") == [a1, a2]
        assert ids(store.eval_runs(owner="key-b"), "id") == [b1]
        assert store.eval_runs(owner="key-c") == []
        assert store.load_eval_run(a1, owner="key-b") is None and store.load_eval_run(n1, owner="key-a") is None
        found = store.load_eval_run(b1, owner="key-b")
        assert found is not None and found["n"] == 2
        assert ids(store.eval_runs(), "id") == [a1, b1, n1, a2]  # without an owner: every run


__all__ = [
    "CONFIG",
    "DOC_IDS",
    "RecordStoreContract",
    "StoreContract",
    "policy",
    "text_document",
    "write_corpus",
]
