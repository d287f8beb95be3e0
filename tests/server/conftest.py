"""Fixtures for the service tests: the Kestrel store, keys with different scopes, and clients."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from tests.support.paths import KESTREL_DOCS
from tests.support.server import make_client


@pytest.fixture(scope="session")
def kestrel_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example corpus ingested once (shared: tests may add traces and runs to it, never documents)."""
    if not KESTREL_DOCS.is_dir() or not any(KESTREL_DOCS.iterdir()):
        pytest.skip(f"example corpus missing: {KESTREL_DOCS}")
    path = tmp_path_factory.mktemp("kestrel-store")
    with Store(path) as db:
        ingest_folder(db, KESTREL_DOCS, ChunkingConfig())
    return path


@pytest.fixture
def store_copy(kestrel_store: Path, tmp_path: Path) -> Path:
    """A private copy of the Kestrel store, for tests that write to it."""
    copy = tmp_path / "store"
    shutil.copytree(kestrel_store, copy)
    return copy


@pytest.fixture(scope="module")
def client(kestrel_store: Path) -> Iterator[TestClient]:
    with make_client(kestrel_store) as c:
        yield c


@pytest.fixture
def client_for() -> Iterator[Callable[..., TestClient]]:
    """``client_for(store, service_settings_dict)``: a started client, closed after the test."""
    opened: list[TestClient] = []

    def factory(store: Path, service: dict[str, Any] | None = None) -> TestClient:
        c = make_client(store, service)
        c.__enter__()
        opened.append(c)
        return c

    yield factory
    for c in opened:
        c.__exit__(None, None, None)
