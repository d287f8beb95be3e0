"""Builds, traces, evaluation runs, sync of pre-parsed documents, duplicate ids and kept versions."""

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Document, Metadata
from evidencedesk.ingest import IngestError
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import DB_NAME, SCHEMA_VERSION, Store, StoreError

CONFIG = ChunkingConfig(name="paragraph", size=100)


def doc(doc_id: str, text: str) -> Document:
    return Document(doc_id, f"Doc {doc_id}", f"corpus/{doc_id}", "text", text, f"h-{hash(text)}", Metadata())


def test_database_file_uses_wal_and_records_schema_version(store: Store) -> None:
    conn = sqlite3.connect(store.path / DB_NAME)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"documents", "chunks", "builds", "traces", "eval_runs", "schema_version"} <= tables
    finally:
        conn.close()


def test_newer_schema_and_non_folder_paths_are_refused(tmp_path: Path) -> None:
    Store(tmp_path / "s").close()
    conn = sqlite3.connect(tmp_path / "s" / DB_NAME)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version"):
        Store(tmp_path / "s")
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="not a folder"):
        Store(tmp_path / "file")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / DB_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open store"):
        Store(tmp_path / "junk")
    with pytest.raises(ValueError, match="store path"):
        Store("")


def test_sync_stores_preparsed_documents_and_reports_failures(store: Store) -> None:
    docs = [doc("d1", "First abstract about cells.\n"), doc("d2", "Second abstract about mice.\n")]
    report = store.sync(docs, CONFIG, failures=[IngestError("corpus/bad", "no text")])
    assert report.added == ["d1", "d2"]
    assert report.failed == [{"path": "corpus/bad", "reason": "no text", "kept": None}]
    assert [c.doc_id for c in store.chunks()] == ["d1", "d2"]
    again = store.sync([docs[1], doc("d3", "Third.\n")], CONFIG)
    assert again.unchanged == ["d2"] and again.added == ["d3"] and again.removed == ["d1"]


def test_duplicate_id_fails_the_second_file_naming_both(
    store: Store, tmp_path: Path, policy: Callable[..., str]
) -> None:
    folder = tmp_path / "dup"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "one.md").write_text(policy("same", {"S": "From one."}), encoding="utf-8")
    (folder / "b.md").write_text(policy("same", {"S": "From b."}), encoding="utf-8")
    report = ingest_folder(store, folder, CONFIG)
    assert report.added == ["same"]
    assert report.failed == [{"path": "b.md", "reason": "duplicate id 'same': already used by a/one.md", "kept": None}]
    assert "From one." in store.document("same").text


def test_a_now_broken_file_keeps_its_stored_version(store: Store, tmp_path: Path, policy: Callable[..., str]) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "p.md").write_text(policy("pol", {"S": "Thirty days."}), encoding="utf-8")
    (folder / "q.md").write_text(policy("other", {"S": "Other text."}), encoding="utf-8")
    ingest_folder(store, folder, CONFIG)
    kept_chunks = store.chunks("pol")
    (folder / "p.md").write_text("---\nid: pol\nstatus: [oops\n---\nSixty days.\n", encoding="utf-8")
    (folder / "q.md").write_text(policy("other", {"S": "Other text, edited."}), encoding="utf-8")
    report = ingest_folder(store, folder, CONFIG)
    assert report.updated == ["other"] and report.removed == []
    assert len(report.failed) == 1
    failure = report.failed[0]
    assert failure["path"] == "p.md" and failure["kept"] == "pol"
    assert failure["reason"].startswith("broken front matter at line")
    assert store.chunks("pol") == kept_chunks


def test_traces_round_trip_newest_first(store: Store) -> None:
    assert store.load_trace("missing") is None and store.traces() == []
    for i in range(3):
        store.save_trace(f"t{i}", {"id": f"t{i}", "query": f"q{i}", "scores": [0.5, i]})
    assert store.load_trace("t1") == {"id": "t1", "query": "q1", "scores": [0.5, 1]}
    assert [t["id"] for t in store.traces()] == ["t2", "t1", "t0"]
    assert [t["id"] for t in store.traces(limit=2)] == ["t2", "t1"]
    store.save_trace("t0", {"id": "t0", "query": "replaced"})
    assert store.load_trace("t0") == {"id": "t0", "query": "replaced"}
    with pytest.raises(ValueError, match="limit"):
        store.traces(limit=0)


