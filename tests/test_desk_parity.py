"""The Python API, ``evidencedesk ask/search --json`` and ``POST /ask``/``/search`` agree on the
embedded store: the same ten example questions give the same answers, citations, context and
ranking, and the traces name the searcher that ran (an in-memory index, then the snapshot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidencedesk.config import load_settings
from evidencedesk.desk import Desk
from tests.support.parity import BM25_YAML, KESTREL_DOCS, collect


@pytest.fixture(scope="module")
def kestrel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("parity")
    config = folder / "evidencedesk.yaml"
    config.write_text(BM25_YAML, encoding="utf-8")
    with Desk(folder / "store", load_settings(config)) as desk:
        desk.ingest(KESTREL_DOCS)
    return folder / "store", config


def check(got: dict[str, list]) -> None:
    assert len(got["api"]) == 10
    assert got["api"] == got["cli"] == got["http"]
    assert got["api_s"] == got["cli_s"] == got["http_s"]
    assert any(not a["abstained"] and a["citations"] for a in got["api"])  # answers, not ten abstentions
    assert all(rows for rows in got["api_s"])


def test_three_front_ends_agree_in_memory(kestrel: tuple[Path, Path]) -> None:
    store, config = kestrel
    got = collect(str(store), config, load_settings(config))
    check(got)
    assert {a["searcher"] for a in got["api"]} == {"memory-bm25"}


def test_three_front_ends_agree_over_the_snapshot(kestrel: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    store, config = kestrel
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    settings = load_settings(config)
    with Desk(copy, settings) as desk:
        desk.write_index(dense=False)
    got = collect(str(copy), config, settings)
    check(got)
    assert {a["searcher"] for a in got["http"]} == {"snapshot-bm25"}
