"""Backups: a store dumped with pg_dump and restored with pg_restore into another database answers the
example questions exactly as the original (search ids and scores, and ask answers).

This runs the commands documented in docs/scale-out.md.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from evidencedesk import Desk
from evidencedesk.backends.postgres import PgStore
from evidencedesk.config import parse_settings
from tests.support.cluster import pg_bin, run
from tests.support.postgres import _unavailable, drop_schema

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "kestrel" / "docs"
LABELS = ROOT / "examples" / "kestrel" / "labels.jsonl"


def _tools() -> tuple[str, str]:
    dump, restore = pg_bin("pg_dump"), pg_bin("pg_restore")
    if dump is None or restore is None:
        _unavailable("pg_dump and pg_restore are not installed (set EVIDENCEDESK_PG_BIN to their folder)")
    assert dump is not None and restore is not None
    return dump, restore


def _answers(desk: Desk, questions: list[str]) -> list[Any]:
    out = []
    for q in questions:
        hits = [(c.chunk.id, c.score) for c in desk.search(q, k=10)]
        asked = desk.ask(q, save=False)
        out.append((q, hits, asked.answer, asked.citations, asked.abstained))
    return out


def test_a_restored_store_answers_the_example_questions_identically(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg
    from psycopg import sql

    dump, restore = _tools()
    monkeypatch.chdir(tmp_path)  # the embedding cache of a PostgreSQL desk lives in ./.evidencedesk
    schema = f"t_{uuid.uuid4().hex[:12]}"
    database = f"evidencedesk_restore_{uuid.uuid4().hex[:8]}"
    restored_url = pg_url.rsplit("/", 1)[0] + "/" + database
    settings = parse_settings({"retrieval": {"legs": [{"method": "bm25"}, {"method": "dense"}]}})
    questions = [json.loads(line)["question"] for line in LABELS.read_text().splitlines() if line.strip()]
    assert len(questions) >= 20

    original = PgStore(pg_url, schema=schema)
    try:
        desk = Desk(original, settings=settings)  # closing the desk would close the store
        desk.ingest(DOCS)
        before = _answers(desk, questions)
        assert sum(1 for _, hits, *_ in before if hits) >= 20
        archive = tmp_path / "store.dump"
        run([dump, "--format=custom", f"--schema={schema}", f"--file={archive}", pg_url])
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        try:
            with psycopg.connect(restored_url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION vector")
            run([restore, "--exit-on-error", "--no-owner", f"--dbname={restored_url}", str(archive)])
            with PgStore(restored_url, schema=schema) as copy, Desk(copy, settings=settings) as desk:
                assert [c.id for c in copy.chunks()] == [c.id for c in original.chunks()]
                assert copy.vector_model() == original.vector_model()
                after = _answers(desk, questions)
        finally:
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
    finally:
        drop_schema(pg_url, schema)
        original.close()
    for b, a in zip(before, after, strict=True):
        assert a == b, b[0]
