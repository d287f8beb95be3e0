"""Impact-ordered postings in PostgreSQL: the threshold algorithm stays exactly equal to the embedded BM25
through added generations, merges, full rebuilds, deletions, tenants and narrow scopes, while reading
only part of the postings."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore, bm25_blocks
from evidencedesk.documents import Chunk, Metadata
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from tests.support.postgres import documents_for

pytestmark = pytest.mark.integration

# a Zipf-like vocabulary: a few words in most chunks, many in a few
VOCAB = [f"w{i:03d}" for i in range(400)]
WEIGHTS = [1.0 / (i + 1) ** 0.9 for i in range(len(VOCAB))]
TENANTS = ("t0", "t1", "t2")


def _chunks(rng: random.Random, prefix: str, n: int) -> list[Chunk]:
    out = []
    for i in range(n):
        words = rng.choices(VOCAB, WEIGHTS, k=rng.randint(3, 40))
        meta = Metadata(tenant=TENANTS[i % 3], status="current" if i % 5 else "superseded")
        out.append(Chunk(id=f"{prefix}{i:04d}:c0", doc_id=f"{prefix}{i:04d}", text=" ".join(words), metadata=meta))
    return out


def _queries(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choices(VOCAB, WEIGHTS if i % 2 else None, k=rng.randint(1, 6))) for i in range(n)]


SCOPES = {
    "everything": Scope.everything(),
    "one tenant": Scope(statuses=None, audiences=None, tenants=frozenset({"t1"}), check_validity=False),
    "two tenants, current": Scope(tenants=frozenset({"t0", "t2"}), check_validity=False),
    "absent tenant": Scope(statuses=None, audiences=None, tenants=frozenset({"nobody"}), check_validity=False),
}


def _agree(pg: PgStore, rng: random.Random, n_queries: int = 30) -> tuple[int, int]:
    """Every query, scope and k gives the embedded index's ids and scores; returns (searches answered by
    the impact plan, searches that read fewer postings than the query terms hold)."""
    reference = BM25Searcher(pg.chunks())
    searcher = PgBM25Searcher(pg)
    impact = partial = 0
    with pg.pool.connection() as conn:
        df = dict(conn.execute("SELECT term, df FROM vocab").fetchall())
    for query in _queries(rng, n_queries):
        for name, scope in SCOPES.items():
            for k in (1, 10, 60):
                expected = [(c.chunk.id, c.score) for c in reference.search(query, k, scope)]
                got = [(c.chunk.id, c.score) for c in searcher.search(query, k, scope)]
                assert got == expected, (query, name, k)
                if searcher.last_path == "impact" and name == "everything":
                    impact += 1
                    partial += searcher.impact.postings < sum(df.get(w, 0) for w in set(query.split()))
    return impact, partial


def _blocks(pg: PgStore) -> dict[str, Any]:
    with pg.pool.connection() as conn:
        gens = [r[0] for r in conn.execute("SELECT DISTINCT gen FROM bm25_blocks ORDER BY gen").fetchall()]
        row = conn.execute("SELECT blocks_gens, blocks_removed FROM bm25_stats").fetchone()
    assert row is not None
    return {"gens": gens, "counter": row[0], "removed": row[1]}


@pytest.fixture()
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 8 postings, so a corpus of a thousand chunks has terms spread over many blocks."""
    monkeypatch.setattr(bm25_blocks, "BLOCK_SIZE", 8)


