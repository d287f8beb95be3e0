"""The spec's worked numbers: BM25 by hand on two documents, and the six fare-rule chunks."""

from __future__ import annotations

import math

import pytest

from evidencedesk.retrieval.explain import explain, shared_words
from evidencedesk.retrieval.lexical import BM25Searcher, TfidfSearcher
from evidencedesk.retrieval.post_filter import post_filter
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer
from tests.support.retrieval import FARE_CHUNKS, FARE_QUERIES, chunk, fare_chunks

# scikit-learn's CountVectorizer keeps words of two or more characters; the hand computation used it.
SKLEARN_WORDS = Tokenizer(min_length=2)
SKLEARN_PATTERN = r"(?u)\b\w\w+\b"
EVERYTHING = Scope.everything()

DOC1 = "Reset the router: hold reset for ten seconds"
DOC2 = "Change the wifi password in the app; the router keeps its settings"


@pytest.fixture
def two_docs() -> BM25Searcher:
    return BM25Searcher([chunk("d1:c0", DOC1), chunk("d2:c0", DOC2)], tokenizer=SKLEARN_WORDS, k1=1.5, b=0.75)


def test_two_document_bm25_scores_match_the_hand_computation(two_docs: BM25Searcher) -> None:
    assert list(two_docs.index.lengths) == [8, 12]
    assert two_docs.index.avgdl == 10
    got = two_docs.search("reset router password", k=5)
    assert [c.chunk.id for c in got] == ["d1:c0", "d2:c0"]
    assert [round(c.score, 3) for c in got] == [1.259, 0.803]
    assert [round(c.score, 4) for c in got] == [1.2586, 0.8032]
    assert [c.rank for c in got] == [1, 2]


def test_two_document_explanation_term_by_term(two_docs: BM25Searcher) -> None:
    doc1 = {t.term: t for t in explain(two_docs, "reset router password", "d1:c0")}
    doc2 = {t.term: t for t in explain(two_docs, "reset router password", "d2:c0")}
    assert doc1["reset"].tf == 2 and doc1["reset"].df == 1
    assert doc1["reset"].idf == pytest.approx(math.log(2), abs=1e-12)
    assert doc1["router"].idf == pytest.approx(math.log(1 + 0.5 / 2.5), abs=1e-12)
    assert round(doc1["reset"].contribution, 3) == 1.058
    assert round(doc1["router"].contribution, 3) == 0.200
    assert doc1["password"].tf == 0 and doc1["password"].contribution == 0
    assert round(doc2["router"].contribution, 3) == 0.167
    assert round(doc2["password"].contribution, 3) == 0.636
    for row, parts in ((0, doc1), (1, doc2)):
        total = sum(t.contribution for t in parts.values())
        assert total == pytest.approx(two_docs.index.score_all(SKLEARN_WORDS.tokenize("reset router password"))[row])
    assert shared_words("Reset the ROUTER password", DOC1) == ["reset", "the", "router"]


def test_explain_rejects_unknown_chunks(two_docs: BM25Searcher) -> None:
    with pytest.raises(ValueError, match="chunk_id"):
        explain(two_docs, "reset", "nope:c0")


def _rank(results: list, gold: str) -> int:
    ids = [c.chunk.doc_id for c in results]
    return ids.index(gold) + 1 if gold in ids else 99


@pytest.mark.parametrize(
    ("searcher", "recall1", "recall3"),
    [
        (lambda cs: TfidfSearcher(cs, token_pattern=SKLEARN_PATTERN), 0.60, 0.80),
        (lambda cs: BM25Searcher(cs, tokenizer=SKLEARN_WORDS), 0.80, 0.80),
    ],
    ids=["tfidf", "bm25"],
)
def test_fare_rule_recall(searcher, recall1: float, recall3: float) -> None:
    s = searcher(fare_chunks())
    ranks = [_rank(s.search(q, k=len(FARE_CHUNKS), scope=EVERYTHING), gold) for q, gold in FARE_QUERIES]
    assert sum(r <= 1 for r in ranks) / len(ranks) == pytest.approx(recall1)
    assert sum(r <= 3 for r in ranks) / len(ranks) == pytest.approx(recall3)


def test_superseded_baggage_rule_leaves_the_top_two_with_the_status_filter() -> None:
    s = BM25Searcher(fare_chunks(), tokenizer=SKLEARN_WORDS)
    query = FARE_QUERIES[0][0]
    unfiltered = [c.chunk.doc_id for c in s.search(query, k=2, scope=EVERYTHING)]
    assert "c2" in unfiltered
    filtered = s.search(query, k=2, scope=Scope(statuses=["current"], audiences=None, check_validity=False))
    assert "c2" not in [c.chunk.doc_id for c in filtered]
    assert len(filtered) == 2 and filtered[0].chunk.doc_id == "c1"
    assert [c.chunk.doc_id for c in s.search(query, k=2)] == [c.chunk.doc_id for c in filtered]  # default scope


def test_post_filter_leaks_nothing_but_loses_results() -> None:
    s = BM25Searcher(fare_chunks(), tokenizer=SKLEARN_WORDS)
    query = FARE_QUERIES[0][0]
    late = post_filter(s, query, 2, Scope())
    early = s.search(query, 2, Scope())
    assert all(c.chunk.metadata.status == "current" for c in late)
    assert len(late) < 2 == len(early)
    assert [c.rank for c in late] == list(range(1, len(late) + 1))
