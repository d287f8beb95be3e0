"""Both backends typed as the storage contract, for the contract tests.

The contract tests (``tests/store/test_store_contract.py`` for documents, chunks and builds,
``tests/store/test_record_store_contract.py`` for traces and evaluation runs) run every test on
each backend through the ``each_store`` fixture (``tests/support/stores.py``): a fresh embedded
store, and a fresh PostgreSQL store in a schema of its own when a server is reachable (see
``tests/support/postgres.py``; without one that half is skipped, or fails under CI).

``mypy --strict`` (``make typecheck``) checks the functions below: each backend must be assignable
to the protocols it claims, so a method that drifts from the contract fails the type check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidencedesk.store import Store
from evidencedesk.store.contract import DocumentStore, RecordStore, SnapshotStore, StoreProtocol

if TYPE_CHECKING:
    from evidencedesk.backends.postgres import PgStore


def embedded_as_contract(store: Store) -> tuple[DocumentStore, RecordStore, StoreProtocol, SnapshotStore]:
    """The embedded store as each protocol it implements."""
    return store, store, store, store


def postgres_as_contract(store: PgStore) -> tuple[DocumentStore, RecordStore, StoreProtocol]:
    """The PostgreSQL store as each protocol it implements."""
    return store, store, store
