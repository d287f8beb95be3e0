"""What the Desk's collaborators share: the open store and where it is, the settings in use, the work
folder, one lock, the memory limit, and what is cached for the store's latest build.

Every collaborator holds the same ``DeskState``; a new build (another process's ingest), a written
snapshot or new settings drop the cached searchers, chunks and snapshot for all of them at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidencedesk.config import Overrides, Settings, load_settings
from evidencedesk.documents import Chunk
from evidencedesk.errors import StoreError, TooLargeForMemory
from evidencedesk.progress import Callback
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.contract import HoldsSnapshots, SearchesInside, StoreProtocol
from evidencedesk.urls import redact_url
from evidencedesk.wiring import EMBEDDINGS_FILE, bm25_settings, unwrapped


def close_searcher(searcher: Any) -> None:
    """Close what a searcher (and each leg of a hybrid) holds open: mapped files, database cursors."""
    inner = unwrapped(searcher)
    close = getattr(inner, "close", None)
    if callable(close):
        close()
    for leg, _ in getattr(inner, "legs", []) or []:
        close_searcher(leg)


@dataclass
class BuildCache:
    """What is kept for one build of the store under one set of settings."""

    searchers: dict[tuple[Any, ...], Searcher] = field(default_factory=dict)
    # every chunk, kept only while in-memory searchers need them
    chunks: list[Chunk] | None = None
    # (the snapshot or None, why): whether searches read a memory-mapped snapshot
    snapshot: tuple[Any, str] | None = None

    def clear(self) -> None:
        for searcher in self.searchers.values():
            close_searcher(searcher)
        self.searchers.clear()
        self.chunks = None
        self.snapshot = None


def open_pg(url: str, settings: Settings) -> Any:
    """A PgStore with the configured BM25 settings; a server that cannot be reached (or a missing
    driver) raises StoreError naming the store without its password."""
    try:
        from psycopg import Error as DriverError

        from evidencedesk.backends import open_store
    except ImportError as exc:
        raise StoreError(
            f"cannot open store {redact_url(url)}: the PostgreSQL driver is missing ({exc}); "
            "install evidencedesk[postgres]"
        ) from None
    try:
        return open_store(url, **bm25_settings(settings).as_kwargs())
    except (DriverError, StoreError) as exc:
        lines = str(exc).replace(url, redact_url(url)).strip().splitlines()
        raise StoreError(f"cannot open store {redact_url(url)}: {lines[0] if lines else type(exc).__name__}") from None


class DeskState:
    """The store, its location and kind, the settings, the work folder and the per-build cache."""

    def __init__(self, store: StoreProtocol, location: str, is_postgres: bool, path: Path, settings: Settings) -> None:
        self.store = store
        self.location = location
        self.is_postgres = is_postgres
        self.path = path
        self.embeddings_file = path / EMBEDDINGS_FILE  # the embedding cache (PostgreSQL: vectors in the store)
        self.settings = settings
        self.lock = threading.RLock()
        self.cache = BuildCache()
        # None: no limit; otherwise a step holding every chunk in memory over a larger store is refused
        self.max_memory_chunks: int | None = None
        # None: long steps report nothing; otherwise the progress callback of a step a request waits for
        self.step_progress: Callable[[str], Callback] | None = None
        self._build: int | None = None
        self._default_scope: Scope | None = None

    @classmethod
    def open(cls, store: str | Path | Any, settings: Settings | None, work_dir: str | Path | None) -> DeskState:
        """Open ``store`` (a folder, a ``postgresql://`` URL, an opened store or None for the configured one)."""
        from evidencedesk.backends import is_postgres_url, open_store

        chosen = settings if settings is not None else load_settings()
        opened: StoreProtocol
        if store is not None and not isinstance(store, str | Path):  # an already opened store
            opened, location, is_postgres = store, repr(store), isinstance(store, SearchesInside)
        else:
            location = str(store) if store is not None else chosen.store
            is_postgres = is_postgres_url(location)
            opened = open_pg(location, chosen) if is_postgres else open_store(location)
        if isinstance(opened, HoldsSnapshots):
            path = opened.snapshot_dir.parent
        else:
            path = Path(work_dir) if work_dir is not None else Path(".evidencedesk")
        return cls(opened, location, is_postgres, path, chosen)

    def drop_cached(self) -> None:
        with self.lock:
            self.cache.clear()

    def build_id(self) -> int | None:
        current = self.store.latest_build_id()  # one cheap query: a search checks it every time
        with self.lock:
            if current != self._build:
                self.cache.clear()
                self._build = current
        return current

    def reconfigure(self, settings: Settings) -> None:
        with self.lock:
            self.cache.clear()
            self._default_scope = None
            self.settings = settings

    def with_settings(self, overrides: Overrides) -> Settings:
        return overrides.apply(self.settings)

    def scope(self, scope: Scope | Mapping[str, Any] | None = None) -> Scope:
        if scope is None:
            if self._default_scope is None:
                self._default_scope = self.settings.scope.to_scope()
            return self._default_scope
        return Scope.from_dict(dict(scope)) if isinstance(scope, Mapping) else scope

    def check_memory(self, what: str, hint: str) -> None:
        limit = self.max_memory_chunks
        if limit is None:
            return
        if self.store.chunk_count() > limit:
            raise TooLargeForMemory(  # the count stays out: a caller may not see the whole store's size
                f"{what}: would hold every chunk of this store in memory, and it has more than "
                f"max_memory_chunks ({limit:,}); {hint}"
            )

    def tenant_statistics(self) -> bool:
        return bool(self.settings.retrieval.tenant_statistics) and len(self.store.tenants()) > 1


__all__ = ["BuildCache", "DeskState", "close_searcher", "open_pg"]
