"""The storage contract (``evidencedesk.testing.store_contract``) on the embedded store.

The same mixins run on PostgreSQL in ``tests/backends/test_pg_contract.py``; a third backend runs
them the same way (docs/bring-your-own.md). ``mypy --strict`` (``make typecheck``) checks
``embedded_as_contract``: the store must be assignable to every protocol it claims, so a method that
drifts from the contract fails the type check.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencedesk.store import Store
from evidencedesk.store.contract import DocumentStore, RecordStore, SnapshotStore, StoreProtocol
from evidencedesk.testing import RecordStoreContract, StoreContract


def embedded_as_contract(store: Store) -> tuple[DocumentStore, RecordStore, StoreProtocol, SnapshotStore]:
    """The embedded store as each protocol it implements."""
    return store, store, store, store


class TestEmbeddedStore(StoreContract, RecordStoreContract):
    capabilities = frozenset({"HoldsSnapshots"})

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        with Store(tmp_path / "store") as store:
            yield store

    def test_its_snapshot_lives_in_the_store_folder(self, store: Store, tmp_path: Path) -> None:
        assert store.snapshot_dir == tmp_path / "store" / "snapshot"
        assert len(embedded_as_contract(store)) == 4
