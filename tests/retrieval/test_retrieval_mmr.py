"""Maximal marginal relevance: diversity by text similarity, by vectors or by a given function."""

from __future__ import annotations

import numpy as np
import pytest

from evidencedesk.retrieval.candidates import Candidate, Part, ranked
from evidencedesk.retrieval.mmr import mmr, text_similarity
from tests.support.retrieval import chunk


def cands(items: list[tuple[str, str, float]]) -> list[Candidate]:
    return ranked([(chunk(f"{i}:c0", text), s) for i, text, s in items], "bm25")


DUPES = cands([
    ("a", "checked bag allowance is 23 kg on international economy fares", 3.0),
    ("b", "checked bag allowance is 23 kg on international economy fares", 2.9),
    ("c", "pets up to 8 kg travel in the cabin", 2.0),
    ("d", "seat selection is free on flex fares", 1.0),
])  # fmt: skip


def ids(result: list[Candidate]) -> list[str]:
    return [c.chunk.doc_id for c in result]


def test_lambda_one_keeps_the_relevance_order() -> None:
    assert ids(mmr(DUPES, k=4, lambda_=1.0)) == ["a", "b", "c", "d"]


def test_a_near_duplicate_is_pushed_down() -> None:
    got = mmr(DUPES, k=2, lambda_=0.5)
    assert ids(got) == ["a", "c"]  # b is more relevant than c but repeats a
    assert [c.rank for c in got] == [1, 2] and all(c.source == "mmr" for c in got)
    assert got[0].parts == (Part("bm25", 1, 3.0),)
    assert got[0].score == pytest.approx(0.5)  # lambda * normalised relevance 1, nothing picked yet


def test_text_similarity_is_cosine_of_tfidf() -> None:
    sim = text_similarity([c.chunk for c in DUPES])
    assert sim[0, 1] == pytest.approx(1.0) and sim[0, 3] < 0.5
    assert np.allclose(sim, sim.T)
    assert np.array_equal(text_similarity([chunk("x:c0", "..."), chunk("y:c0", "!")]), np.zeros((2, 2)))


def test_vectors_and_query_vector() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [0.7, 0.7]])
    got = mmr(DUPES, k=2, lambda_=0.3, query_vec=np.array([1.0, 0.0]), vectors=vectors)
    assert ids(got) == ["a", "c"]  # b's vector nearly equals a's; c is orthogonal to a
    by_id = {f"{x}:c0": v for x, v in zip("abcd", vectors, strict=True)}
    assert ids(mmr(DUPES, k=2, vectors=by_id)) == ids(mmr(DUPES, k=2, vectors=vectors))


def test_a_given_similarity_function() -> None:
    def same_length(x, y) -> float:
        return 1.0 if len(x.text) == len(y.text) else 0.0

    assert ids(mmr(DUPES, k=2, lambda_=0.3, similarity=same_length)) == ["a", "c"]


def test_edges_and_validation() -> None:
    assert mmr([], k=3) == []
    assert len(mmr(DUPES, k=10)) == 4
    with pytest.raises(ValueError, match="lambda_"):
        mmr(DUPES, lambda_=1.5)
    with pytest.raises(ValueError, match="k"):
        mmr(DUPES, k=0)
    with pytest.raises(ValueError, match="vectors"):
        mmr(DUPES, vectors=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="query_vec"):
        mmr(DUPES, query_vec=np.ones(3))
    with pytest.raises(ValueError, match="vectors"):
        mmr(DUPES, vectors={"a:c0": np.ones(2)})
