"""Fuzzed files ingested next to a good corpus: the ingest never raises, and the good documents stay as they were."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reliability_fuzz_inputs import GOOD_PDF, broken_pdfs, html_garbage, markdown_docs, random_bytes

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from tests.support.reliability import COUNTS, chunk_sets, time_limit, write_versioned

CONFIGS = [ChunkingConfig(name="structure", size=60), ChunkingConfig(name="fixed", size=40, overlap=10)]
bad_files = st.lists(
    st.one_of(
        st.tuples(st.just(".md"), st.one_of(markdown_docs, random_bytes)),
        st.tuples(st.just(".txt"), random_bytes),
        st.tuples(st.just(".html"), st.one_of(html_garbage.map(str.encode), random_bytes)),
        st.tuples(st.just(".pdf"), st.one_of(broken_pdfs, st.just(GOOD_PDF))),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.name)
def test_bad_files_leave_the_good_documents_untouched(tmp_path: Path, config: ChunkingConfig) -> None:
    folder, store = tmp_path / "docs", tmp_path / "store"
    write_versioned(folder, 1, 5)
    with Store(store) as s:
        ingest_folder(s, folder, config)
    good = chunk_sets(store)
    assert len(good) == 5

    @settings(
        max_examples=40,
        deadline=timedelta(seconds=20),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(files=bad_files)
    def run(files: list[tuple[str, bytes]]) -> None:
        COUNTS["fuzz: hostile files ingested into a live store"] += len(files)
        fuzz = folder / "zz-fuzz"  # sorted after the good files: a clashing id is the fuzzed file's failure
        shutil.rmtree(fuzz, ignore_errors=True)
        fuzz.mkdir()
        for n, (ext, raw) in enumerate(files):
            (fuzz / f"f{n}{ext}").write_bytes(raw)
        with time_limit(60), Store(store) as s:
            report = ingest_folder(s, folder, config, max_bytes=200_000)
        assert {f["path"] for f in report.failed} <= {f"zz-fuzz/f{n}{ext}" for n, (ext, _) in enumerate(files)}
        assert all(f["reason"] for f in report.failed)
        now = chunk_sets(store)
        assert {d: now.get(d) for d in good} == good

    run()
