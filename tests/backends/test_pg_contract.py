"""The PostgreSQL store implements the storage contract and the in-database and vector capabilities."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors, SearchesInside, StoreProtocol
from tests.support.contract import round_trip


def test_pg_store_meets_the_contract(make_store: Callable[..., Any], tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("---\nid: a\n---\n# A\n\n## One\n\nAlpha one.\n\n## Two\n\nAlpha two.\n")
    (folder / "b.md").write_text("---\nid: b\n---\n# B\n\nBeta says hello.\n")
    store: PgStore = make_store()
    contract: StoreProtocol = store
    round_trip(contract, folder)
    assert isinstance(store, SearchesInside) and isinstance(store, HoldsVectors)
    assert not isinstance(store, HoldsSnapshots)
    searcher = store.searcher("bm25")
    assert isinstance(searcher, PgBM25Searcher)
    assert [c.chunk.doc_id for c in searcher.search("beta hello", k=1)] == ["b"]
