"""The scale benchmark's corpus generator: deterministic, realistic metadata, one chunk per section."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bench.corpus_gen import DerivedVectors, generate, load_sources
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from tests.support.paths import SCIFACT

pytestmark = pytest.mark.skipif(not (SCIFACT / "corpus.jsonl.gz").is_file(), reason="needs shared/datasets/scifact")


@pytest.fixture(scope="module")
def sources():  # noqa: ANN201
    return load_sources(SCIFACT)


def test_same_arguments_give_the_same_files(sources, tmp_path: Path) -> None:  # noqa: ANN001
    generate(tmp_path / "a", sources, 30)
    generate(tmp_path / "b", sources, 30)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.md"))
    assert len(files_a) == 30
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_generated_store_has_the_promised_metadata_spread(sources, tmp_path: Path) -> None:  # noqa: ANN001
    generate(tmp_path / "docs", sources, 200)
    with Store(tmp_path / "store") as store:
        report = ingest_folder(store, tmp_path / "docs", ChunkingConfig())
        chunks = store.chunks()
    assert report.n_documents == 200 and not report.failed
    assert 10 * 200 <= len(chunks) <= 20 * 200  # ten sections a document, a long one split in two
    tenants = Counter(c.metadata.tenant for c in chunks)
    assert len(tenants) == 10 and all(0.06 < n / len(chunks) < 0.14 for n in tenants.values())
    status = Counter(c.metadata.status for c in chunks)
    assert 0.7 < status["current"] / len(chunks) < 0.95 and status["superseded"] > 0
    assert {c.metadata.audience for c in chunks} == {"public", "staff"}


def test_derived_vectors_are_unit_length_repeatable_and_near_their_source(sources, tmp_path: Path) -> None:  # noqa: ANN001
    generate(tmp_path / "docs", sources, 5)
    with Store(tmp_path / "store") as store:
        ingest_folder(store, tmp_path / "docs", ChunkingConfig())
        chunks = store.chunks()
    rng = np.random.default_rng(1)
    bases = {}
    for s in sources:
        v = rng.normal(size=16).astype(np.float32)
        bases[s.title] = v / np.linalg.norm(v)
    vectors = DerivedVectors(bases)(chunks)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors, DerivedVectors(bases)(chunks))
    section_chunks = [
        (n, c) for n, c in enumerate(chunks) if c.location.heading_path[-1:] and c.location.heading_path[-1] in bases
    ]
    assert section_chunks
    for n, c in section_chunks:
        assert float(vectors[n] @ bases[c.location.heading_path[-1]]) > 0.6
