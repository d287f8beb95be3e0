"""The PostgreSQL store's own capability: it searches its chunks inside the database.

The rest of the storage contract runs on this store, as on the embedded one, in
``tests/store/test_store_contract.py`` and ``tests/store/test_record_store_contract.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidencedesk.backends.postgres import PgBM25Searcher, PgStore
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store.contract import SearchesInside


def test_the_pg_store_ranks_its_own_chunks_with_bm25(make_store: Callable[..., Any], tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("---\nid: a\n---\n# A\n\n## One\n\nAlpha one.\n\n## Two\n\nAlpha two.\n")
    (folder / "b.md").write_text("---\nid: b\n---\n# B\n\nBeta says hello.\n")
    store: PgStore = make_store()
    ingest_folder(store, folder, ChunkingConfig())
    inside: SearchesInside = store
    searcher = inside.searcher("bm25")
    assert isinstance(searcher, PgBM25Searcher)
    assert [c.chunk.doc_id for c in searcher.search("beta hello", k=1)] == ["b"]
