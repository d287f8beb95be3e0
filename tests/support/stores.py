"""Stores for tests: ``each_store`` runs a test once on the embedded store and once on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencedesk.store import Store
from evidencedesk.store.contract import StoreProtocol


@pytest.fixture(params=["sqlite", "postgres"])
def each_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreProtocol]:
    """An empty store of each backend in turn (the PostgreSQL one skips, or fails under CI, without a server)."""
    if request.param == "sqlite":
        with Store(tmp_path / "store") as store:
            yield store
        return
    make_store: Any = request.getfixturevalue("make_store")
    yield make_store()
