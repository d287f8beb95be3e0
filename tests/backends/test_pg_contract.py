"""The storage contract (``evidencedesk.testing.store_contract``) on the PostgreSQL store, and its own
capability: it searches its chunks inside the database.

The stores come from ``make_store`` (tests/support/postgres.py): each in a schema of its own, dropped
after the test; without a server these tests skip, or fail when ``CI`` is set. ``mypy --strict``
checks ``postgres_as_contract``: the store must be assignable to every protocol it claims.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.store.contract import DocumentStore, RecordStore, SearchesInside, StoreProtocol
from evidencedesk.testing import RecordStoreContract, StoreContract
from evidencedesk.testing.store_contract import text_document


def postgres_as_contract(store: PgStore) -> tuple[DocumentStore, RecordStore, StoreProtocol]:
    """The PostgreSQL store as each protocol it implements."""
    return store, store, store


class TestPgStore(StoreContract, RecordStoreContract):
    capabilities = frozenset({"SearchesInside", "HoldsVectors"})

    @pytest.fixture
    def store(self, make_store: Callable[..., Any]) -> PgStore:
        pg: PgStore = make_store()  # closed and dropped by make_store
        return pg

    def test_it_ranks_its_own_chunks_with_bm25(self, store: PgStore) -> None:
        docs = [text_document("a", "Alpha one.\n\nAlpha two."), text_document("b", "Beta says hello.")]
        postgres_as_contract(store)[0].sync(docs, ChunkingConfig())
        inside: SearchesInside = store
        searcher = inside.searcher("bm25")
        assert isinstance(searcher, PgBM25Searcher)
        assert [c.chunk.doc_id for c in searcher.search("beta hello", k=1)] == ["b"]
