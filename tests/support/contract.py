"""A walk through the storage contract that every store must pass."""

from __future__ import annotations

from pathlib import Path

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.store.contract import StoreProtocol


def round_trip(store: StoreProtocol, corpus: Path) -> None:
    """What the core does through the contract alone: ingest, read chunks every way, record a trace and a run."""
    report = store.ingest(corpus, ChunkingConfig())
    assert report.added and not report.failed
    ids = store.chunk_ids()
    assert ids == [c.id for c in store.chunks()]
    assert store.chunk_count() == len(ids) == sum(store.chunk_counts().values())
    assert [c.id for batch in store.iter_chunks(batch=2) for c in batch] == ids
    assert [c.id for c in store.chunks_by_id([ids[-1], "missing", ids[0]])] == [ids[-1], ids[0]]
    first = store.chunk(ids[0])
    assert first is not None and store.document(first.doc_id) is not None
    # headers: every document as documents() has it, without its text and sections
    docs = store.documents()
    headers = store.document_headers()
    assert [d.id for d in headers] == [d.id for d in docs]
    assert all(h.text == "" and h.sections == () for h in headers)
    assert [(h.title, h.path, h.format, h.metadata, h.content_hash, h.first_line) for h in headers] == [
        (d.title, d.path, d.format, d.metadata, d.content_hash, d.first_line) for d in docs
    ]
    assert any(d.text for d in docs)
    latest = store.latest_build()
    assert latest is not None and latest.id == report.build_id and store.builds()[-1] == latest
    store.save_trace("t1", {"query": "hello"})
    assert store.load_trace("t1") == {"query": "hello"} and store.traces(limit=1) == [{"query": "hello"}]
    run_id = store.save_eval_run({"metrics": {"mrr": 0.5}})
    saved = store.load_eval_run(run_id)
    assert saved is not None and saved["build_id"] == latest.id and store.eval_runs()[-1] == saved
