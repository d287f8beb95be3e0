"""One pipeline on PostgreSQL: on the example corpus and on three FinanceBench filings, ``search``, ``eval``,
the service's ``/search``, the lab and ``ask``'s first stage rank every labelled question alike (with the
in-database searchers), ``eval --answers`` answers each as ``ask`` does, and ``diagnose`` agrees with it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencedesk.desk import Desk
from tests.support.parity import KESTREL_DOCS, KESTREL_LABELS
from tests.support.pg_database import fresh_database
from tests.support.pipeline_parity import (
    BM25_MMR,
    HYBRID,
    check,
    collect,
    financebench_docs,
    financebench_labels,
    settings_of,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def pg_db_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the test server (its URL), dropped when the test ends."""
    with fresh_database(pg_url, "evd_pipe") as url:
        yield url


def test_every_path_ranks_and_answers_the_example_alike_on_postgres(pg_db_url: str, tmp_path: Path) -> None:
    settings = settings_of(HYBRID)
    with Desk(pg_db_url, settings) as desk:
        desk.ingest(KESTREL_DOCS)
        assert desk.searcher_label().startswith("hybrid(pg-")
    labels = shutil.copyfile(KESTREL_LABELS, tmp_path / "labels.jsonl")
    check(collect(pg_db_url, settings, labels, answer_every=3), settings.retrieval.k, answer_every=3)


def test_every_path_ranks_and_answers_the_filings_alike_on_postgres(pg_db_url: str, tmp_path: Path) -> None:
    docs = financebench_docs(tmp_path / "docs")
    settings = settings_of(BM25_MMR)
    with Desk(pg_db_url, settings) as desk:
        desk.ingest(docs)
        assert desk.searcher_label() == "pg-bm25"
    check(collect(pg_db_url, settings, financebench_labels(tmp_path / "labels.jsonl")), settings.retrieval.k)
