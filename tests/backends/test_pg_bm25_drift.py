"""BM25 weights encoded at a remembered avgdl: an ingest that moves avgdl a little rewrites no stored row,
and searches stay exactly equal to the embedded BM25 (the drift bound makes them read further)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore
from evidencedesk.backends.postgres.bm25_drift import DRIFT, cut_is_exact, drifted, upper_ratio
from evidencedesk.documents import Chunk, Metadata
from evidencedesk.retrieval.lexical import BM25Searcher
from tests.support.postgres import documents_for

WORDS = [
    "frame",
    "brake",
    "chain",
    "wheel",
    "saddle",
    "pedal",
    "spoke",
    "rim",
    "tyre",
    "valve",
    "gear",
    "lever",
    "cable",
    "hub",
    "axle",
    "fork",
]


def test_the_bound_follows_the_formula() -> None:
    assert not drifted(100.0, 100.0 * (1 + DRIFT * 0.9)) and drifted(100.0, 100.0 * (1 + DRIFT * 1.1))
    assert drifted(5.0, None) and drifted(5.0, 0.0)
    assert upper_ratio(110.0, 100.0, 0.75) == pytest.approx(1.1) and upper_ratio(90.0, 100.0, 0.75) == 1.0
    assert upper_ratio(110.0, 100.0, 0.0) == 1.0  # b = 0: weights do not depend on avgdl
    assert cut_is_exact([3.0, 2.0], 2, 1.5, 1.1) and not cut_is_exact([3.0, 2.0], 2, 1.9, 1.1)
    assert not cut_is_exact([3.0], 2, 0.1, 1.0)  # fewer than k rescored rows prove nothing


def _chunks(rng: random.Random, prefix: str, n: int, lengths: tuple[int, int]) -> list[Chunk]:
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(*lengths)))
        out.append(Chunk(id=f"{prefix}{i:03d}:c0", doc_id=f"{prefix}{i:03d}", text=text, metadata=Metadata()))
    return out


def _row_versions(store: PgStore) -> dict[str, str]:
    with store.pool.connection() as conn:
        return {cid: str(xmin) for cid, xmin in conn.execute("SELECT chunk_id, xmin FROM chunk_terms").fetchall()}


def _stats(store: PgStore) -> tuple[float, float]:
    with store.pool.connection() as conn:
        row = conn.execute("SELECT total_length::float8 / n_chunks, encoded_avgdl FROM bm25_stats").fetchone()
    assert row is not None
    return float(row[0]), float(row[1])


def test_a_small_drift_rewrites_nothing_and_ranks_exactly(make_store: Callable[..., PgStore]) -> None:
    rng = random.Random(7)
    pg = make_store()
    first = _chunks(rng, "a", 150, (4, 30))
    pg.upsert(documents_for(first))
    before = _row_versions(pg)
    avgdl, encoded = _stats(pg)
    assert avgdl == encoded
    # longer chunks: the live avgdl rises, but by less than DRIFT
    extra = _chunks(rng, "b", 3, (int(avgdl * 1.4), int(avgdl * 1.5)))
    pg.upsert(documents_for(extra))
    avgdl, still = _stats(pg)
    assert still == encoded and 1.0 < avgdl / encoded < 1 + DRIFT
    after = _row_versions(pg)
    assert {cid: after[cid] for cid in before} == before  # no stored row was rewritten
    reference = BM25Searcher(pg.chunks())
    searcher = PgBM25Searcher(pg, margin=0, plan="scan")
    reads: list[int] = []
    for query in [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(40)]:
        expected = [(c.chunk.id, c.score) for c in reference.search(query, 5)]
        assert [(c.chunk.id, c.score) for c in searcher.search(query, 5)] == expected, query
        reads.append(searcher.last_reads)
    assert max(reads) > 1  # the bound made some searches read past their first k rows


def test_a_large_drift_re_encodes_every_row(make_store: Callable[..., PgStore]) -> None:
    rng = random.Random(11)
    pg = make_store()
    pg.upsert(documents_for(_chunks(rng, "a", 40, (4, 10))))
    before = _row_versions(pg)
    pg.upsert(documents_for(_chunks(rng, "b", 10, (60, 80))))
    avgdl, encoded = _stats(pg)
    assert avgdl == encoded
    after = _row_versions(pg)
    assert all(after[cid] != xmin for cid, xmin in before.items())
    reference: Any = BM25Searcher(pg.chunks())
    searcher = PgBM25Searcher(pg)
    for query in ["brake chain", "wheel", "saddle pedal spoke rim"]:
        assert [(c.chunk.id, c.score) for c in searcher.search(query, 10)] == [
            (c.chunk.id, c.score) for c in reference.search(query, 10)
        ]


def _weight(tf: int, dl: int, avgdl: float, k1: float = 1.5, b: float = 0.75) -> float:
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def test_the_bound_catches_an_order_the_stored_weights_get_wrong(make_store: Callable[..., PgStore]) -> None:
    """Two chunks hold "zeta": a short one once and a long one twice. Lengths are picked so the stored
    weights (encoded before the drift) rank the short one first while the live avgdl ranks the long one
    first; the search must answer with the long one."""
    rng = random.Random(3)
    # 20 chunks of 244 terms in all, then the short chunk (6 terms), then the long one (16 terms)
    base = [
        Chunk(id=f"a{i:02d}:c0", doc_id=f"a{i:02d}", text=" ".join(rng.choice(WORDS) for _ in range(12 + (i < 4))))
        for i in range(20)
    ]
    la, lb = 6, 16
    a0, a1 = (244 + la) / 21, (244 + la + lb) / 22
    assert 1 < a1 / a0 < 1 + DRIFT
    assert _weight(1, la, a0) > _weight(2, lb, a0) and _weight(1, la, a1) < _weight(2, lb, a1)
    short = Chunk(id="short:c0", doc_id="short", text=" ".join(["zeta"] + ["frame"] * (la - 1)), metadata=Metadata())
    long = Chunk(id="long:c0", doc_id="long", text=" ".join(["zeta"] * 2 + ["brake"] * (lb - 2)), metadata=Metadata())
    pg = make_store()
    pg.upsert(documents_for([*base, short]))
    pg.upsert(documents_for([long]))
    expected = [(c.chunk.id, c.score) for c in BM25Searcher(pg.chunks()).search("zeta", 1)]
    assert expected[0][0] == "long:c0"
    searcher = PgBM25Searcher(pg, margin=0, plan="scan")
    assert [(c.chunk.id, c.score) for c in searcher.search("zeta", 1)] == expected
    assert searcher.last_reads == 2


def test_rows_written_by_binary_copy_hold_the_client_encoded_weights(make_store: Callable[..., PgStore]) -> None:
    from datetime import date

    import numpy as np

    rng = random.Random(5)
    chunks = _chunks(rng, "a", 30, (0, 12))  # some chunks have no terms at all
    dated = Metadata(tenant="t1", valid_from=date(2021, 3, 4), valid_to=date(2030, 1, 2))
    chunks.append(Chunk(id="d:c0", doc_id="d", text="brake brake wheel", metadata=dated))
    pg = make_store()
    pg.upsert(documents_for(chunks))
    avgdl, encoded = _stats(pg)
    with pg.pool.connection() as conn:
        rows = conn.execute("SELECT chunk_id, terms, tfs, dl, weights, tenant, valid_from, valid_to FROM chunk_terms")
        stored = {r[0]: r[1:] for r in rows.fetchall()}
        vocab = dict(conn.execute("SELECT id, term FROM vocab").fetchall())
    assert len(stored) == len(chunks)
    for c in chunks:
        terms, tfs, dl, weights, tenant, valid_from, valid_to = stored[c.id]
        counts = pg.encoder.counts(c.text)
        assert dl == counts.length and {vocab[t]: f for t, f in zip(terms, tfs, strict=True)} == dict(counts.tf)
        assert terms == sorted(terms)
        expected = pg.encoder.doc_vector(terms, tfs, dl, encoded)
        assert weights.indices() == expected.indices()
        assert np.array_equal(np.float32(weights.values()), np.float32(expected.values()))
        assert (tenant, valid_from, valid_to) == (c.metadata.tenant, c.metadata.valid_from, c.metadata.valid_to)
