"""A saved, memory-mapped snapshot ranks exactly like the in-memory searchers over the same store."""

from __future__ import annotations

import mmap
import shutil
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.index.embedders import default_embedder
from evidencedesk.index.string_table import StringTable, write_strings
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.retrieval.snapshot import Snapshot, SnapshotError, SnapshotSearcher, write_snapshot
from evidencedesk.store import Store
from evidencedesk.text.tokenizer import Tokenizer
from tests.support.paths import KESTREL
from tests.support.retrieval import kestrel_questions

SCOPES = [
    Scope(valid_at=date(2026, 6, 1)),
    Scope.everything(),
    Scope(statuses=frozenset({"superseded"}), audiences=None, check_validity=False),
    Scope(audiences=frozenset({"staff"}), valid_at=date(2026, 6, 1)),
    Scope(langs=frozenset({"bn"}), audiences=None, check_validity=False),
]
TOKENIZER = Tokenizer(stem=True, stopwords="english")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("store")
    docs = tmp_path_factory.mktemp("docs")
    shutil.copytree(KESTREL / "docs", docs, dirs_exist_ok=True)
    db = Store(folder)
    ingest_folder(db, docs, ChunkingConfig())
    return db


@pytest.fixture(scope="module")
def embedder():  # noqa: ANN201
    return default_embedder()


@pytest.fixture(scope="module")
def snapshot(store: Store, embedder, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:  # noqa: ANN001
    where = tmp_path_factory.mktemp("snap") / "index"
    write_snapshot(
        where,
        store.iter_chunks(batch=7),  # many small batches: the streaming path, not one list
        tokenizer=TOKENIZER,
        vectorize=lambda batch: embedder.embed([c.text for c in batch]),
        model_name=embedder.name,
        ann=True,
        build_id=store.latest_build().id,
    )
    return Snapshot(where)


def _ids(results: list) -> list[tuple[str, float]]:  # noqa: ANN001
    return [(c.chunk.id, round(c.score, 9)) for c in results]


def test_bm25_snapshot_ranks_like_the_in_memory_index(store: Store, snapshot: Snapshot) -> None:
    memory = BM25Searcher(store.chunks(), tokenizer=TOKENIZER)
    mapped = SnapshotSearcher(snapshot, "bm25", store.chunks_by_id)
    questions = kestrel_questions()
    assert len(questions) >= 40
    compared = 0
    for scope in SCOPES:
        for q in questions:
            expected = _ids(memory.search(q, 10, scope))
            assert _ids(mapped.search(q, 10, scope)) == expected, (q, scope)
            compared += bool(expected)
    assert compared > 100  # most scope/question pairs have hits: the comparison is not of empty lists


def test_dense_snapshot_exact_and_hnsw_rank_like_exact_search(store: Store, snapshot: Snapshot, embedder) -> None:  # noqa: ANN001
    memory = DenseSearcher(store.chunks(), embedder=embedder)
    exact = SnapshotSearcher(snapshot, "dense", store.chunks_by_id, embedder)
    ann = SnapshotSearcher(snapshot, "dense-ann", store.chunks_by_id, embedder)
    for scope in SCOPES[:3]:
        for q in kestrel_questions()[:12]:
            expected = [c.chunk.id for c in memory.search(q, 5, scope)]
            assert [c.chunk.id for c in exact.search(q, 5, scope)] == expected
            # a graph of ~100 rows is searched exhaustively enough to agree with exact search
            assert [c.chunk.id for c in ann.search(q, 5, scope)] == expected


def _on_disk(array: np.ndarray) -> bool:
    """True when ``array`` reads a memory-mapped file (no copy of its own)."""
    base = array
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap):
            return True
        base = base.base
    return isinstance(base, mmap.mmap)


def test_snapshot_arrays_stay_on_disk(snapshot: Snapshot) -> None:
    (segment,) = snapshot.segments  # a snapshot written whole is one segment
    for array in (
        segment.bm25.postings.rows,
        segment.bm25.postings.scores,
        segment.bm25.lengths,
        segment.tie,
        segment.ids.offsets,
        segment.ids.data,
        segment.dense.vectors,
    ):
        assert _on_disk(array) and not array.flags.writeable and not array.flags.owndata
    assert not _on_disk(np.zeros(3)) and not _on_disk(np.zeros(3)[1:])
    assert len(snapshot) == len(segment.ids)


