"""A large write goes to PostgreSQL in rounds (the next one tokenised while the server takes the last):
the stored chunks and BM25 answers are those of one write, and a round that fails leaves nothing behind."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore, writer
from evidencedesk.documents import Chunk, Metadata
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from tests.support.postgres import documents_for

pytestmark = pytest.mark.integration
WORDS = ["brake", "chain", "wheel", "saddle", "pedal", "spoke", "rim", "tyre"]
WORDS += ["valve", "gear", "lever", "cable", "hub", "axle", "fork", "frame"]


def _chunks(rng: random.Random, prefix: str, n_docs: int) -> list[Chunk]:
    out = []
    for d in range(n_docs):
        meta = Metadata(tenant=f"t{d % 2}")
        for c in range(rng.randint(1, 4)):
            # plus words of the document's own, more in later documents: the vocabulary grows round by round
            own = [f"{prefix}word{d}x{i}" for i in range(1 + 3 * d)]
            text = " ".join([*rng.choices(WORDS, k=rng.randint(3, 25)), *own])
            out.append(Chunk(id=f"{prefix}{d:03d}:c{c}", doc_id=f"{prefix}{d:03d}", text=text, metadata=meta))
    return out


def test_a_write_in_many_rounds_stores_what_one_round_would(
    make_store: Callable[..., PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(1)
    chunks = _chunks(rng, "a", 60)
    monkeypatch.setattr(writer, "WRITE_BATCH", 7)  # about twenty rounds
    pg = make_store()
    assert pg.upsert(documents_for(chunks)) == len(chunks)

    def key(c: Chunk) -> tuple[str, str, str, Metadata]:
        return c.id, c.doc_id, c.text, c.metadata

    assert sorted(map(key, pg.chunks())) == sorted(map(key, chunks))
    assert len(pg.documents()) == 60
    reference, searcher = BM25Searcher(chunks), PgBM25Searcher(pg)
    for query in ("brake chain", "hub axle fork", "valve", "saddle pedal spoke rim tyre"):
        expected = [(c.chunk.id, c.score) for c in reference.search(query, 10, Scope.everything())]
        assert [(c.chunk.id, c.score) for c in searcher.search(query, 10, Scope.everything())] == expected
        assert searcher.last_path == "impact"
    _counts_agree(pg)
    pg.delete(["a001", "a002"])  # removed by cascade: the trigger subtracts them
    _counts_agree(pg)


def test_a_failing_round_leaves_the_store_as_it_was(
    make_store: Callable[..., PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(2)
    monkeypatch.setattr(writer, "WRITE_BATCH", 5)
    pg = make_store()
    first = _chunks(rng, "a", 10)
    pg.upsert(documents_for(first))
    before = sorted(c.id for c in pg.chunks())
    more = _chunks(rng, "b", 30)
    last = more[-1]
    # PostgreSQL text cannot hold NUL: the last round's COPY fails on the server thread
    more[-1] = Chunk(id=last.id, doc_id=last.doc_id, text="brake\x00chain", metadata=last.metadata)
    with pytest.raises(Exception, match="NUL|0x00"):
        pg.upsert(documents_for(more))
    assert sorted(c.id for c in pg.chunks()) == before
    with pg.pool.connection() as conn:
        row = conn.execute("SELECT n_chunks FROM bm25_stats").fetchone()
    assert row is not None and row[0] == len(before)
    pg.upsert(documents_for(more[:-1]))  # the store takes writes again afterwards
    assert len(pg.chunks()) == len(before) + len(more) - 1
    _counts_agree(pg)


def _counts_agree(pg: PgStore) -> None:
    """vocab.df and bm25_stats equal what chunk_terms holds."""
    with pg.pool.connection() as conn:
        wrong = conn.execute(
            "SELECT v.term, v.df, count(c.row_id) FROM vocab v LEFT JOIN chunk_terms c ON v.id = ANY(c.terms)"
            " GROUP BY v.term, v.df HAVING v.df <> count(c.row_id)"
        ).fetchall()
        stats = conn.execute(
            "SELECT s.n_chunks = t.n AND s.total_length = t.len FROM bm25_stats s,"
            " (SELECT count(*) AS n, coalesce(sum(dl), 0) AS len FROM chunk_terms) AS t"
        ).fetchone()
    assert wrong == [] and stats == (True,)
