"""Read replicas: a store reads from a streaming replica and writes to the primary.

The module starts a real streaming replica of the test server (pg_basebackup -R on a second port),
and removes it (server stopped, data directory deleted) when the module ends.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencedesk import Desk
from evidencedesk.backends import open_store
from evidencedesk.backends.postgres import PgBM25Searcher, PgStore, PgStoreError
from evidencedesk.backends.postgres.replicas import split_replicas
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import parse_settings
from evidencedesk.documents import Chunk, Metadata
from evidencedesk.ingest.sync import ingest_folder
from tests.support.cluster import Replica, start_replica
from tests.support.postgres import _unavailable, documents_for, drop_schema

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "kestrel" / "docs"
QUESTIONS = [
    "Can I still send back a bike I bought five weeks ago?",
    "How tight should the stem bolts be on a size M Ridgeline?",
    "goodwill refund store manager discount code",
]


def test_split_replicas_keeps_credentials_database_and_options() -> None:
    primary, replicas = split_replicas("postgresql://u:pw@db1:5432/app?sslmode=disable&replicas=db2:5433,db3")
    assert primary == "postgresql://u:pw@db1:5432/app?sslmode=disable"
    assert replicas == ["postgresql://u:pw@db2:5433/app?sslmode=disable", "postgresql://u:pw@db3/app?sslmode=disable"]
    assert split_replicas("postgresql://u@db1/app") == ("postgresql://u@db1/app", [])
    with pytest.raises(ValueError, match="HOST\\[:PORT\\]"):
        split_replicas("postgresql://u@db1/app?replicas=postgresql://u@db2/app")


def test_a_replica_without_the_store_is_refused(pg_url: str) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with pytest.raises(PgStoreError, match="no store schema"):
        PgStore(pg_url, schema=schema, replicas=[pg_url.replace(pg_url.rsplit("/", 1)[1], "postgres")])
    drop_schema(pg_url, schema)


@pytest.fixture(scope="module")
def replica(pg_url: str) -> Iterator[Replica]:
    try:
        started = start_replica(pg_url)
    except (FileNotFoundError, RuntimeError) as exc:
        _unavailable(f"cannot start a streaming replica ({exc})")
        raise
    yield started
    started.stop()
    assert not started.data.exists()


@pytest.fixture
def pair(pg_url: str, replica: Replica) -> Iterator[tuple[PgStore, PgStore]]:
    """The same store opened on the primary alone, and on the primary with the replica for reads."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    primary = PgStore(pg_url, schema=schema)
    ingest_folder(primary, DOCS, ChunkingConfig())
    port = replica.url.split(":")[-1].split("/")[0]
    primary.wait_for_replicas()  # a store without replicas returns at once
    reading: PgStore | None = None
    try:
        _wait_replayed(pg_url, replica.url)  # a store opens on a replica once it holds the schema
        reading = PgStore(f"{pg_url}?replicas=127.0.0.1:{port}", schema=schema)
        yield primary, reading
    finally:
        if reading is not None:
            reading.close()
        drop_schema(pg_url, schema)
        primary.close()


def _wait_replayed(primary_url: str, replica_url: str, timeout: float = 60.0) -> None:
    from psycopg_pool import ConnectionPool

    from evidencedesk.backends.postgres.replicas import ReadRouter

    one = {"min_size": 1, "max_size": 1}
    with ConnectionPool(primary_url, **one) as p, ConnectionPool(replica_url, **one) as r:
        ReadRouter(p, [r]).wait(timeout)


def _new_document(word: str) -> list[Any]:
    chunk = Chunk(
        id="late:c0", doc_id="late", text=f"The {word} warranty covers carbon frames for ten years.",
        title="Late", source="late.md", metadata=Metadata(audience="public"),
    )  # fmt: skip
    return documents_for([chunk])


def _connected_to(store: PgStore) -> tuple[bool, int]:
    with store.reads.connection() as conn:
        row = conn.execute("SELECT pg_is_in_recovery(), current_setting('port')::int").fetchone()
    assert row is not None
    return bool(row[0]), int(row[1])


def test_searches_go_to_the_replica_and_see_an_ingest_once_replayed(
    pair: tuple[PgStore, PgStore], replica: Replica
) -> None:
    primary, reading = pair
    assert _connected_to(reading) == (True, replica.port)
    assert _connected_to(primary)[0] is False
    on_primary, on_replica = PgBM25Searcher(primary), PgBM25Searcher(reading)
    for q in QUESTIONS:
        assert [(c.chunk.id, c.score) for c in on_replica.search(q, k=5)] == [
            (c.chunk.id, c.score) for c in on_primary.search(q, k=5)
        ]
    word = f"zq{uuid.uuid4().hex[:8]}"
    with reading.reads.connection() as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
    try:
        assert reading.upsert(_new_document(word)) == 1  # the write goes to the primary
        assert [c.chunk.id for c in on_primary.search(word, k=3)] == ["late:c0"]
        assert on_replica.search(word, k=3) == []  # the paused replica has not replayed it
    finally:
        with reading.reads.connection() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
    reading.wait_for_replicas(timeout=60)
    assert [c.chunk.id for c in on_replica.search(word, k=3)] == ["late:c0"]
    assert on_replica.search(word, k=3)[0].score == on_primary.search(word, k=3)[0].score
    # the URL the faces pass to open_store routes the same way
    opened = open_store(f"{primary.url}?replicas=127.0.0.1:{replica.port}", schema=primary.schema)
    try:
        assert isinstance(opened, PgStore) and _connected_to(opened) == (True, replica.port)
        assert [c.chunk.id for c in PgBM25Searcher(opened).search(word, k=3)] == ["late:c0"]
    finally:
        opened.close()
    assert reading.delete(["late"]) == 1
    reading.wait_for_replicas(timeout=60)
    assert on_replica.search(word, k=3) == []


def test_two_desks_over_one_primary_answer_identically(pair: tuple[PgStore, PgStore]) -> None:
    primary, reading = pair
    settings = parse_settings({"retrieval": {"legs": [{"method": "bm25"}]}})
    one, two = Desk(primary, settings=settings), Desk(reading, settings=settings)
    for q in QUESTIONS:
        a = [(c.chunk.id, c.score) for c in one.search(q, k=5)]
        assert a and a == [(c.chunk.id, c.score) for c in two.search(q, k=5)], q
        x, y = one.ask(q, save=False), two.ask(q, save=False)
        assert (x.answer, x.citations, x.context) == (y.answer, y.citations, y.context), q
