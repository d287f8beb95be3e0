"""make_searcher: method names, parameters, hybrid legs and clear errors."""

from __future__ import annotations

import pytest

from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.factory import METHODS, make_searcher
from evidencedesk.retrieval.hybrid import HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, LsaSearcher, TfidfSearcher
from tests.support.retrieval import fare_chunks


@pytest.mark.parametrize(("method", "cls"), [("bm25", BM25Searcher), ("tfidf", TfidfSearcher), ("lsa", LsaSearcher)])
def test_lexical_methods(method: str, cls: type) -> None:
    s = make_searcher(method, fare_chunks())
    assert isinstance(s, cls) and isinstance(s, Searcher) and s.name == method
    assert s.search("flex fares", 2)


def test_parameters_reach_the_searcher() -> None:
    s = make_searcher("bm25", fare_chunks(), k1=0.9, b=0.4, stem=True, stopwords="english")
    assert (s.k1, s.b) == (0.9, 0.4)
    assert s.tokenizer.stem and s.tokenizer.stopwords == "english"
    assert make_searcher("lsa", fare_chunks(), rank=3).used_rank == 3
    assert make_searcher("tfidf", fare_chunks(), token_pattern=r"(?u)\b\w\w+\b").search("8") == []


def test_hybrid_legs_and_params() -> None:
    s = make_searcher("hybrid", fare_chunks(), legs="bm25,lsa", rrf_k=10, depth=4, leg_params={"lsa": {"rank": 2}})
    assert isinstance(s, HybridSearcher)
    assert s.leg_names == ["bm25", "lsa"] and s.rrf_k == 10 and [d for _, d in s.legs] == [4, 4]
    assert s.legs[1][0].used_rank == 2
    got = s.search("checked bag kg", 3)
    assert got and {p.source for c in got for p in c.parts} <= {"bm25", "lsa"}
    assert make_searcher("hybrid", fare_chunks(), legs=["tfidf", "bm25"]).leg_names == ["tfidf", "bm25"]


@pytest.mark.parametrize(
    ("method", "params", "match"),
    [
        ("bm42", {}, "bm25, tfidf, lsa, dense, hybrid"),
        ("bm25", {"rank": 3}, "unknown parameter"),
        ("bm25", {"tokenizer": {"stem": True}, "stem": True}, "not both"),
        ("hybrid", {"legs": "bm25,nope"}, "legs"),
        ("hybrid", {"legs": "bm25,bm25"}, "twice"),
        ("hybrid", {"legs": ""}, "legs"),
        ("hybrid", {"legs": "bm25,hybrid"}, "legs"),
        ("hybrid", {"legs": "bm25,lsa", "leg_params": {"dense": {}}}, "leg_params"),
        ("hybrid", {"legs": "bm25,lsa", "colour": "red"}, "unknown parameter"),
    ],
)
def test_errors_name_the_problem(method: str, params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_searcher(method, fare_chunks(), **params)


def test_methods_listed() -> None:
    assert METHODS == ("bm25", "tfidf", "lsa", "dense", "hybrid")


def test_dense_and_default_hybrid() -> None:
    dense = make_searcher("dense", fare_chunks())
    assert dense.name == "dense"
    assert all(c.chunk.metadata.status == "current" for c in dense.search("baggage allowance", 6))
    hybrid = make_searcher("hybrid", fare_chunks())
    assert hybrid.leg_names == ["bm25", "dense"]
    with pytest.raises(ValueError, match="unknown parameter"):
        make_searcher("dense", fare_chunks(), k1=1.2)