def test_eval_runs_link_to_the_latest_build(store: Store, corpus: Path) -> None:
    assert store.save_eval_run({"metrics": {"recall@5": 0.5}}) == 1
    assert store.load_eval_run(1)["build_id"] is None
    report = ingest_folder(store, corpus, CONFIG)
    run_id = store.save_eval_run({"metrics": {"recall@5": 0.75}})
    loaded = store.load_eval_run(run_id)
    assert loaded["metrics"] == {"recall@5": 0.75} and loaded["build_id"] == report.build_id and loaded["id"] == 2
    assert [r["id"] for r in store.eval_runs()] == [1, 2]
    assert store.load_eval_run(99) is None


def test_public_api_is_pinned() -> None:
    import evidencedesk.ingest
    import evidencedesk.store

    assert sorted(evidencedesk.store.__all__) == [
        "Build", "DB_NAME", "DEFAULT_STORE", "DocumentStore", "HoldsSnapshots", "HoldsVectors", "IngestReport",
        "RecordStore", "SCHEMA_VERSION", "SearchesInside", "SnapshotStore", "Store", "StoreError", "StoreProtocol",
    ]  # fmt: skip
    assert {"IngestError", "parse_file", "parse_folder", "scan", "parse_markdown", "parse_html", "parse_pdf",
            "parse_text", "doc_id_from_path", "DEFAULT_MAX_BYTES"} <= set(evidencedesk.ingest.__all__)  # fmt: skip
    for module in (evidencedesk.store, evidencedesk.ingest):
        assert all(hasattr(module, name) for name in module.__all__)


def test_ingest_error_survives_pickling() -> None:
    import pickle

    err = pickle.loads(pickle.dumps(IngestError("a.md", "empty file")))
    assert (err.path, err.reason, str(err)) == ("a.md", "empty file", "a.md: empty file")
    with pytest.raises(ValueError, match="reason"):
        IngestError("a.md", "")


def test_latest_build_id_follows_writes_of_this_and_other_connections(tmp_path: Path) -> None:
    """The build id is cached between calls, but a sync through either of two open stores (two
    connections to one database) is seen by both at once."""
    with Store(tmp_path / "s") as first, Store(tmp_path / "s") as second:
        assert first.latest_build_id() is None and second.latest_build_id() is None
        first.sync([doc("a", "Alpha text.")], CONFIG)
        one = first.latest_build_id()
        assert one is not None and second.latest_build_id() == one
        second.sync([doc("a", "Alpha text."), doc("b", "Beta text.")], CONFIG)
        two = second.latest_build_id()
        assert two is not None and two > one
        assert first.latest_build_id() == two
        assert first.latest_build_id() == two  # asked again without a change: the same


def test_latest_build_id_sees_another_process_once_the_recheck_time_passed(tmp_path: Path) -> None:
    """A write committed by another process is seen by a look made more than ``RECHECK_S`` after the
    previous one (this process wrote nothing, so in between the last look stands)."""
    import subprocess
    import sys
    import textwrap
    import time

    from evidencedesk.store.store import RECHECK_S

    with Store(tmp_path / "s") as store:
        store.sync([doc("a", "Alpha text.")], CONFIG)
        one = store.latest_build_id()
        script = textwrap.dedent(
            f"""
            from evidencedesk.chunking.config import ChunkingConfig
            from evidencedesk.documents import Document, Metadata
            from evidencedesk.store import Store
            d = Document("b", "b", "b.md", "md", "Beta text.", "hash-b", Metadata())
            with Store({str(tmp_path / "s")!r}) as other:
                other.sync([d], ChunkingConfig(name="paragraph", size=100))
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        time.sleep(RECHECK_S * 2)
        two = store.latest_build_id()
        assert one is not None and two is not None and two > one
