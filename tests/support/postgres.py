"""PostgreSQL for the tests: the server's URL, stores in throwaway schemas, the example corpus on both backends.

The tests need a PostgreSQL server with pgvector at ``EVIDENCEDESK_PG_URL`` (default: the one
``scripts/start-postgres.sh`` starts). Without one they are skipped with a message, except when
``CI`` is set: CI starts the server, so a missing one is a failure there. Every store lives in a
schema of its own, dropped after the test. The fixtures are registered by the root conftest.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from evidencedesk.documents import Chunk, Document
from evidencedesk.ingest.sync import ingest_folder
from tests.support.embedders import MemoEmbedder
from tests.support.paths import KESTREL_DOCS, kestrel_available

DEFAULT_URL = "postgresql://postgres@127.0.0.1:55432/evidencedesk_test"
PG_URL = os.environ.get("EVIDENCEDESK_PG_URL", DEFAULT_URL)
START_HINT = "start one with `sudo scripts/start-postgres.sh` or point EVIDENCEDESK_PG_URL at a server with pgvector"

__all__ = ["PG_URL", "documents_for", "drop_schema", "kestrel", "make_store", "memo_embedder", "pg_url"]


def _unavailable(reason: str) -> None:
    message = f"PostgreSQL backend tests need a server: {reason}; {START_HINT}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so the server must be running)", pytrace=False)
    pytest.skip(message)


def documents_for(chunks: Sequence[Chunk]) -> list[tuple[Document, list[Chunk]]]:
    """Group chunks by document and make each a Document carrying its first chunk's metadata."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for doc_id, cs in by_doc.items():
        text = "\n\n".join(c.text for c in cs)
        doc = Document(
            id=doc_id,
            title=cs[0].title or doc_id,
            path=cs[0].source or f"{doc_id}.md",
            format="markdown",
            text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            metadata=cs[0].metadata,
        )
        out.append((doc, cs))
    return out


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The URL of a PostgreSQL server with pgvector (skips without one; fails instead when CI is set)."""
    try:
        import psycopg
    except ImportError as exc:
        _unavailable(f"the psycopg driver is not installed ({exc})")
        raise
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    except psycopg.OperationalError as exc:
        _unavailable(f"none reachable at {PG_URL} ({str(exc).strip().splitlines()[0]})")
        raise
    if row is None:
        _unavailable(f"the server at {PG_URL} has no pgvector extension")
    return PG_URL


@pytest.fixture
def make_store(pg_url: str) -> Iterator[Callable[..., Any]]:
    """``make_store(**options)``: a PgStore in a fresh schema, dropped when the test ends."""
    from evidencedesk.backends.postgres import PgStore

    stores: list[PgStore] = []

    def make(**options: Any) -> PgStore:
        options.setdefault("schema", f"t_{uuid.uuid4().hex[:12]}")
        store = PgStore(pg_url, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        drop_schema(pg_url, store.schema)
        store.close()


@pytest.fixture(scope="session")
def memo_embedder() -> MemoEmbedder:
    return MemoEmbedder()


@pytest.fixture(scope="session")
def kestrel(pg_url: str, memo_embedder: MemoEmbedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The example corpus ingested (default structure chunker) into an embedded Store and a PgStore, with
    embeddings through one cache: ``(embedded_store, pg_store, cache_path)``."""
    from evidencedesk.backends.postgres import PgStore
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.store import Store

    if not kestrel_available():
        pytest.skip(f"the example corpus {KESTREL_DOCS} is missing")
    root = tmp_path_factory.mktemp("kestrel")
    cache = root / "embeddings.sqlite"
    embedded = Store(root / "store")
    ingest_folder(embedded, KESTREL_DOCS, ChunkingConfig())
    pg = PgStore(pg_url, schema=f"kestrel_{uuid.uuid4().hex[:8]}", embedder=memo_embedder, cache_path=cache)
    ingest_folder(pg, KESTREL_DOCS, ChunkingConfig())
    yield embedded, pg, cache
    embedded.close()
    drop_schema(pg_url, pg.schema)
    pg.close()
