"""Desk over PostgreSQL answers like Desk over the embedded store (same chunks, same BM25 ranking)."""

from pathlib import Path
from typing import Any

from evidencedesk import Desk
from evidencedesk.config import parse_settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "kestrel" / "docs"
QUESTIONS = [
    "Can I still send back a bike I bought five weeks ago?",
    "How tight should the stem bolts be on a size M Ridgeline?",
    "goodwill refund store manager discount code",
]


def test_desk_on_postgres_matches_the_embedded_store(make_store: Any, tmp_path: Path) -> None:
    settings = parse_settings({"retrieval": {"legs": [{"method": "bm25", "stem": False, "stopwords": None}]}})
    pg = Desk(make_store(contextual=True), settings=settings)  # a store object keeps its own BM25 settings
    embedded = Desk(tmp_path / "store", settings=settings)
    assert pg.is_postgres and not embedded.is_postgres
    pg.ingest(DOCS)
    embedded.ingest(DOCS)
    assert [c.id for c in pg.chunks()] == [c.id for c in embedded.chunks()]
    for q in QUESTIONS:
        a = [(c.chunk.id, round(c.score, 6)) for c in pg.search(q, k=5)]
        b = [(c.chunk.id, round(c.score, 6)) for c in embedded.search(q, k=5)]
        assert a == b, q
        assert all(c.chunk.metadata.audience == "public" for c in pg.search(q, k=5))
    out = pg.ask(QUESTIONS[1])
    assert set(out.citations) <= set(out.context)
    embedded.close()
