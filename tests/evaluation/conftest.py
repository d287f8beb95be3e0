"""Fixtures for evaluation tests: the bundled Kestrel corpus, its labels and real chunks."""

from __future__ import annotations

import pytest

from evidencedesk.chunking import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.evaluation.labels import Label, load_labels
from evidencedesk.ingest.folder import parse_folder
from tests.support.evaluation import chunk_all
from tests.support.paths import KESTREL_DOCS, KESTREL_LABELS


@pytest.fixture(scope="session")
def documents() -> list[Document]:
    result = parse_folder(KESTREL_DOCS)
    assert result.documents, f"no documents parsed from {KESTREL_DOCS}"
    return result.documents


@pytest.fixture(scope="session")
def labels() -> list[Label]:
    return load_labels(KESTREL_LABELS)


@pytest.fixture(scope="session")
def chunks(documents: list[Document]) -> list[Chunk]:
    return chunk_all(documents, ChunkingConfig())
