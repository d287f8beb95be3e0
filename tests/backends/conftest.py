"""Fixtures for the PostgreSQL backend tests.

The tests need a PostgreSQL server with pgvector at ``EVIDENCEDESK_PG_URL`` (default: the one
``scripts/start-postgres.sh`` starts). Without one they are skipped with a message, except when
``CI`` is set: CI starts the server, so a missing one is a failure there. Every store lives in a
schema of its own, dropped after the test.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))

from pg_helpers import drop_schema  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:55432/evidencedesk_test"
PG_URL = os.environ.get("EVIDENCEDESK_PG_URL", DEFAULT_URL)
START_HINT = "start one with `sudo scripts/start-postgres.sh` or point EVIDENCEDESK_PG_URL at a server with pgvector"


def _unavailable(reason: str) -> None:
    message = f"PostgreSQL backend tests need a server: {reason}; {START_HINT}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so the server must be running)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_url() -> str:
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


class MemoEmbedder:
    """The real default embedder, remembering what it embedded (queries are searched many times)."""

    def __init__(self) -> None:
        from evidencedesk.index.embedders import default_embedder

        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if todo:
            self.seen.update(zip(todo, self.inner.embed(todo, batch_size=batch_size), strict=True))
        return np.array([self.seen[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


@pytest.fixture(scope="session")
def memo_embedder() -> MemoEmbedder:
    return MemoEmbedder()


KESTREL_DOCS = Path(__file__).resolve().parents[2] / "examples" / "kestrel" / "docs"


@pytest.fixture(scope="session")
def kestrel(pg_url: str, memo_embedder: MemoEmbedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The example corpus ingested (default structure chunker) into an embedded Store and a PgStore, with
    embeddings through one cache: ``(embedded_store, pg_store, cache_path)``."""
    from evidencedesk.backends.postgres import PgStore
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.store import Store

    if not KESTREL_DOCS.is_dir() or not any(KESTREL_DOCS.iterdir()):
        pytest.skip("the example corpus examples/kestrel/docs is missing")
    root = tmp_path_factory.mktemp("kestrel")
    cache = root / "embeddings.sqlite"
    embedded = Store(root / "store")
    embedded.ingest(KESTREL_DOCS, ChunkingConfig())
    pg = PgStore(pg_url, schema=f"kestrel_{uuid.uuid4().hex[:8]}", embedder=memo_embedder, cache_path=cache)
    pg.ingest(KESTREL_DOCS, ChunkingConfig())
    yield embedded, pg, cache
    embedded.close()
    drop_schema(pg_url, pg.schema)
    pg.close()
