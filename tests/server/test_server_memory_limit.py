"""``max_memory_chunks``: a request that would hold every chunk in memory is refused over a larger store.

The Kestrel store is small, so the limit is set below its size here. BM25 over the snapshot keeps
answering; every step that would build an index from all chunks (or re-chunk them) gets a 413 that
names the limit and what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from evidencedesk.config import Settings
from evidencedesk.desk import Desk
from evidencedesk.store import Store
from tests.support.server import KEYS, STAFF_KEY, headers

QUERY = {"query": "torque for the stem clamp", "k": 5}


def _limited(store: Path, limit: int) -> dict[str, Any]:
    return {**KEYS, "max_memory_chunks": limit}


def _refused(r: Any, *words: str) -> None:
    assert r.status_code == 413, r.text
    detail = r.json()["detail"]
    assert "max_memory_chunks" in detail and all(w in detail for w in words), detail


def test_over_the_limit_in_memory_steps_are_refused_and_the_snapshot_still_answers(
    store_copy: Path, client_for: Callable[..., TestClient]
) -> None:
    with Store(store_copy) as db:
        n_chunks = db.chunk_count()
    c = client_for(store_copy, _limited(store_copy, n_chunks - 1))
    staff = headers(STAFF_KEY)
    # no snapshot yet: BM25 would be built in memory
    r = c.post("/search", json={**QUERY, "method": "bm25"})
    _refused(r, f"max_memory_chunks ({n_chunks - 1:,})", "no snapshot")
    assert str(n_chunks) not in r.json()["detail"]  # the whole store's size is not the caller's to see
    _refused(c.post("/search", json={**QUERY, "method": "tfidf"}), "TF-IDF and LSA")
    _refused(
        c.post("/lab/search", json={**QUERY, "chunker": {"name": "fixed", "size": 60}}, headers=staff),
        "re-chunking in the lab",
    )

    with Desk(store_copy, Settings()) as desk:
        desk.write_index(dense=False)
    c = client_for(store_copy, _limited(store_copy, n_chunks - 1))
    r = c.post("/search", json={**QUERY, "method": "bm25"})
    assert r.status_code == 200 and r.json(), r.text  # read from the snapshot: no chunk list in memory
    assert c.post("/eval", json={"method": "bm25", "k": 5}, headers=staff).status_code == 200
    _refused(c.post("/eval", json={"method": "bm25", "k": 5, "size_series": True}, headers=staff), "size series")
    _refused(c.post("/search", json={**QUERY, "method": "lsa"}), "TF-IDF and LSA")
    _refused(c.post("/search", json={**QUERY, "method": "hybrid", "legs": ["bm25", "tfidf"]}), "TF-IDF and LSA")

    # at the limit itself nothing is refused
    c = client_for(store_copy, _limited(store_copy, n_chunks))
    assert c.post("/search", json={**QUERY, "method": "tfidf"}).status_code == 200