def test_generations_merges_and_rebuilds_keep_every_search_exact(
    make_store: Callable[..., PgStore], small_blocks: None
) -> None:
    rng = random.Random(5)
    pg = make_store()
    pg.upsert(documents_for(_chunks(rng, "a", 900)))
    assert _blocks(pg)["gens"] == [0]
    impact, partial = _agree(pg, rng)
    assert impact > 0 and partial > impact // 2  # most searches settle before reading every posting

    # small ingests: each adds a generation, until they are merged into one
    for n in range(1, bm25_blocks.MAX_GENERATIONS + 2):
        pg.upsert(documents_for(_chunks(rng, f"g{n}-", 8)))
    state = _blocks(pg)
    assert state["gens"] == [0, 1] and state["counter"] == 1  # the ninth ingest merged the eight before it
    pg.upsert(documents_for(_chunks(rng, "h", 8)))
    assert _blocks(pg)["gens"] == [0, 1, 2]
    _agree(pg, rng)

    # deleting documents leaves their postings in blocks until a rebuild; searches never return them
    # (900 rows built, 80 added since: 5 more changes stay under the 10% that triggers a rebuild)
    gone = [f"a{i:04d}" for i in range(0, 900, 3)][:5]
    pg.delete(gone)
    assert _blocks(pg)["removed"] == 5
    _agree(pg, rng)
    assert not set(gone) & {c.doc_id for c in pg.chunks()}

    # past REBUILD_SHARE of the corpus changed: everything is built again, the removed postings gone
    pg.upsert(documents_for(_chunks(rng, "z", 200)))
    assert _blocks(pg) == {"gens": [0], "counter": 0, "removed": 0}
    with pg.pool.connection() as conn:
        postings = conn.execute("SELECT sum(length(rows)) / 8 FROM bm25_blocks").fetchone()
        held = conn.execute("SELECT sum(cardinality(terms)) FROM chunk_terms").fetchone()
    assert postings is not None and held is not None and int(postings[0]) == int(held[0])
    _agree(pg, rng)


def test_a_new_tokenizer_or_k1_rebuilds_the_blocks(make_store: Callable[..., PgStore], small_blocks: None) -> None:
    rng = random.Random(9)
    pg = make_store()
    pg.upsert(documents_for(_chunks(rng, "a", 300)))
    pg.upsert(documents_for(_chunks(rng, "b", 5)))
    assert _blocks(pg)["gens"] == [0, 1]
    pg.configure_bm25(k1=1.2, b=0.6)
    assert _blocks(pg)["gens"] == [0]
    reference = BM25Searcher(pg.chunks(), k1=1.2, b=0.6)
    searcher = PgBM25Searcher(pg)
    for query in _queries(rng, 20):
        expected = [(c.chunk.id, c.score) for c in reference.search(query, 10, Scope.everything())]
        assert [(c.chunk.id, c.score) for c in searcher.search(query, 10, Scope.everything())] == expected
        assert searcher.last_path == "impact"


def test_a_store_without_blocks_scans(make_store: Callable[..., PgStore]) -> None:
    """A store written before the blocks existed (simulated by clearing them) answers by a scan, exactly."""
    rng = random.Random(2)
    pg = make_store()
    pg.upsert(documents_for(_chunks(rng, "a", 200)))
    with pg.pool.connection() as conn:
        conn.execute("DELETE FROM bm25_blocks")
        conn.execute("UPDATE bm25_stats SET blocks_base_last = NULL")
    reference = BM25Searcher(pg.chunks())
    searcher = PgBM25Searcher(pg)
    for query in _queries(rng, 10):
        expected = [(c.chunk.id, c.score) for c in reference.search(query, 10, Scope.everything())]
        assert [(c.chunk.id, c.score) for c in searcher.search(query, 10, Scope.everything())] == expected
        assert searcher.last_path in ("scan", "")
    pg.upsert(documents_for(_chunks(rng, "b", 3)))  # the next write builds them
    assert _blocks(pg)["gens"] == [0]


def test_blocks_from_the_ingest_equal_blocks_read_back_from_the_database(
    make_store: Callable[..., PgStore], small_blocks: None
) -> None:
    """The first ingest builds blocks from the postings it just wrote; a rebuild reads every posting back
    with COPY. Both give the same blocks, and every stored posting is in exactly one of them."""
    rng = random.Random(4)
    pg = make_store()
    pg.upsert(documents_for(_chunks(rng, "a", 400)))
    query = "SELECT tenant, term_id, max_w, rows, ws FROM bm25_blocks ORDER BY tenant, term_id, max_w DESC, rows"
    with pg.pool.connection() as conn:
        from_ingest = conn.execute(query).fetchall()
        with conn.transaction():
            k1, b, avgdl = conn.execute("SELECT k1, b, encoded_avgdl FROM bm25_stats").fetchone() or (0, 0, 0)
            assert bm25_blocks.refresh(conn, k1, b, avgdl, full=True) == "rebuilt"
        read_back = conn.execute(query).fetchall()
        postings = conn.execute("SELECT count(*) FROM chunk_terms, unnest(terms)").fetchone()
    assert from_ingest == read_back
    assert postings is not None and sum(len(r[3]) // 8 for r in read_back) == postings[0]
    assert all(len(r[3]) // 8 <= bm25_blocks.BLOCK_SIZE for r in read_back)
