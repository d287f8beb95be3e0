"""Parity: on the example corpus, both backends return the same top 10 for every labelled question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgDenseSearcher
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope

pytestmark = pytest.mark.integration
LABELS = Path(__file__).resolve().parents[2] / "examples" / "kestrel" / "labels.jsonl"
SCOPES = {"default": None, "everything": Scope.everything(), "bangla": Scope(langs=frozenset({"bn"}))}


def questions() -> list[str]:
    if not LABELS.is_file():
        pytest.skip("examples/kestrel/labels.jsonl is missing")
    lines = LABELS.read_text(encoding="utf-8").splitlines()
    out = [json.loads(line)["question"] for line in lines if line.strip()]
    assert len(out) >= 10
    return out


def same_top(expected: list[Candidate], got: list[Candidate], query: str, tol: float) -> None:
    assert [c.chunk.id for c in got] == [c.chunk.id for c in expected], query
    for e, g in zip(expected, got, strict=True):
        assert g.score == pytest.approx(e.score, abs=tol), (query, e.chunk.id)
        assert g.rank == e.rank and g.source == e.source
        assert g.chunk == e.chunk  # text, location, metadata, title and source path all come back the same


def test_both_backends_hold_the_same_chunks(kestrel: Any) -> None:
    embedded, pg, _ = kestrel
    assert pg.chunks() == embedded.chunks()
    assert len(pg.chunks()) > 50


@pytest.mark.parametrize("scope", SCOPES)
def test_bm25_top10_equal_on_every_labelled_question(kestrel: Any, scope: str) -> None:
    embedded, pg, _ = kestrel
    reference = BM25Searcher(embedded.chunks())
    # candidates from the impact-ordered postings, or always from a scan
    by_index, by_scan = PgBM25Searcher(pg), PgBM25Searcher(pg, plan="scan")
    assert by_index.identity() == reference.identity()
    nonempty = 0
    for q in questions():
        expected = reference.search(q, 10, SCOPES[scope])
        nonempty += bool(expected)
        same_top(expected, by_index.search(q, 10, SCOPES[scope]), q, 1e-9)
        same_top(expected, by_scan.search(q, 10, SCOPES[scope]), q, 1e-9)
        assert (by_index.last_path, by_scan.last_path) == ("impact", "scan") or not expected
    assert nonempty >= 5


def test_contextual_text_ranks_the_same_in_both_backends(kestrel: Any, memo_embedder: Any) -> None:
    """Indexing each chunk after its title > heading path line: the same terms, vectors and top 10."""
    embedded, pg, cache = kestrel
    pg.configure_bm25(contextual=True)
    try:
        reference = BM25Searcher(embedded.chunks(), contextual=True)
        searcher = PgBM25Searcher(pg)
        assert searcher.identity() == reference.identity() and reference.identity()["contextual"] is True
        assert BM25Searcher(embedded.chunks()).identity() != reference.identity()
        dense_ref = DenseSearcher(embedded.chunks(), embedder=memo_embedder, cache_path=cache, contextual=True)
        dense = PgDenseSearcher(pg, embedder=memo_embedder, mode="exact", contextual=True)
        changed = 0
        for q in questions():
            same_top(reference.search(q, 10), searcher.search(q, 10), q, 1e-9)
            same_top(dense_ref.search(q, 10), dense.search(q, 10), q, 1e-5)
            plain = [c.chunk.id for c in BM25Searcher(embedded.chunks()).search(q, 10)]
            changed += plain != [c.chunk.id for c in reference.search(q, 10)]
        assert changed > 0  # the context line is really indexed
        dense_ref.close()
    finally:
        pg.configure_bm25(contextual=False)
        PgDenseSearcher(pg, embedder=memo_embedder, mode="exact")  # back to the vectors of the plain text


@pytest.mark.parametrize("scope", SCOPES)
def test_exact_dense_top10_equal_on_every_labelled_question(kestrel: Any, memo_embedder: Any, scope: str) -> None:
    embedded, pg, cache = kestrel
    reference = DenseSearcher(embedded.chunks(), embedder=memo_embedder, cache_path=cache)
    searcher = PgDenseSearcher(pg, embedder=memo_embedder, mode="exact")
    for q in questions():
        same_top(reference.search(q, 10, SCOPES[scope]), searcher.search(q, 10, SCOPES[scope]), q, 1e-5)
    reference.close()


def test_hnsw_agrees_with_exact_search_on_the_example_corpus(kestrel: Any, memo_embedder: Any) -> None:
    _, pg, _ = kestrel
    exact = PgDenseSearcher(pg, embedder=memo_embedder, mode="exact")
    hnsw = PgDenseSearcher(pg, embedder=memo_embedder, mode="hnsw", fallback=False)
    found = total = 0
    for q in questions():
        truth = {c.chunk.id for c in exact.search(q, 10)}
        got = hnsw.search(q, 10)
        assert hnsw.last_path == "hnsw"
        found += len(truth & {c.chunk.id for c in got})
        total += len(truth)
    assert found / total >= 0.95


@pytest.mark.parametrize("scope", SCOPES)
def test_bm25_impact_reads_keep_the_top_k_exact_at_every_k(kestrel: Any, scope: str) -> None:
    """The threshold algorithm over impact-ordered blocks: exact at k from 1 to 50, and for most
    questions it settles after reading only part of the postings."""
    embedded, pg, _ = kestrel
    reference = BM25Searcher(embedded.chunks())
    searcher = PgBM25Searcher(pg)
    partial = 0
    for k in (1, 3, 10, 50):
        for q in questions():
            same_top(reference.search(q, k, SCOPES[scope]), searcher.search(q, k, SCOPES[scope]), q, 1e-9)
            assert searcher.last_path == "impact"
            partial += searcher.impact.rounds == 1
    assert partial > 0
