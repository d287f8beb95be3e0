"""The filter guarantee against the PostgreSQL backend.

The default scope never returns staff, superseded, draft or out-of-date chunks; k results come
back whenever k allowed chunks match; and with a scope that keeps 1% of a few thousand chunks, the
HNSW walk itself (no exact fallback) still returns k = 10 rows thanks to ``hnsw.iterative_scan``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np
import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgDenseSearcher, PgStore
from evidencedesk.backends.postgres.scope_sql import scope_condition
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.scope import Scope
from tests.support.embedders import RandomEmbedder
from tests.support.postgres import documents_for
from tests.support.retrieval import ATTACK_QUERIES, chunk, kestrel_chunks, kestrel_questions

pytestmark = pytest.mark.integration
KS = (1, 3, 5, 10)


def forbidden(c: Chunk) -> bool:
    m = c.metadata
    return m.audience == "staff" or m.status in ("superseded", "draft") or not m.valid_on(date.today())


def check(results: list[Any], k: int, expected: int, query: str) -> None:
    leaked = [c.chunk.id for c in results if forbidden(c.chunk)]
    assert not leaked, f"{query!r} returned chunks outside the scope: {leaked}"
    assert len(results) == min(k, expected), f"{query!r} k={k}: {len(results)} results, {expected} allowed match"
    assert [c.rank for c in results] == list(range(1, len(results) + 1))
    assert all(c.score > 0 for c in results) and len({c.chunk.id for c in results}) == len(results)


@pytest.fixture(scope="module")
def attack_store(pg_url: str, memo_embedder: Any) -> Any:
    """The example corpus plus two out-of-date chunks (every kind of forbidden chunk), vectors included."""
    import uuid

    from tests.support.postgres import drop_schema

    chunks = kestrel_chunks()
    if chunks is None:
        pytest.skip("the example corpus examples/kestrel/docs is missing")
    store = PgStore(pg_url, schema=f"attack_{uuid.uuid4().hex[:8]}", embedder=memo_embedder)
    store.upsert(documents_for(chunks))
    yield store, chunks
    drop_schema(pg_url, store.schema)
    store.close()


def test_the_corpus_holds_every_kind_of_forbidden_chunk(attack_store: Any) -> None:
    store, chunks = attack_store
    stored = store.chunks()
    assert sorted(c.id for c in stored) == sorted(c.id for c in chunks)
    kinds = {
        "staff": any(c.metadata.audience == "staff" for c in stored),
        "superseded": any(c.metadata.status == "superseded" for c in stored),
        "draft": any(c.metadata.status == "draft" for c in stored),
        "expired": any(c.metadata.valid_to and c.metadata.valid_to < date.today() for c in stored),
        "future": any(c.metadata.valid_from and c.metadata.valid_from > date.today() for c in stored),
    }
    assert all(kinds.values()), kinds


def test_bm25_never_leaks_and_fills_k(attack_store: Any) -> None:
    store, chunks = attack_store
    searcher = PgBM25Searcher(store)
    tokenize = store.encoder.tokenizer.tokenize
    for query in kestrel_questions() + ATTACK_QUERIES:
        terms = set(tokenize(query))
        expected = sum(1 for c in chunks if not forbidden(c) and terms & set(tokenize(c.text)))
        for k in KS:
            check(searcher.search(query, k), k, expected, query)


@pytest.mark.parametrize("mode", ["exact", "hnsw"])
def test_dense_never_leaks_and_fills_k(attack_store: Any, memo_embedder: Any, mode: str) -> None:
    store, chunks = attack_store
    searcher = PgDenseSearcher(store, embedder=memo_embedder, mode=mode)
    vectors = memo_embedder.embed([c.text for c in chunks])
    allowed = np.array([not forbidden(c) for c in chunks])
    for query in kestrel_questions() + ATTACK_QUERIES:
        expected = int(((vectors @ searcher.embed_query(query) > 0) & allowed).sum())
        for k in KS:
            check(searcher.search(query, k), k, expected, query)


def test_attack_queries_reach_forbidden_text_only_without_a_filter(attack_store: Any) -> None:
    store, _ = attack_store
    searcher = PgBM25Searcher(store)
    reached = sum(any(forbidden(c.chunk) for c in searcher.search(q, 3, Scope.everything())) for q in ATTACK_QUERIES)
    assert reached >= 3


def test_the_sql_condition_allows_exactly_what_the_scope_allows(attack_store: Any) -> None:
    store, chunks = attack_store
    scopes = [
        Scope(),
        Scope.everything(),
        Scope(statuses=None, audiences=frozenset({"staff"})),
        Scope(langs=frozenset({"bn"}), valid_at=date(2024, 6, 1)),
        Scope(doc_ids=frozenset({"kc-returns-v2", "kc-expired"}), check_validity=False, statuses=None),
        Scope(tenants=frozenset({"someone else", "100% o'brien"})),
        Scope().narrow(Scope(statuses=frozenset({"draft"}))),  # an empty meet: nothing at all
    ]
    for scope in scopes:
        condition, params = scope_condition(scope)
        with store.pool.connection() as conn:
            query = f"SELECT id FROM chunks WHERE {condition.as_string(conn)}"
            got = {r[0] for r in conn.execute(query.encode(), params).fetchall()}
        assert got == {c.id for c in chunks if scope.allows_chunk(c)}, scope


@pytest.fixture(scope="module")
def tenant_store(pg_url: str) -> Any:
    """3,000 chunks with random unit vectors; tenant "rare" holds 30 of them (1%)."""
    import uuid

    from tests.support.postgres import drop_schema

    rng = random.Random(11)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    chunks = []
    for d in range(1000):
        tenant = "rare" if d % 100 == 7 else "common"
        for n in range(3):
            text = f"doc {d} part {n} " + " ".join(rng.choice(words) for _ in range(8))
            chunks.append(chunk(f"d{d:04d}:c{n}", text, f"d{d:04d}", tenant=tenant))
    store = PgStore(pg_url, schema=f"tenant_{uuid.uuid4().hex[:8]}", embedder=RandomEmbedder())
    store.upsert(documents_for(chunks))
    yield store, chunks
    drop_schema(pg_url, store.schema)
    store.close()


def test_hnsw_with_a_one_percent_filter_still_returns_k(tenant_store: Any) -> None:
    store, chunks = tenant_store
    rare = Scope(tenants=frozenset({"rare"}))
    assert sum(c.metadata.tenant == "rare" for c in chunks) == len(chunks) // 100
    searcher = PgDenseSearcher(store, mode="hnsw", ef_search=40, fallback=False)
    exact = PgDenseSearcher(store, mode="exact")
    for query in [f"query {i}" for i in range(20)]:
        got = searcher.search(query, 10, rare)
        assert searcher.last_path == "hnsw"
        assert len(got) == 10 and all(c.chunk.metadata.tenant == "rare" for c in got)
        truth = [c.chunk.id for c in exact.search(query, 10, rare)]
        assert len({c.chunk.id for c in got} & set(truth)) >= 8
    with store.pool.connection() as conn, conn.transaction():
        conn.execute("SELECT set_config('enable_seqscan', 'off', true)")
        plan = conn.execute(
            "EXPLAIN SELECT chunk_id FROM chunk_vectors WHERE tenant = 'rare' ORDER BY embedding <=> %s LIMIT 10",
            (searcher.embed_query("query 0"),),
        ).fetchall()
    assert "chunk_vectors_hnsw" in " ".join(r[0] for r in plan)


def test_without_iterative_scan_the_same_walk_comes_back_short(tenant_store: Any) -> None:
    store, _ = tenant_store
    q = RandomEmbedder().embed(["query 0"])[0]
    with store.pool.connection() as conn, conn.transaction():
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'off', true), set_config('enable_seqscan', 'off', true)")
        conn.execute("SELECT set_config('hnsw.ef_search', '40', true)")
        rows = conn.execute(
            "SELECT chunk_id FROM chunk_vectors WHERE tenant = 'rare' ORDER BY embedding <=> %s LIMIT 10", (q,)
        ).fetchall()
    assert len(rows) < 10


def test_exact_fallback_fills_k_when_the_walk_is_cut_short(tenant_store: Any) -> None:
    store, _ = tenant_store
    rare = Scope(tenants=frozenset({"rare"}))
    cut = PgDenseSearcher(store, mode="hnsw", ef_search=10, max_scan_tuples=50, fallback=True)
    got = cut.search("query 3", 10, rare)
    assert len(got) == 10 and cut.last_path == "exact-fallback"


def test_searchers_validate_their_arguments(tenant_store: Any) -> None:
    store, _ = tenant_store
    with pytest.raises(ValueError, match="mode"):
        PgDenseSearcher(store, mode="approximate")
    with pytest.raises(ValueError, match="ef_search"):
        PgDenseSearcher(store, ef_search=0)
    with pytest.raises(ValueError, match="k"):
        PgBM25Searcher(store).search("alpha", 0)
    with pytest.raises(ValueError, match="query"):
        PgBM25Searcher(store).search(3, 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="store"):
        PgBM25Searcher("postgresql://x")  # type: ignore[arg-type]
    assert PgBM25Searcher(store).search("   ", 10) == []


def test_a_searcher_refuses_a_store_switched_to_another_model(tenant_store: Any) -> None:
    store, _ = tenant_store
    searcher = PgDenseSearcher(store)
    PgDenseSearcher(store, embedder=RandomEmbedder(dim=16))  # re-embeds the store with another model
    with pytest.raises(ValueError, match="holds vectors of"):
        searcher.search("alpha", 3)
    PgDenseSearcher(store)  # back to the store's original model for the other tests


def test_a_store_opened_without_an_embedder_holds_no_vectors(make_store: Callable[..., PgStore]) -> None:
    store = make_store()
    store.upsert(documents_for([chunk("a:c0", "alpha beta", "a")]))
    assert store.vector_model() is None
    assert [c.chunk.id for c in PgBM25Searcher(store).search("alpha")] == ["a:c0"]
    PgDenseSearcher(store, embedder=RandomEmbedder(8))
    assert store.vector_model() == {"model": "test-random-positive-8", "dim": 8, "contextual": False}
    store.upsert(documents_for([chunk("b:c0", "gamma", "b")]))  # later writes keep the vectors complete
    with store.pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 2
