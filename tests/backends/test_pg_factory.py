"""pg_searcher: method names to searchers over a PgStore, with the embedded factory's validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgDenseSearcher, PgStore, pg_searcher
from evidencedesk.retrieval.hybrid import HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, TfidfSearcher
from evidencedesk.retrieval.scope import Scope
from tests.support.embedders import RandomEmbedder
from tests.support.postgres import documents_for
from tests.support.retrieval import fare_chunks

pytestmark = pytest.mark.integration


@pytest.fixture
def fares(make_store: Callable[..., PgStore]) -> PgStore:
    store = make_store(embedder=RandomEmbedder(8))
    store.upsert(documents_for(fare_chunks()))
    return store


def test_methods_map_to_database_searchers_or_in_memory_ones(fares: PgStore) -> None:
    assert isinstance(pg_searcher("bm25", fares), PgBM25Searcher)
    dense = pg_searcher("dense", fares, mode="exact")
    assert isinstance(dense, PgDenseSearcher) and dense.mode == "exact"
    assert isinstance(pg_searcher("tfidf", fares), TfidfSearcher)
    hybrid = pg_searcher("hybrid", fares, legs="bm25,dense", leg_params={"dense": {"mode": "exact"}}, depth=5)
    assert isinstance(hybrid, HybridSearcher) and [s.name for s, _ in hybrid.legs] == ["bm25", "dense"]
    results = hybrid.search("checked baggage kg economy", 3, Scope())
    assert results and all(c.chunk.metadata.status == "current" for c in results)


def test_bm25_over_the_fare_rules_equals_the_embedded_searcher(fares: PgStore) -> None:
    reference, searcher = BM25Searcher(fare_chunks()), pg_searcher("bm25", fares)
    for query in ["checked baggage kg economy", "flex fares free", "money back refund", "pets cabin"]:
        for scope in (Scope(), Scope.everything()):
            expected = [(c.chunk.id, c.score) for c in reference.search(query, 6, scope)]
            assert [(c.chunk.id, c.score) for c in searcher.search(query, 6, scope)] == expected


def test_bad_parameters_are_refused(fares: PgStore) -> None:
    with pytest.raises(ValueError, match="belong to the PostgreSQL store"):
        pg_searcher("bm25", fares, k1=1.2)
    with pytest.raises(ValueError, match="unknown parameter"):
        pg_searcher("dense", fares, ann=True)
    with pytest.raises(ValueError, match="unknown method"):
        pg_searcher("magic", fares)
    with pytest.raises(ValueError, match="leg"):
        pg_searcher("hybrid", fares, legs="bm25,bm25")
