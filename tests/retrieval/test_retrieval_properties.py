"""Property tests: random small corpora with random metadata, random scopes, every lexical searcher."""

from __future__ import annotations

from datetime import date

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencedesk.documents import Chunk, Metadata
from evidencedesk.retrieval.hybrid import HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, LsaSearcher, TfidfSearcher
from evidencedesk.retrieval.rows import RowMasks
from evidencedesk.retrieval.scope import Scope

WORDS = ["bag", "fare", "seat", "refund", "pet", "kg", "5", "ফেরত", "eur", "flex"]
STATUSES = ["current", "superseded", "draft"]
AUDIENCES = ["public", "staff", "partner"]
LANGS = ["en", "bn"]
TENANTS = ["t1", "t2"]
DAYS = [None, date(2020, 1, 1), date(2025, 6, 1), date(2030, 1, 1)]

texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)


@st.composite
def metadata(draw: st.DrawFn) -> Metadata:
    start, end = draw(st.sampled_from(DAYS)), draw(st.sampled_from(DAYS))
    if start and end and end < start:
        start, end = end, start
    return Metadata(
        status=draw(st.sampled_from(STATUSES)),
        audience=draw(st.sampled_from(AUDIENCES)),
        lang=draw(st.sampled_from(LANGS)),
        tenant=draw(st.sampled_from(TENANTS)),
        valid_from=start,
        valid_to=end,
    )


@st.composite
def corpora(draw: st.DrawFn) -> list[Chunk]:
    n = draw(st.integers(1, 14))
    return [Chunk(f"d{i % 5}x{i}:c0", f"d{i % 5}", draw(texts), metadata=draw(metadata())) for i in range(n)]


def subset(values: list[str]) -> st.SearchStrategy[frozenset[str] | None]:
    return st.none() | st.sets(st.sampled_from(values), min_size=1).map(frozenset)


scopes = st.builds(
    Scope,
    statuses=subset(STATUSES),
    audiences=subset(AUDIENCES),
    langs=subset(LANGS),
    tenants=subset(TENANTS),
    doc_ids=subset([f"d{i}" for i in range(5)]),
    valid_at=st.sampled_from([d for d in DAYS if d] + [None]),
    check_validity=st.booleans(),
)
queries = st.lists(st.sampled_from([*WORDS, "zzz", "?!"]), min_size=1, max_size=4).map(" ".join)
ks = st.sampled_from([1, 2, 3, 5, 10])
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(results: list, chunks: list[Chunk], scope: Scope, k: int, expected: int) -> None:
    assert all(scope.allows_chunk(c.chunk) for c in results)
    assert len(results) == min(k, expected)
    assert [c.rank for c in results] == list(range(1, len(results) + 1))
    assert all(a.score >= b.score for a, b in zip(results, results[1:], strict=False))
    assert all(c.score > 0 for c in results)


@SETTINGS
@given(corpora(), scopes)
def test_row_masks_equal_the_scope_contract(chunks: list[Chunk], scope: Scope) -> None:
    masks = RowMasks(chunks)
    assert np.array_equal(masks.mask(scope), scope.mask(chunks))
    assert np.array_equal(masks.mask(scope), scope.mask(chunks))  # cached: still the same


@SETTINGS
@given(corpora(), scopes, queries, ks)
def test_bm25_is_exactly_the_best_allowed_matches(chunks: list[Chunk], scope: Scope, query: str, k: int) -> None:
    s = BM25Searcher(chunks)
    allowed = scope.mask(chunks)
    full = s.index.score_all(s.tokenizer.tokenize(query))
    want = sorted((-full[r], chunks[r].id) for r in range(len(chunks)) if allowed[r] and full[r] > 0)[:k]
    got = s.search(query, k, scope)
    check(got, chunks, scope, k, int((allowed & (full > 0)).sum()))
    assert [c.chunk.id for c in got] == [cid for _, cid in want]
    assert np.allclose([c.score for c in got], [-s_ for s_, _ in want], rtol=0, atol=1e-12)


@SETTINGS
@given(corpora(), scopes, queries, ks)
def test_tfidf_filters_before_ranking(chunks: list[Chunk], scope: Scope, query: str, k: int) -> None:
    s = TfidfSearcher(chunks)
    q = set(s.analyzer(query))
    expected = sum(1 for c in chunks if scope.allows_chunk(c) and q & set(s.analyzer(c.text)))
    check(s.search(query, k, scope), chunks, scope, k, expected)


@SETTINGS
@given(corpora(), scopes, queries, ks)
def test_lsa_and_hybrid_filter_before_ranking(chunks: list[Chunk], scope: Scope, query: str, k: int) -> None:
    bm25, lsa = BM25Searcher(chunks), LsaSearcher(chunks, rank=4)
    allowed = scope.mask(chunks)
    qv = lsa.index.query_vector(query)
    positive = (lsa.index.vectors @ qv > 0) if qv is not None else np.zeros(len(chunks), dtype=bool)
    lsa_hits = lsa.search(query, k, scope)
    check(lsa_hits, chunks, scope, k, int((positive & allowed).sum()))

    hybrid = HybridSearcher([(bm25, 3), (lsa, 3)])
    union = {c.chunk.id for leg in hybrid.leg_lists(query, k, scope) for c in leg}
    check(hybrid.search(query, k, scope), chunks, scope, k, len(union))
