"""TF-IDF cosine (against scikit-learn) and LSA (rank cap, order independence), with incremental updates."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from evidencedesk.documents import Chunk
from evidencedesk.index.lsa import LsaIndex, capped_rank
from evidencedesk.retrieval.lexical import LsaSearcher, TfidfSearcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text import Tokenizer, token_pattern

EVERYTHING = Scope.everything()
WORDS = [
    "bag",
    "fare",
    "flex",
    "seat",
    "refund",
    "pet",
    "cabin",
    "kg",
    "eur",
    "route",
    "change",
    "fee",
    "ticket",
    "lounge",
    "5",
    "7",
    "x",
]


def make(cid: str, text: str) -> Chunk:
    return Chunk(cid, cid.split(":")[0], text)


def corpus(seed: int, n: int, prefix: str = "d") -> list[Chunk]:
    rng = random.Random(seed)
    return [make(f"{prefix}{i}:c0", " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))) for i in range(n)]


QUERIES = ["bag kg", "flex fare change", "refund ticket eur", "5", "lounge pet cabin route", "unknownword"]


def sklearn_scores(chunks: list[Chunk], query: str, pattern: str) -> dict[str, float]:
    vec = TfidfVectorizer(token_pattern=pattern)
    m = vec.fit_transform([c.text for c in chunks])
    s = (m @ vec.transform([query]).T).toarray().ravel()
    return {c.id: float(v) for c, v in zip(chunks, s, strict=True) if v > 0}


def assert_scores_equal(got: dict[str, float], want: dict[str, float]) -> None:
    assert got.keys() == want.keys()
    assert all(abs(got[k] - want[k]) <= 1e-9 for k in got)


@pytest.mark.parametrize("pattern", [None, r"(?u)\b\w\w+\b"])
def test_tfidf_cosine_equals_scikit_learn(pattern: str | None) -> None:
    chunks = corpus(1, 40)
    s = TfidfSearcher(chunks, token_pattern=pattern)
    for q in QUERIES:
        assert_scores_equal(s.scores(q, EVERYTHING), sklearn_scores(chunks, q, pattern or token_pattern()))


def test_tfidf_keeps_one_character_tokens_by_default() -> None:
    chunks = [make("a:c0", "pets up to 8 kg"), make("b:c0", "bags up to 23 kg")]
    assert [c.chunk.id for c in TfidfSearcher(chunks).search("8")] == ["a:c0"]
    assert TfidfSearcher(chunks, token_pattern=r"(?u)\b\w\w+\b").search("8") == []


def test_tfidf_with_our_tokenizer_as_analyzer() -> None:
    chunks = [make("a:c0", "the router was reset"), make("b:c0", "passwords and settings")]
    stemmed = TfidfSearcher(chunks, tokenizer=Tokenizer(stem=True, stopwords="english"))
    assert [c.chunk.id for c in stemmed.search("routers resetting")] == ["a:c0"]
    assert TfidfSearcher(chunks).search("routers resetting") == []
    assert TfidfSearcher(chunks, tokenizer={"stem": True}).identity()["tokenizer"]["stem"] is True


def test_tfidf_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="token_pattern"):
        TfidfSearcher([], token_pattern="(", tokenizer=None)
    with pytest.raises(ValueError, match="token_pattern"):
        TfidfSearcher([], token_pattern=r"\w+", tokenizer=Tokenizer())


def test_tfidf_updates_equal_a_fresh_fit() -> None:
    s = TfidfSearcher(corpus(2, 30))
    s.add(corpus(3, 10, "n") + [make("z:c0", "lounge lounge lounge")])
    s.add([make("d4:c0", "entirely new words replace this chunk")])  # same id: replaced
    s.remove(["d1", "d2", "z"])
    chunks = list(s.chunks)
    assert sum(c.id == "d4:c0" for c in chunks) == 1
    fresh = TfidfSearcher(chunks)
    for q in QUERIES + ["entirely new", "lounge"]:
        assert_scores_equal(s.scores(q, EVERYTHING), fresh.scores(q, EVERYTHING))
        assert_scores_equal(s.scores(q, EVERYTHING), sklearn_scores(chunks, q, token_pattern()))
    assert s.index.n_terms == fresh.index.n_terms  # terms no chunk holds any more left the vocabulary


def test_lsa_rank_is_capped() -> None:
    assert capped_rank(100, 5, 50) == 4 and capped_rank(100, 500, 20) == 19 and capped_rank(10, 500, 500) == 10
    assert capped_rank(100, 1, 50) == 0
    s = LsaSearcher(corpus(4, 6), rank=100)
    assert s.used_rank == 5
    assert LsaSearcher(corpus(4, 60), rank=3).used_rank == 3
    with pytest.raises(ValueError, match="rank"):
        LsaSearcher([], rank=0)


def test_lsa_tiny_corpora_fall_back_to_tfidf_vectors() -> None:
    one = LsaSearcher([make("a:c0", "flex fare")])
    assert one.used_rank == 0
    assert [c.chunk.id for c in one.search("fare")] == ["a:c0"]
    assert one.search("refund") == []
    assert LsaSearcher([]).search("fare") == []


def test_lsa_returns_only_positive_cosines_in_order() -> None:
    s = LsaSearcher(corpus(5, 50), rank=8)
    for q in QUERIES:
        got = s.search(q, k=50, scope=EVERYTHING)
        assert all(c.score > 0 for c in got)
        assert [c.score for c in got] == sorted((c.score for c in got), reverse=True)
        assert all(c.score <= 1 + 1e-9 for c in got)
    assert s.search("unknownword") == []


def test_lsa_does_not_depend_on_chunk_order_and_updates_equal_a_fresh_build() -> None:
    chunks = corpus(6, 40)
    a = LsaSearcher(chunks, rank=10)
    b = LsaSearcher(chunks[::-1], rank=10)
    for q in QUERIES:
        assert_scores_equal(a.scores(q, EVERYTHING), b.scores(q, EVERYTHING))

    a.add(corpus(7, 8, "n"))
    a.add([make("d3:c0", "seat seat lounge")])
    a.remove(["d5", "n2"])
    fresh = LsaSearcher(list(a.chunks), rank=10)
    for q in QUERIES + ["seat lounge"]:
        assert_scores_equal(a.scores(q, EVERYTHING), fresh.scores(q, EVERYTHING))
        ids = [c.chunk.id for c in a.search(q, 10, EVERYTHING)]
        assert ids == [c.chunk.id for c in fresh.search(q, 10, EVERYTHING)]


def test_lsa_vectors_are_unit_length() -> None:
    s = LsaSearcher(corpus(8, 30), rank=6)
    norms = np.linalg.norm(s.index.vectors, axis=1)
    assert np.allclose(norms[norms > 0], 1.0)


def test_lsa_on_identical_rows_fits_without_warning_and_ranks() -> None:
    """Rows that are all the same have zero total variance; the fit must not warn (warnings are errors)."""
    index = LsaIndex(["alpha beta", "alpha beta", "alpha beta"], ["c", "a", "b"])
    rows, cos = index.scores("alpha")
    assert list(rows) == [0, 1, 2]
    assert np.allclose(cos, 1.0)
