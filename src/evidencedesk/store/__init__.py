"""Storage: the contract every store implements, and the embedded store (one SQLite database in a folder)."""

from evidencedesk.errors import StoreError
from evidencedesk.store.contract import (
    DocumentStore,
    HoldsSnapshots,
    HoldsVectors,
    RecordStore,
    SearchesInside,
    SnapshotStore,
    StoreProtocol,
)
from evidencedesk.store.records import Build, IngestReport
from evidencedesk.store.schema import DB_NAME, SCHEMA_VERSION
from evidencedesk.store.store import DEFAULT_STORE, Store

__all__ = [
    "DB_NAME",
    "DEFAULT_STORE",
    "SCHEMA_VERSION",
    "Build",
    "DocumentStore",
    "HoldsSnapshots",
    "HoldsVectors",
    "IngestReport",
    "RecordStore",
    "SearchesInside",
    "SnapshotStore",
    "Store",
    "StoreError",
    "StoreProtocol",
]
