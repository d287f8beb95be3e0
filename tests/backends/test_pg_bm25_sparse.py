"""The BM25 sparse encoder against the embedded BM25 index (no server needed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pgvector", reason="the pgvector package is not installed")

from evidencedesk.backends.postgres.bm25_sparse import SPARSE_DIM, BM25Encoder, QueryTerm  # noqa: E402
from evidencedesk.index.bm25 import BM25Index  # noqa: E402
from evidencedesk.text.tokenizer import Tokenizer  # noqa: E402

TEXTS = [
    "Refunds go back to the original payment method within 5 business days.",
    "Returns are accepted within 30 days of delivery; bikes ridden no more than 20 km.",
    "Store credit only, within 10 business days (superseded).",
    "The battery warranty lasts 2 years or 600 cycles, whichever comes first.",
    "",
    "days days days days refund",
]
QUERIES = ["refund within business days", "battery cycles", "days", "unknown words only", "30 days 20 km"]


def encoder_scores(enc: BM25Encoder, texts: list[str], query: str) -> np.ndarray:
    """Every text's score computed only from what the database stores (tf, dl, df, N)."""
    counts = [enc.counts(t) for t in texts]
    vocab: dict[str, int] = {}
    for c in counts:
        for term in c.tf:
            vocab.setdefault(term, len(vocab) + 1)
    df = {t: sum(1 for c in counts if t in c.tf) for t in vocab}
    n, avgdl = len(texts), sum(c.length for c in counts) / len(texts)
    known = [w for w in enc.query_terms(query) if w in vocab]
    idf = enc.idf(n, [df[w] for w in known])
    terms = [QueryTerm(vocab[w], w, df[w], float(v)) for w, v in zip(known, idf, strict=True)]
    out = []
    for c in counts:
        pairs = sorted((vocab[t], f) for t, f in c.tf.items())
        out.append(enc.score(terms, [p[0] for p in pairs], [p[1] for p in pairs], c.length, avgdl))
    return np.array(out)


@pytest.mark.parametrize(("k1", "b", "tokenizer"), [(1.5, 0.75, Tokenizer()), (0.9, 0.4, Tokenizer(stem=True))])
def test_scores_equal_the_embedded_index_bit_for_bit(k1: float, b: float, tokenizer: Tokenizer) -> None:
    enc = BM25Encoder(tokenizer, k1, b)
    index = BM25Index([tokenizer.tokenize(t) for t in TEXTS], k1=k1, b=b)
    for query in QUERIES:
        expected = index.score_all(tokenizer.tokenize(query))
        assert np.array_equal(encoder_scores(enc, TEXTS, query), expected), query


def test_weights_and_idf_follow_the_formulas() -> None:
    enc = BM25Encoder(k1=1.2, b=0.75)
    # tf 2, a chunk twice the average length: 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 2)) = 4.4 / 4.1
    assert enc.weight(2, 20, 10.0) == pytest.approx(4.4 / 4.1, rel=1e-15)
    assert enc.weight(3, 7, 0.0) == pytest.approx(3 * 2.2 / (3 + 1.2), rel=1e-15)  # no avgdl: no length term
    # N = 10, df = 1: ln(1 + 9.5 / 1.5)
    assert enc.idf(10, [1])[0] == pytest.approx(np.log(1 + 9.5 / 1.5), rel=1e-15)


def test_vectors_use_one_based_term_ids_over_a_fixed_dimension() -> None:
    enc = BM25Encoder()
    doc = enc.doc_vector([3, 7], [1, 2], 3, 3.0)
    assert doc.dimensions() == SPARSE_DIM
    assert doc.indices() == [2, 6]  # pgvector's Python SparseVector counts from 0, its text form from 1
    assert doc.values() == pytest.approx([enc.weight(1, 3, 3.0), enc.weight(2, 3, 3.0)])
    q = enc.query_vector([QueryTerm(7, "x", 1, 0.5), QueryTerm(3, "y", 2, 0.25)])
    assert q.indices() == [2, 6] and q.values() == [0.25, 0.5]


def test_repeated_query_terms_count_once_in_first_seen_order() -> None:
    assert BM25Encoder().query_terms("Days refund days REFUND battery") == ["days", "refund", "battery"]


@pytest.mark.parametrize(("k1", "b", "field"), [(-1, 0.75, "k1"), (float("nan"), 0.75, "k1"), (1.2, 1.5, "b")])
def test_bad_parameters_are_refused(k1: float, b: float, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        BM25Encoder(k1=k1, b=b)
