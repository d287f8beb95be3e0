"""One pipeline: on the example corpus and on three FinanceBench filings (PDFs), ``search``, ``eval``, the
service's ``/search``, the lab and ``ask``'s first stage rank every labelled question alike, ``eval
--answers`` answers each as ``ask`` does, and ``diagnose`` reports what those answers' traces show.
PostgreSQL runs the same checks in ``tests/backends/test_pipeline_parity_pg.py``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evidencedesk.desk import Desk
from tests.support.parity import KESTREL_DOCS, KESTREL_LABELS
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


def test_every_path_ranks_and_answers_the_example_alike(tmp_path: Path) -> None:
    settings = settings_of(HYBRID)
    labels = shutil.copyfile(KESTREL_LABELS, tmp_path / "labels.jsonl")  # the answered subset is written beside it
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(KESTREL_DOCS)
    got = collect(str(tmp_path / "store"), settings, labels, answer_every=3)
    check(got, settings.retrieval.k, answer_every=3)


def test_every_path_ranks_and_answers_the_filings_alike(tmp_path: Path) -> None:
    docs = financebench_docs(tmp_path / "docs")
    settings = settings_of(BM25_MMR)
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(docs)
    got = collect(str(tmp_path / "store"), settings, financebench_labels(tmp_path / "labels.jsonl"))
    check(got, settings.retrieval.k)
