"""The PostgreSQL + pgvector backend: PgStore and its BM25 and dense searchers."""

from evidencedesk.backends.postgres.bm25_sparse import SPARSE_DIM, BM25Encoder
from evidencedesk.backends.postgres.factory import pg_searcher
from evidencedesk.backends.postgres.schema import DEFAULT_SCHEMA, SCHEMA_VERSION
from evidencedesk.backends.postgres.searchers import DENSE_MODES, PgBM25Searcher, PgDenseSearcher
from evidencedesk.backends.postgres.store import PgStore
from evidencedesk.errors import PgStoreError
from evidencedesk.urls import is_postgres_url

__all__ = [
    "DEFAULT_SCHEMA",
    "DENSE_MODES",
    "SCHEMA_VERSION",
    "SPARSE_DIM",
    "BM25Encoder",
    "PgBM25Searcher",
    "PgDenseSearcher",
    "PgStore",
    "PgStoreError",
    "is_postgres_url",
    "pg_searcher",
]
