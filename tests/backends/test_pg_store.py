"""PgStore: ingest semantics of the embedded store, no stale rows, BM25 bookkeeping, records, migrations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evidencedesk.backends import open_store
from evidencedesk.backends.postgres import SCHEMA_VERSION, PgStore, PgStoreError
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document, Metadata
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from evidencedesk.text.tokenizer import Tokenizer
from tests.support.embedders import RandomEmbedder

pytestmark = pytest.mark.integration
CONFIG = ChunkingConfig()


def policy(doc_id: str, sections: dict[str, str], **front: str) -> str:
    head = "\n".join(f"{k}: {v}" for k, v in {"id": doc_id, "title": doc_id.title(), **front}.items())
    body = "\n\n".join(f"## {name}\n\n{text}" for name, text in sections.items())
    return f"---\n{head}\n---\n\n# {doc_id.title()}\n\n{body}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    f = tmp_path / "docs"
    f.mkdir()
    (f / "alpha.md").write_text(policy("alpha", {"One": "Alpha one says hello.", "Two": "Alpha two says bye."}))
    (f / "beta.md").write_text(policy("beta", {"First": "Beta first.", "Second": "Beta second."}, status="draft"))
    (f / "gamma.txt").write_text("Gamma is plain text.\n\nWith two paragraphs.\n")
    return f


def table_ids(store: PgStore, query: str) -> set[str]:
    with store.pool.connection() as conn:
        return {r[0] for r in conn.execute(query.encode()).fetchall()}


def stored_ids(store: PgStore) -> dict[str, set[str]]:
    """Chunk ids in every table that holds a row per chunk."""
    return {
        "chunks": table_ids(store, "SELECT id FROM chunks"),
        "chunk_terms": table_ids(store, "SELECT chunk_id FROM chunk_terms"),
        "chunk_vectors": table_ids(store, "SELECT chunk_id FROM chunk_vectors"),
    }


def bm25_bookkeeping(store: PgStore) -> tuple[dict[str, int], dict[str, int], tuple[int, int]]:
    """(df kept in vocab, df recounted from the chunks' text, (n_chunks, total_length) kept)."""
    with store.pool.connection() as conn:
        kept = dict(conn.execute("SELECT term, df FROM vocab WHERE df > 0").fetchall())
        stats = conn.execute("SELECT n_chunks, total_length FROM bm25_stats").fetchone()
    recount: Counter[str] = Counter()
    for c in store.chunks():
        recount.update(set(store.encoder.tokenizer.tokenize(c.text)))
    return kept, dict(recount), (int(stats[0]), int(stats[1]))


def test_ingest_matches_the_embedded_store(make_store: Callable[..., PgStore], folder: Path, tmp_path: Path) -> None:
    pg = make_store()
    with Store(tmp_path / "embedded") as embedded:
        expected = ingest_folder(embedded, folder, CONFIG)
        report = ingest_folder(pg, folder, CONFIG)
        assert sorted(report.added) == sorted(expected.added) and not report.failed
        assert (report.n_documents, report.n_chunks) == (expected.n_documents, expected.n_chunks)
        assert pg.documents() == embedded.documents()
        assert pg.chunks() == embedded.chunks()
        assert pg.chunk_counts() == embedded.chunk_counts()
        assert pg.chunk("alpha:c1") == embedded.chunk("alpha:c1") and pg.chunk("nope:c0") is None
    again = ingest_folder(pg, folder, CONFIG)
    assert sorted(again.unchanged) == ["alpha", "beta", "gamma"] and not again.added and not again.updated


def test_changed_document_leaves_no_stale_chunk(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store(embedder=RandomEmbedder())
    ingest_folder(pg, folder, CONFIG)
    before = stored_ids(pg)
    assert before["chunks"] == before["chunk_terms"] == before["chunk_vectors"]
    old_alpha = {c.id for c in pg.chunks("alpha")}
    assert len(old_alpha) >= 3
    (folder / "alpha.md").write_text(policy("alpha", {"Only": "Alpha was rewritten to one short section."}))
    report = ingest_folder(pg, folder, CONFIG)
    assert report.updated == ["alpha"] and sorted(report.unchanged) == ["beta", "gamma"]
    new_alpha = pg.chunks("alpha")
    assert len(new_alpha) < len(old_alpha)
    assert "Alpha was rewritten" in " ".join(c.text for c in new_alpha)
    assert not any("hello" in c.text for c in pg.chunks())
    after = stored_ids(pg)
    assert after["chunks"] == after["chunk_terms"] == after["chunk_vectors"]
    assert (old_alpha - {c.id for c in new_alpha}).isdisjoint(after["chunks"])
    kept, recount, (n, total) = bm25_bookkeeping(pg)
    assert kept == recount and n == len(after["chunks"])
    assert total == sum(len(pg.encoder.tokenizer.tokenize(c.text)) for c in pg.chunks())


def test_removed_document_takes_its_chunks_along(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store(embedder=RandomEmbedder())
    ingest_folder(pg, folder, CONFIG)
    (folder / "beta.md").unlink()
    report = ingest_folder(pg, folder, CONFIG)
    assert report.removed == ["beta"]
    ids = stored_ids(pg)
    assert not any(i.startswith("beta:") for table in ids.values() for i in table)
    assert pg.document("beta") is None and "beta" not in pg.chunk_counts()
    n_gamma = pg.chunk_counts()["gamma"]
    assert n_gamma >= 1 and pg.delete(["gamma"]) == n_gamma
    assert {c.doc_id for c in pg.chunks()} == {"alpha"}
    kept, recount, _ = bm25_bookkeeping(pg)
    assert kept == recount


def test_a_file_that_now_fails_keeps_its_stored_version(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store()
    ingest_folder(pg, folder, CONFIG)
    (folder / "alpha.md").write_text("---\nid: alpha\nstatus: [not, a, status]\n---\n# Broken\n")
    report = ingest_folder(pg, folder, CONFIG)
    assert [f["kept"] for f in report.failed] == ["alpha"]
    assert pg.document("alpha") is not None and not report.removed


def test_a_document_the_database_refuses_is_reported_and_the_rest_stored(make_store: Callable[..., PgStore]) -> None:
    def doc(doc_id: str, text: str) -> Document:
        return Document(doc_id, doc_id, f"{doc_id}.txt", "text", text, f"h-{doc_id}-{len(text)}", Metadata())

    pg = make_store()
    config = ChunkingConfig(name="paragraph")
    report = pg.sync([doc("a", "Fine text."), doc("b", "Has a NUL \x00 byte."), doc("c", "Also fine.")], config)
    assert sorted(report.added) == ["a", "c"]
    assert [f["path"] for f in report.failed] == ["b.txt"] and "cannot store document b" in report.failed[0]["reason"]
    assert {c.doc_id for c in pg.chunks()} == {"a", "c"}
    kept, recount, (n, _) = bm25_bookkeeping(pg)
    assert kept == recount and n == len(pg.chunks())


def test_weights_are_re_encoded_when_avgdl_moves(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store()
    ingest_folder(pg, folder, CONFIG)
    (folder / "delta.md").write_text(policy("delta", {"Long": " ".join(["padding words make this long"] * 30)}))
    ingest_folder(pg, folder, CONFIG)
    with pg.pool.connection() as conn:
        n, total, encoded = conn.execute("SELECT n_chunks, total_length, encoded_avgdl FROM bm25_stats").fetchone()
        rows = conn.execute("SELECT terms, tfs, dl, weights FROM chunk_terms").fetchall()
    assert encoded == total / n
    for terms, tfs, dl, weights in rows:
        expected = pg.encoder.doc_vector(terms, tfs, dl, total / n)
        assert weights.indices() == expected.indices()
        assert np.array_equal(np.float32(weights.values()), np.float32(expected.values()))


def test_changing_the_tokenizer_re_tokenises_the_store(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store()
    ingest_folder(pg, folder, CONFIG)
    pg.configure_bm25(tokenizer=Tokenizer(stem=True, stopwords="english"), k1=1.2)
    assert pg.encoder.k1 == 1.2 and pg.encoder.tokenizer.stem
    kept, recount, _ = bm25_bookkeeping(pg)
    assert kept == recount and "say" in kept and "is" not in kept  # "says" stemmed, "is" a stopword
    reopened = PgStore(pg.url, schema=pg.schema)  # the settings stay with the store
    assert reopened.encoder.identity() == pg.encoder.identity()
    reopened.close()


def test_builds_traces_and_eval_runs(make_store: Callable[..., PgStore], folder: Path) -> None:
    pg = make_store()
    first = ingest_folder(pg, folder, CONFIG)
    second = ingest_folder(pg, folder, CONFIG)
    builds = pg.builds()
    assert [b.id for b in builds] == [first.build_id, second.build_id]
    assert builds[-1].report["unchanged"] == second.unchanged and builds[-1].n_chunks == second.n_chunks
    assert pg.latest_build() == builds[-1]
    pg.save_trace("t1", {"query": "q", "nested": {"x": [1, 2.5]}})
    pg.save_trace("t2", {"query": "r"})
    pg.save_trace("t1", {"query": "q again"})
    assert pg.load_trace("t1") == {"query": "q again"} and pg.load_trace("nope") is None
    assert [t["query"] for t in pg.traces()] == ["q again", "r"]
    run_id = pg.save_eval_run({"metric": 0.5})
    assert pg.load_eval_run(run_id) is not None and pg.load_eval_run(run_id)["build_id"] == second.build_id
    assert [r["metric"] for r in pg.eval_runs()] == [0.5]


def test_migrations_are_recorded_and_a_newer_schema_is_refused(make_store: Callable[..., PgStore]) -> None:
    pg = make_store()
    with pg.pool.connection() as conn:
        rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))  # each migration, in order
        conn.execute("INSERT INTO schema_migrations VALUES (%s, 'later')", (SCHEMA_VERSION + 1,))
    with pytest.raises(PgStoreError, match="reads up to"):
        PgStore(pg.url, schema=pg.schema)


def test_open_store_picks_the_backend(pg_url: str, tmp_path: Path, make_store: Callable[..., Any]) -> None:
    embedded = open_store(tmp_path / "s")
    assert isinstance(embedded, Store)
    embedded.close()
    schema = make_store().schema
    pg = open_store(pg_url, schema=schema)
    assert isinstance(pg, PgStore)
    pg.close()
    with pytest.raises(ValueError, match="unsupported URL"):
        open_store("mysql://x@y/z")


def test_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(PgStoreError, match="cannot connect"):
        PgStore("postgresql://postgres@127.0.0.1:9/none", timeout=2)
    with pytest.raises(ValueError, match="url"):
        PgStore("/not/a/url")


def test_upsert_refuses_chunks_of_another_document(make_store: Callable[..., PgStore]) -> None:
    pg = make_store()
    doc = Document("a", "A", "a.txt", "text", "x", "h", Metadata())
    with pytest.raises(ValueError, match="does not belong"):
        pg.upsert([(doc, [Chunk("b:c0", "b", "x")])])
