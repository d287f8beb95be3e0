"""The filter guarantee: no chunk outside the default scope comes back, and k come back whenever k allowed match.

Runs every labelled question of the example corpus plus attack queries aimed at staff, superseded,
draft and out-of-date text, through every searcher at k = 1, 3, 5, 10. The expected count is
computed independently of the searcher: allowed chunks sharing a term with the query (BM25,
TF-IDF), or allowed chunks with a positive cosine (LSA, dense).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import numpy as np
import pytest

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.hybrid import HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, LsaSearcher, TfidfSearcher
from evidencedesk.retrieval.post_filter import post_filter
from evidencedesk.retrieval.scope import Scope
from tests.support.embedders import MemoEmbedder
from tests.support.retrieval import ATTACK_QUERIES, generated_corpus, kestrel_chunks, kestrel_questions

KS = (1, 3, 5, 10)


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Chunk], list[str]]:
    chunks = kestrel_chunks()
    if chunks is None:  # the example corpus is missing: a generated one with every kind of metadata
        chunks = generated_corpus()
        return chunks, ["refund window days", "staff discount code manager", "battery charge", *ATTACK_QUERIES]
    return chunks, kestrel_questions() + ATTACK_QUERIES


def forbidden(c: Chunk) -> bool:
    m = c.metadata
    return m.audience == "staff" or m.status in ("superseded", "draft") or not m.valid_on(date.today())


def test_corpus_holds_every_kind_of_forbidden_chunk(corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, _ = corpus
    kinds = {
        "staff": any(c.metadata.audience == "staff" for c in chunks),
        "superseded": any(c.metadata.status == "superseded" for c in chunks),
        "draft": any(c.metadata.status == "draft" for c in chunks),
        "expired": any(c.metadata.valid_to and c.metadata.valid_to < date.today() for c in chunks),
    }
    assert all(kinds.values()), kinds
    assert np.array_equal(Scope().mask(chunks), np.array([not forbidden(c) for c in chunks]))


def lexical_count(terms: Callable[[str], list[str]]) -> Callable[[object, list[Chunk], str], int]:
    def count(_searcher: object, chunks: list[Chunk], query: str) -> int:
        q = set(terms(query))
        return sum(1 for c in chunks if not forbidden(c) and q & set(terms(c.text)))

    return count


def lsa_count(searcher: LsaSearcher, chunks: list[Chunk], query: str) -> int:
    q = searcher.index.query_vector(query)
    if q is None:
        return 0
    allowed = Scope().mask(chunks)
    return int(((searcher.index.vectors @ q > 0) & allowed).sum())


def dense_count(searcher, chunks: list[Chunk], query: str) -> int:
    scores = searcher.index.scores(searcher.embed_query(query))
    return int(((scores > 0) & Scope().mask(searcher.chunks)).sum())


def _dense(chunks: list[Chunk]):
    return DenseSearcher(chunks, embedder=MemoEmbedder())


def _check(results: list, k: int, expected: int, query: str) -> None:
    leaked = [c.chunk.id for c in results if forbidden(c.chunk)]
    assert not leaked, f"{query!r} returned chunks outside the scope: {leaked}"
    assert len(results) == min(k, expected), f"{query!r} k={k}: {len(results)} results, {expected} allowed match"
    assert [c.rank for c in results] == list(range(1, len(results) + 1))
    assert all(c.score > 0 for c in results)
    assert len({c.chunk.id for c in results}) == len(results)


@pytest.mark.parametrize("method", ["bm25", "tfidf", "lsa"])
def test_single_searchers_never_leak_and_fill_k(method: str, corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, queries = corpus
    if method == "bm25":
        searcher, count = BM25Searcher(chunks), None
        count = lexical_count(searcher.tokenizer.tokenize)
    elif method == "tfidf":
        searcher = TfidfSearcher(chunks)
        count = lexical_count(searcher.analyzer)
    else:
        searcher, count = LsaSearcher(chunks), lsa_count
    for query in queries:
        expected = count(searcher, chunks, query)
        for k in KS:
            _check(searcher.search(query, k), k, expected, query)


def test_hybrid_never_leaks_and_fills_k(corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, queries = corpus
    bm25, lsa = BM25Searcher(chunks), LsaSearcher(chunks)
    hybrid = HybridSearcher([(bm25, 20), (lsa, 20)])
    bm25_count = lexical_count(bm25.tokenizer.tokenize)
    for query in queries:
        pool = {c.chunk.id for leg in hybrid.leg_lists(query, 10) for c in leg}
        assert len(pool) >= min(20, max(bm25_count(bm25, chunks, query), lsa_count(lsa, chunks, query)))
        for k in KS:
            _check(hybrid.search(query, k), k, len(pool), query)


@pytest.mark.slow
def test_dense_and_dense_hybrid_never_leak_and_fill_k(corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, queries = corpus
    dense = _dense(chunks)
    hybrid = HybridSearcher([BM25Searcher(chunks), dense])
    for query in queries:
        expected = dense_count(dense, chunks, query)
        for k in KS:
            _check(dense.search(query, k), k, expected, query)
            fused = hybrid.search(query, k)
            assert not [c for c in fused if forbidden(c.chunk)]
            assert len(fused) == min(k, len({c.chunk.id for leg in hybrid.leg_lists(query, k) for c in leg}))


def test_attack_queries_find_forbidden_text_only_without_a_filter(corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, _ = corpus
    bm25 = BM25Searcher(chunks)
    hits = 0
    for query in ATTACK_QUERIES:
        open_results = bm25.search(query, 3, Scope.everything())
        hits += any(forbidden(c.chunk) for c in open_results)  # the attack does reach forbidden text unfiltered
        assert not any(forbidden(c.chunk) for c in bm25.search(query, 3))
        late = post_filter(bm25, query, 3, Scope())
        assert not any(forbidden(c.chunk) for c in late)
        assert len(late) <= len(bm25.search(query, 3))
    assert hits >= 3


def test_post_filter_returns_fewer_than_k_where_the_pre_filter_fills_it(corpus: tuple[list[Chunk], list[str]]) -> None:
    chunks, _ = corpus
    bm25 = BM25Searcher(chunks)
    short = [q for q in ATTACK_QUERIES if len(post_filter(bm25, q, 3, Scope())) < len(bm25.search(q, 3))]
    assert short, "no attack query showed the post-filter losing results"
