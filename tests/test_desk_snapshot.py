"""Desk opens a saved snapshot when it fits the latest build and the settings, and ranks exactly as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk import Desk, Settings
from evidencedesk.cli import app
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.results.ingest import SnapshotUpdate

ROOT = Path(__file__).resolve().parents[1]
KESTREL = ROOT / "examples" / "kestrel"
QUESTIONS = [
    "Can I return a bike after five weeks?",
    "stem bolt torque size M5",
    "How long is the warranty on a frame?",
    "ফেরত দেওয়ার সময়সীমা কত দিন?",
    "battery storage over winter",
]


def _ranked(desk: Desk, method: str) -> list[list[tuple[str, float]]]:
    return [[(c.chunk.id, round(c.score, 6)) for c in desk.search(q, k=5, method=method)] for q in QUESTIONS]


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(KESTREL / "docs", folder)
    return folder


def test_snapshot_gives_the_same_results_and_answers(tmp_path: Path, docs: Path) -> None:
    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        before = {m: _ranked(desk, m) for m in ("bm25", "dense", "hybrid")}
        answer_before = desk.ask(QUESTIONS[0], save=False)
        assert desk.snapshot_status().startswith("no snapshot")
        desk.write_index()
        assert desk.snapshot_status().startswith("snapshot of build")
        assert desk.searcher_label("bm25").startswith("snapshot-")
        for method, expected in before.items():
            assert _ranked(desk, method) == expected, method
        answer_after = desk.ask(QUESTIONS[0], save=False)
        assert answer_after.answer == answer_before.answer
        assert answer_after.sources == answer_before.sources
    with Desk(tmp_path / "store") as reopened:  # a new process opens the snapshot, not the chunks
        assert reopened.searcher_label("dense").startswith("snapshot-")
        assert reopened._state.cache.chunks is None
        assert _ranked(reopened, "hybrid") == before["hybrid"]


def test_ingest_updates_the_snapshot_and_a_bare_store_ingest_makes_it_stale(tmp_path: Path, docs: Path) -> None:
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.store import Store

    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        desk.write_index(dense=False)
        (docs / "torque.md").unlink()
        report = desk.ingest(docs)
        index = report.progress.index
        assert isinstance(index, SnapshotUpdate) and index.deleted > 0 and index.added == 0
        assert desk.snapshot_status().startswith("snapshot of build 2, ")
        assert desk.searcher_label("bm25").startswith("snapshot-")
        hits = desk.search("stem bolt torque", k=5, method="bm25")
        assert hits and all(c.chunk.doc_id != "kestrel:kc-torque-chart" for c in hits)
    with Store(tmp_path / "store") as store:  # an ingest that does not go through the Desk
        shutil.copy(KESTREL / "docs" / "torque.md", docs / "torque.md")
        ingest_folder(store, docs, ChunkingConfig())
    with Desk(tmp_path / "store") as desk:
        assert "the store is at build 3" in desk.snapshot_status()
        hits = desk.search("stem bolt torque", k=5, method="bm25")
        assert hits[0].chunk.doc_id == "kestrel:kc-torque-chart"
        assert not desk.searcher_label("bm25").startswith("snapshot-")
        desk.write_index(dense=False)  # brings it up to date with one new segment
        assert desk.snapshot_status().startswith("snapshot of build 3, ")
        assert [c.chunk.id for c in desk.search("stem bolt torque", k=5, method="bm25")] == [c.chunk.id for c in hits]


def test_snapshot_with_other_settings_is_not_used(tmp_path: Path, docs: Path) -> None:
    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        desk.write_index(dense=False)
    plain = Settings.model_validate({"retrieval": {"legs": [{"method": "bm25", "stem": False}]}})
    with Desk(tmp_path / "store", settings=plain) as desk:
        assert "other BM25 or dense settings" in desk.snapshot_status()
        assert not desk.searcher_label("bm25").startswith("snapshot-")
    with Desk(tmp_path / "store") as desk:  # no vectors saved: dense is built in memory, bm25 mapped
        assert desk.searcher_label("bm25").startswith("snapshot-")
        assert not desk.searcher_label("dense").startswith("snapshot-")


def test_index_command_writes_the_snapshot(tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(docs), "--json"]).exit_code == 0
    result = runner.invoke(app, ["index", "--exact", "--json"])
    assert result.exit_code == 0, result.output
    assert '"status": "snapshot of build 1, ' in result.output and '"mode": "rebuild"' in result.output
    assert (tmp_path / ".evidencedesk" / "snapshot" / "manifest.json").is_file()
    assert not (tmp_path / ".evidencedesk" / "snapshot" / "dense" / "hnsw.usearch").exists()
    merged = runner.invoke(app, ["index", "--exact", "--merge", "--json"])
    assert merged.exit_code == 0, merged.output
    assert '"mode": "update"' in merged.output and '"segments": 1' in merged.output
    missing = runner.invoke(app, ["index", "--store", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and "no store at" in missing.output


def test_a_reader_waits_for_the_snapshot_update_instead_of_indexing_in_memory(tmp_path: Path, docs: Path) -> None:
    import threading

    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.retrieval.snapshot_update import writer_lock
    from evidencedesk.store import Store
    from evidencedesk.wiring_snapshot import update_store_snapshot

    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        desk.write_index(dense=False)
    (docs / "torque.md").unlink()
    reader = Desk(tmp_path / "store")
    seen: list[str] = []
    with Store(tmp_path / "store") as store, writer_lock(store.snapshot_dir):
        ingest_folder(store, docs, ChunkingConfig())  # build 2 is committed; its segment is not written yet
        thread = threading.Thread(target=lambda: seen.append(reader.snapshot_status()))
        thread.start()
        thread.join(timeout=1.0)
        assert thread.is_alive() and not seen  # the reader waits for the writer
        update_store_snapshot(store, reader.settings, lambda: None, None)  # type: ignore[arg-type,return-value]
    thread.join(timeout=30)
    assert seen and seen[0].startswith("snapshot of build 2, "), seen
    assert reader.searcher_label("bm25").startswith("snapshot-")
    reader.close()


def test_a_snapshot_of_256_token_vectors_is_not_searched_with_the_512_token_model(tmp_path: Path, docs: Path) -> None:
    """A snapshot written when "minilm" meant 256 tokens (its identity says "minilm") is not used:
    search falls back to the in-memory indexes instead of refusing the embedder."""
    import json

    from evidencedesk.index.embedders import MINILM_NAME, default_embedder
    from evidencedesk.wiring_snapshot import identity

    assert identity(Settings())["model"] == default_embedder().name
    short = Settings.model_validate(
        {"retrieval": {"legs": [{"method": "bm25"}, {"method": "dense", "model": "minilm-256"}]}}
    )
    assert identity(short)["model"] == MINILM_NAME
    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        desk.write_index()
        want = _ranked(desk, "hybrid")
    manifest = tmp_path / "store" / "snapshot" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["labels"]["identity"]["model"] = "minilm"  # as written before 512 became the default
    data["dense"]["model_name"] = MINILM_NAME
    manifest.write_text(json.dumps(data))
    with Desk(tmp_path / "store") as desk:
        assert "other BM25 or dense settings" in desk.snapshot_status()
        assert not desk.searcher_label("hybrid").startswith("snapshot-")
        assert _ranked(desk, "hybrid") == want