def test_filter_applies_before_ranking_in_the_snapshot(store: Store, snapshot: Snapshot) -> None:
    mapped = SnapshotSearcher(snapshot, "bm25", store.chunks_by_id)
    scope = Scope(statuses=frozenset({"superseded"}), audiences=None, check_validity=False)
    hits = mapped.search("return window days refund", 10, scope)
    assert hits and all(c.chunk.metadata.status == "superseded" for c in hits)
    nothing = Scope(tenants=frozenset({"no-such-tenant"}))
    assert mapped.search("return window days refund", 10, nothing) == []


def test_a_stale_snapshot_says_so_instead_of_returning_missing_chunks(store: Store, tmp_path: Path) -> None:
    db = Store(tmp_path / "store")
    docs = tmp_path / "docs"
    shutil.copytree(KESTREL / "docs", docs)
    ingest_folder(db, docs, ChunkingConfig())
    write_snapshot(tmp_path / "index", db.iter_chunks(), tokenizer=TOKENIZER)
    mapped = SnapshotSearcher(Snapshot(tmp_path / "index"), "bm25", db.chunks_by_id)
    hits = mapped.search("torque stem bolt", 3)
    assert hits
    removed = Path(hits[0].chunk.source)
    (docs / removed.name).unlink()
    ingest_folder(db, docs, ChunkingConfig())
    with pytest.raises(SnapshotError, match="out of date"):
        mapped.search("torque stem bolt", 3)
    db.close()


def test_missing_or_damaged_snapshot_gives_a_clear_error(snapshot: Snapshot, tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no index snapshot"):
        Snapshot(tmp_path / "nothing")
    copy = tmp_path / "copy"
    shutil.copytree(snapshot.directory, copy)
    with (copy / "segments" / "s000001" / "ids.bin").open("ab") as f:
        f.write(b"extra")
    with pytest.raises(SnapshotError, match="damaged"):
        Snapshot(copy)
    (copy / "manifest.json").write_text('{"format": 99}', encoding="utf-8")
    with pytest.raises(SnapshotError, match="format 99"):
        Snapshot(copy)


def test_dense_snapshot_refuses_another_embedder(snapshot: Snapshot, store: Store) -> None:
    class Other:
        name, dim = "other-model", 384

    with pytest.raises(ValueError, match="other-model"):
        SnapshotSearcher(snapshot, "dense", store.chunks_by_id, Other())


def test_rewriting_a_snapshot_replaces_it_whole(store: Store, tmp_path: Path) -> None:
    where = tmp_path / "index"
    write_snapshot(where, [store.chunks()[:10]], tokenizer=TOKENIZER)
    assert len(Snapshot(where)) == 10
    write_snapshot(where, store.iter_chunks(), tokenizer=TOKENIZER)
    assert len(Snapshot(where)) == len(store.chunks())
    assert not (tmp_path / "index.partial").exists() and not (tmp_path / "index.old").exists()


def test_string_table_finds_sorted_terms_including_bangla(tmp_path: Path) -> None:
    terms = sorted(["ফেরত", "bike", "refund", "a", "zebra", "ক্রয়", "m3"])
    write_strings(tmp_path / "t.bin", terms)
    table = StringTable(tmp_path / "t.bin")
    assert list(table) == terms
    for n, t in enumerate(terms):
        assert table.find(t) == n
    assert table.find("bicycle") is None and table.find("") is None and table.find("zz") is None
    write_strings(tmp_path / "empty.bin", [])
    empty = StringTable(tmp_path / "empty.bin")
    assert len(empty) == 0 and empty.find("a") is None


def test_store_streams_and_fetches_chunks_by_id(store: Store) -> None:
    every = store.chunks()
    streamed = [c for batch in store.iter_chunks(batch=5) for c in batch]
    assert [c.id for c in streamed] == [c.id for c in every]
    wanted = [every[7].id, every[2].id, "no-such-id", every[7].id]
    assert [c.id for c in store.chunks_by_id(wanted)] == [every[7].id, every[2].id, every[7].id]
    with pytest.raises(ValueError, match="batch"):
        next(store.iter_chunks(batch=0))


def test_stored_chunks_reads_the_store_on_demand(store: Store) -> None:
    from evidencedesk.store.lookup import StoredChunks

    every = store.chunks()
    lookup = StoredChunks(store, keep=2)
    assert len(lookup) == len(every) == store.chunk_count()
    assert list(lookup) == [c.id for c in every] == store.chunk_ids()
    assert lookup[every[3].id] == every[3]
    assert every[5].id in lookup and "no-such-id" not in lookup
    with pytest.raises(KeyError):
        lookup["no-such-id"]
    for c in every[:5]:  # more reads than it keeps: older ones are dropped, answers stay right
        assert lookup[c.id] == c
    assert len(lookup._seen) == 2
