"""The embedded store: documents, chunks, builds, traces and evaluation runs in one SQLite database."""

from evidencedesk.store.records import Build, IngestReport
from evidencedesk.store.schema import DB_NAME, SCHEMA_VERSION, StoreError
from evidencedesk.store.store import DEFAULT_STORE, Store

__all__ = ["DB_NAME", "DEFAULT_STORE", "SCHEMA_VERSION", "Build", "IngestReport", "Store", "StoreError"]
