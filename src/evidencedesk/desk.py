"""Desk: the application core. Every front end (CLI, Python API, HTTP service) calls it.

>>> desk = Desk(".evidencedesk")                        # doctest: +SKIP
>>> desk.ingest("examples/kestrel/docs")                 # doctest: +SKIP
>>> desk.search("stem bolt torque size M", k=3)          # doctest: +SKIP
>>> desk.ask("Can I return a bike after five weeks?")    # doctest: +SKIP

A Desk opens one store (a folder for the embedded SQLite store, or a ``postgresql://`` URL) and
turns its ``Settings`` into objects through ``evidencedesk.wiring``. Searchers are chosen by where
the index lives: inside PostgreSQL (``pg-bm25``, ``pg-dense``), a memory-mapped snapshot that fits
the latest build (``snapshot-bm25``, ``snapshot-dense``), or else an index built in memory from the
stored chunks (``memory-bm25`` ...). Every call checks the store's latest build id (one small
query), so a Desk sees another process's ingest on its next call. A Desk is safe to share between
threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidencedesk import lab
from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.stream import AnswerDelta, AnswerDone, AskEvent, AskStream
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings, load_settings, override
from evidencedesk.constants import METHODS
from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import ConfigError, GenerationError, IngestError, NothingInScope, StoreError, TooLargeForMemory
from evidencedesk.lab import candidate_rows, leg_names, searcher_tokenizer
from evidencedesk.progress import Callback, Meter
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.base import DEFAULT_TRACE_KEEP
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors, SearchesInside, StoreProtocol
from evidencedesk.trace import Finding
from evidencedesk.urls import is_postgres_url, redact_url
from evidencedesk.wiring import (
    EMBEDDINGS_FILE,
    RewriteOptions,
    bm25_settings,
    build_diversity,
    build_generator,
    build_reranker,
    build_rewriter,
    context_options,
    dense_embedder,
    hybrid_legs,
    leg_params,
    pg_searcher_params,
    rerank_spec,
    searcher_label,
    searcher_params,
    unwrapped,
    with_collapse,
)

_IN_MEMORY_ONLY = "TF-IDF and LSA are built in memory only: use bm25, dense or a hybrid of those"
_WRITE_INDEX = "with a snapshot that fits (evidencedesk index), BM25 and dense search read their index from disk"


@dataclass(frozen=True)
class Diagnosis:
    """The first (root-cause) finding of one failing labelled question, and all its findings."""

    question_id: str
    question: str
    findings: tuple[Finding, ...]

    @property
    def root(self) -> Finding:
        return self.findings[0]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.question_id, "question": self.question, "findings": [f.to_dict() for f in self.findings]}


class Serialized:
    """A searcher whose ``search`` runs one call at a time: in-memory and snapshot searchers keep
    small caches (scope masks, restricted postings) that are not built for concurrent writers."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self._lock = threading.Lock()
        self.name = searcher.name

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        with self._lock:
            return self.searcher.search(query, k, scope)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.searcher, name)


class ScopedChunks(Mapping[str, Chunk]):
    """Chunks by id, read from the store on demand, hiding every chunk outside ``scope``.

    Answer validation asks "does this cited id exist?": an id outside the caller's scope does not.
    Only the chunks asked for are read; iterating reads the whole store (diagnosis of a labelled
    question does that).
    """

    def __init__(self, store: StoreProtocol, scope: Scope, known: Sequence[Chunk] = ()) -> None:
        self.store = store
        self.scope = scope
        self._seen: dict[str, Chunk | None] = {c.id: c for c in known if scope.allows_chunk(c)}

    def __getitem__(self, chunk_id: str) -> Chunk:
        if not isinstance(chunk_id, str):
            raise KeyError(chunk_id)
        if chunk_id not in self._seen:
            found = self.store.chunk(chunk_id)
            self._seen[chunk_id] = found if found is not None and self.scope.allows_chunk(found) else None
        hit = self._seen[chunk_id]
        if hit is None:
            raise KeyError(chunk_id)
        return hit

    def _all(self) -> list[Chunk]:
        return [c for c in self.store.chunks() if self.scope.allows_chunk(c)]

    def __iter__(self) -> Iterator[str]:
        return iter([c.id for c in self._all()])

    def __len__(self) -> int:
        return len(self._all())

    def values(self) -> Any:
        return self._all()


def _diagnosis(label: Any, chunks: Mapping[str, Chunk], k: int) -> Callable[[Any], Sequence[Finding]] | None:
    """The labelled question's diagnosis of a finished trace: it reads the chunks inside the scope in
    batches (a ``ScopedChunks`` reads the store's) and keeps those holding the label's gold phrases."""
    if label is None:
        return None
    from evidencedesk.evaluation.evidence import gather_evidence
    from evidencedesk.evaluation.taxonomy import diagnose

    def findings(trace: Any) -> Sequence[Finding]:
        if isinstance(chunks, ScopedChunks):  # the store: read in batches, keep the label's evidence
            indexed = gather_evidence(chunks.store.iter_chunks(), [label], chunks.scope).chunks
        else:  # chunks already in memory (the lab's re-chunked corpus)
            indexed = list(chunks.values())
        return diagnose(label, trace, indexed, k, known_ids=chunks)

    return findings


def _open_pg(url: str, settings: Settings) -> Any:
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
        return open_store(url, **bm25_settings(settings))
    except (DriverError, StoreError) as exc:
        lines = str(exc).replace(url, redact_url(url)).strip().splitlines()
        raise StoreError(f"cannot open store {redact_url(url)}: {lines[0] if lines else type(exc).__name__}") from None


def _close(searcher: Any) -> None:
    inner = unwrapped(searcher)
    close = getattr(inner, "close", None)
    if callable(close):
        close()
    for leg, _ in getattr(inner, "legs", []) or []:
        _close(leg)


class Desk:
    """Open a store and run ingest, search, ask, evaluate, diagnose and compare over it.

    ``store`` is a folder (the embedded SQLite store), a ``postgresql://USER@HOST:PORT/DB`` URL, or
    an already opened store; default: ``settings.store``. ``settings`` default: ``./evidencedesk.yaml``
    or the defaults. ``work_dir`` holds the embedding cache and staged uploads of a PostgreSQL store
    (default ``.evidencedesk``); an embedded store keeps them in its own folder.
    """

    def __init__(
        self,
        store: str | Path | Any = None,
        settings: Settings | None = None,
        *,
        work_dir: str | Path | None = None,
    ) -> None:
        from evidencedesk.backends import is_postgres_url, open_store

        self.settings = settings if settings is not None else load_settings()
        if store is not None and not isinstance(store, str | Path):  # an already opened store
            self.store: StoreProtocol = store
            self.is_postgres = isinstance(store, SearchesInside)
            self.location = repr(store)
        else:
            location = str(store) if store is not None else self.settings.store
            self.is_postgres = is_postgres_url(location)
            self.location = location
            self.store = _open_pg(location, self.settings) if self.is_postgres else open_store(location)
        if isinstance(self.store, HoldsSnapshots):
            self.path = self.store.snapshot_dir.parent
        else:
            self.path = Path(work_dir) if work_dir is not None else Path(".evidencedesk")
        self._lock = threading.RLock()
        self._build: int | None = None
        self._searchers: dict[tuple[Any, ...], Searcher] = {}
        self._chunks: list[Chunk] | None = None
        self._snap: tuple[Any, str] | None = None  # (snapshot or None, why) for self._build
        self._generators: dict[str, Generator] = {}
        self._default_scope: Scope | None = None
        # None: no limit. Otherwise a step that would hold every chunk in memory (an in-memory index,
        # a re-chunking) over a store with more chunks raises TooLargeForMemory (the service sets it)
        self.max_memory_chunks: int | None = None
        # None: long steps report nothing. Otherwise ``step_progress(step)`` gives the progress callback of a
        # step a search or an answer waits for ("embedding chunks": the dense leg's first use); the CLI
        # draws it on stderr
        self.step_progress: Callable[[str], Callback] | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._reset()
        self.store.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _reset(self) -> None:
        for s in self._searchers.values():
            _close(s)
        self._searchers.clear()
        self._chunks = None
        self._snap = None

    def build_id(self) -> int | None:
        """The store's latest build id; when it changed since the last call, cached indexes are dropped."""
        current = self.store.latest_build_id()  # one cheap query: a search checks it every time
        with self._lock:
            if current != self._build:
                self._reset()
                self._build = current
        return current

    def reconfigure(self, settings: Settings) -> None:
        """Use ``settings`` from now on: the searchers, generators and default scope built from the old
        ones are dropped (a PostgreSQL store keeps the BM25 settings it was opened with)."""
        with self._lock:
            self._reset()
            self._generators.clear()
            self._default_scope = None
            self.settings = settings

    def with_settings(self, **changes: Any) -> Settings:
        """The settings with dotted-key overrides applied (``{"context.order": "edges"}``); None keeps a value.

        Raises ConfigError naming the key for a bad value.
        """
        wanted = {k: v for k, v in changes.items() if v is not None}
        return override(self.settings, **wanted) if wanted else self.settings

    # -- ingest ----------------------------------------------------------------------------------
    def ingest(
        self,
        folder: str | Path,
        *,
        max_bytes: int | None = None,
        progress: Callable[[int, int, str], None] | None = None,
        remove_missing: bool = True,
        embed: bool = False,
        embed_progress: Callback | None = None,
        **chunker: Any,
    ) -> Any:
        """Ingest a folder: unchanged files are skipped by hash, changed files re-chunked and (with
        ``remove_missing``) documents whose file is gone removed. ``chunker`` overrides (name=, size=,
        overlap=, unit=) the configured chunker; files over ``max_bytes`` fail. Returns the report.

        ``progress(done, total, path)`` follows the files; with ``embed`` the dense embeddings of every
        chunk are computed now (see :meth:`embed`, followed by ``embed_progress``), so the first dense or
        hybrid query does not pay for them. The report's ``progress`` holds the files' (and the
        embedding's) count, seconds and rate. When the store has a snapshot (see :meth:`write_index`)
        it is brought up to date in the same call, with one new segment; ``progress["index"]`` says
        what was added, deleted and merged (or why the snapshot could not be updated)."""
        from evidencedesk.config import ChunkerSettings
        from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES

        try:
            chunking = ChunkerSettings(**{**self.settings.chunker.model_dump(), **chunker}).to_chunking()
        except ValueError as exc:
            raise ConfigError(f"chunker: {exc}") from None
        limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        if limit < 1:
            raise ConfigError(f"max_bytes: must be at least 1, got {limit}")
        report = self._keep_index(
            lambda: self.store.ingest(
                Path(folder), chunking, max_bytes=limit, progress=progress, remove_missing=remove_missing
            )
        )
        self.build_id()
        if embed:
            report.progress["embedding"] = self.embed(embed_progress)
        return report

    def embed(self, progress: Callback | None = None) -> dict[str, Any]:
        """Compute the dense embeddings of every stored chunk into the embedding cache (PostgreSQL: into the
        store), exactly as the dense leg of a search would; chunks already embedded are not embedded again.

        ``progress(done, total, model)`` follows the chunks embedded now. Returns the embedding's count
        (chunks embedded now), total (chunks stored), seconds and rate."""
        from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
        from evidencedesk.retrieval.contextual import index_text

        embedder = dense_embedder(self.settings)
        meter = Meter(callback=progress)
        contextual = bool(leg_params(self.settings, "dense", self.path / EMBEDDINGS_FILE).get("contextual", False))
        if isinstance(self.store, HoldsVectors):
            meter.update(self.store.ensure_vectors(embedder, self.path / EMBEDDINGS_FILE, contextual=contextual))
            return {**meter.summary(), "total": self.store.chunk_count(), "model": embedder.name}
        chunks = self.chunks()
        with EmbeddingCache(self.path / EMBEDDINGS_FILE) as cache:
            embed_cached(embedder, [index_text(c, contextual) for c in chunks], cache, on_progress=meter.update)
        return {**meter.summary(), "total": len(chunks), "model": embedder.name}

    def chunks(self) -> list[Chunk]:
        """Every stored chunk of the latest build. Kept in memory only while in-memory searchers need
        them (an embedded store without a current snapshot); otherwise read anew on each call."""
        self.build_id()
        with self._lock:
            if self._chunks is not None:
                return self._chunks
        chunks = self.store.chunks()
        if not self.is_postgres and self._snapshot()[0] is None:
            with self._lock:
                self._chunks = chunks
        return chunks

    # -- searchers -------------------------------------------------------------------------------
    def searcher(self, method: str | None = None, legs: Sequence[str] | None = None) -> Searcher:
        """The first-stage searcher for ``method`` (default: what the settings describe); ``legs``
        names a hybrid's legs (default: the configured legs). Cached until the next build."""
        method = self._method(method, legs)
        names = tuple(legs) if legs else None
        self.build_id()
        key = (method, names)
        with self._lock:
            found = self._searchers.get(key)
            if found is None:
                found = with_collapse(self._make_searcher(method, names), self.settings)
                self._searchers[key] = found
            return found

    def _method(self, method: str | None, legs: Sequence[str] | None) -> str:
        """``method`` (default: the configured one), checked, with ``legs`` only for a hybrid."""
        method = method or self.settings.retrieval.method
        if method not in METHODS:
            raise ConfigError(f"method: unknown method {method!r}; choose from {', '.join(METHODS)}")
        if legs is not None and method != "hybrid":
            raise ConfigError("legs: only for method hybrid")
        return method

    def _make_searcher(self, method: str, names: tuple[str, ...] | None) -> Searcher:
        cache = self.path / EMBEDDINGS_FILE
        if isinstance(self.store, SearchesInside):
            leg_names = list(names or hybrid_legs(self.settings)) if method == "hybrid" else [method]
            if "dense" in leg_names and isinstance(self.store, HoldsVectors):
                contextual = bool(leg_params(self.settings, "dense", cache).get("contextual", False))
                self.store.ensure_vectors(dense_embedder(self.settings), cache, contextual=contextual)
            params = pg_searcher_params(self.settings, method, cache, names)
            if method in ("tfidf", "lsa"):  # no database form: built in memory from the chunks
                self.check_memory(f"method {method}", _IN_MEMORY_ONLY)
                params = leg_params(self.settings, method, cache)
            elif method == "hybrid" and {"tfidf", "lsa"} & set(leg_names):
                self.check_memory(f"a hybrid with legs {', '.join(leg_names)}", _IN_MEMORY_ONLY)
            if self.tenant_statistics():
                for leg, extra in [(method, params)] if method != "hybrid" else params["leg_params"].items():
                    if leg != "dense":
                        extra["tenant_statistics"] = True
            return self.store.searcher(method, **params)
        split = self.tenant_statistics()
        mapped = self._snapshot_searcher(method, names, per_tenant=split)
        if mapped is not None:
            return Serialized(mapped)
        from evidencedesk.retrieval.factory import make_searcher

        legs = list(names or hybrid_legs(self.settings)) if method == "hybrid" else [method]
        hint = _IN_MEMORY_ONLY if {"tfidf", "lsa"} & set(legs) else f"{self.snapshot_status()}; {_WRITE_INDEX}"
        self.check_memory(f"method {method}", hint)
        chunks = self.store.chunks()
        self._chunks = chunks
        params = searcher_params(self.settings, method, cache, names)
        if "dense" in legs and self.step_progress is not None:
            self.embed(self.step_progress("embedding chunks"))  # with progress: the searcher finds them cached
        return Serialized(make_searcher(method, chunks, tenant_statistics=split, **params))

    def check_memory(self, what: str, hint: str) -> None:
        """Raise TooLargeForMemory when ``what`` (a step holding every chunk in memory) meets a store with
        more chunks than ``max_memory_chunks``; ``hint`` says what to do instead."""
        limit = self.max_memory_chunks
        if limit is None:
            return
        n = self.store.chunk_count()
        if n > limit:
            raise TooLargeForMemory(  # the count stays out: a caller may not see the whole store's size
                f"{what}: would hold every chunk of this store in memory, and it has more than "
                f"max_memory_chunks ({limit:,}); {hint}"
            )

    def tenant_statistics(self) -> bool:
        """Whether searches use one index per tenant: ``retrieval.tenant_statistics`` is true and the
        store holds several tenants (with one tenant both ways give the same scores). A snapshot then
        scores each tenant's rows with that tenant's statistics (counted from its segments)."""
        return bool(self.settings.retrieval.tenant_statistics) and len(self.store.tenants()) > 1

    # -- memory-mapped snapshot --------------------------------------------------------------------
    def write_index(
        self,
        dense: bool = True,
        ann: bool = True,
        timings: dict[str, float] | None = None,
        *,
        rebuild: bool = False,
        merge: bool = False,
        report: dict[str, Any] | None = None,
    ) -> Path:
        """Save the latest build's index to ``<store>/snapshot``: BM25 with the configured settings,
        and (``dense``) the vectors through the embedding cache plus (``ann``) HNSW graphs.

        A snapshot written with the same settings (and the same ``dense``/``ann`` choice) is brought
        up to date with one new segment for what changed since its build; otherwise, or with
        ``rebuild``, it is written whole as one segment. ``merge`` then merges every segment into one.
        Later searches open it memory-mapped instead of loading every chunk and rebuilding the index,
        and every ingest keeps it up to date. ``report`` (a dict) receives what was done.
        """
        from evidencedesk.retrieval.snapshot_update import merge_snapshot, writer_lock
        from evidencedesk.wiring_snapshot import updatable, update_store_snapshot, write_store_snapshot

        if not isinstance(self.store, HoldsSnapshots):
            raise ConfigError("write_index: a PostgreSQL store keeps its indexes in the database")
        store = self.store
        done: dict[str, Any] = {}
        with writer_lock(store.snapshot_dir):
            manifest, _ = updatable(store, self.settings)
            same = manifest is not None and (manifest.get("dense") is not None) == dense
            same = same and manifest is not None and bool(manifest.get("ann")) == (ann and dense)
            if rebuild or not same:
                embedder = dense_embedder(self.settings) if dense else None
                path = write_store_snapshot(store, self.settings, embedder, self.path / EMBEDDINGS_FILE, ann, timings)
                done["mode"] = "rebuild"
            else:
                done["mode"] = "update"
                done["update"] = update_store_snapshot(
                    store, self.settings, lambda: dense_embedder(self.settings), self.path / EMBEDDINGS_FILE, timings
                )
                path = store.snapshot_dir
            if merge:
                done["merge"] = merge_snapshot(path)
        if report is not None:
            report.update(done)
        with self._lock:
            self._reset()
        return path

    def _keep_index(self, ingest: Callable[[], Any]) -> Any:
        """Run ``ingest`` and, when the store has a snapshot, bring it up to date in the same step:
        readers that see the new build wait for the new segment instead of building an index in memory."""
        from evidencedesk.errors import SnapshotError
        from evidencedesk.retrieval.snapshot import MANIFEST
        from evidencedesk.retrieval.snapshot_update import writer_lock
        from evidencedesk.wiring_snapshot import update_store_snapshot

        if not isinstance(self.store, HoldsSnapshots) or not (self.store.snapshot_dir / MANIFEST).is_file():
            return ingest()
        store = self.store
        with writer_lock(store.snapshot_dir):
            report = ingest()
            started = time.perf_counter()
            try:
                done = update_store_snapshot(
                    store, self.settings, lambda: dense_embedder(self.settings), self.path / EMBEDDINGS_FILE
                )
                report.progress["index"] = {**done, "seconds": round(time.perf_counter() - started, 3)}
            except (SnapshotError, ValueError) as exc:
                report.progress["index"] = {"error": f"snapshot not updated: {exc}"}
        return report

    def snapshot_status(self) -> str:
        """Whether searches use the memory-mapped snapshot, and if not, why."""
        self.build_id()
        return self._snapshot()[1]

    def _snapshot(self) -> tuple[Any, str]:
        if not isinstance(self.store, HoldsSnapshots):
            return None, "PostgreSQL store: searches run in the database"
        store = self.store
        with self._lock:
            if self._snap is None:
                from evidencedesk.wiring_snapshot import snapshot_status

                self._snap = snapshot_status(store, self.settings)
            return self._snap

    def _snapshot_searcher(self, method: str, names: tuple[str, ...] | None, per_tenant: bool) -> Searcher | None:
        snap, _ = self._snapshot()
        if snap is None:
            return None
        from evidencedesk.wiring_snapshot import snapshot_searcher

        legs = names or hybrid_legs(self.settings)
        embedder = lambda: dense_embedder(self.settings)  # noqa: E731
        return snapshot_searcher(snap, self.store, self.settings, method, legs, embedder, per_tenant)

    def searcher_label(self, method: str | None = None, legs: Sequence[str] | None = None) -> str:
        """Where ``method`` ranks now: ``pg-bm25``, ``snapshot-bm25``, ``memory-bm25``, ``hybrid(...)``."""
        return searcher_label(self.searcher(method, legs))

    # -- search ----------------------------------------------------------------------------------
    def scope(self, scope: Scope | Mapping[str, Any] | None = None) -> Scope:
        """``scope`` as a Scope (default: the configured scope)."""
        if scope is None:
            if self._default_scope is None:
                self._default_scope = self.settings.scope.to_scope()
            return self._default_scope
        return Scope.from_dict(dict(scope)) if isinstance(scope, Mapping) else scope

    def search(
        self,
        query: str,
        k: int | None = None,
        method: str | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        legs: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Ranked chunks for ``query`` inside ``scope`` (default: the configured scope); with
        ``retrieval.diversity`` the top ``k`` are picked by MMR from ``retrieval.rerank.candidates``."""
        if not query.strip():
            raise ConfigError("query: must not be empty")
        k = k or self.settings.retrieval.k
        if k < 1:
            raise ConfigError(f"k: must be at least 1, got {k}")
        searcher = self.searcher(method, legs)
        diversify = build_diversity(self.settings)
        if diversify is None:
            return searcher.search(query, k, self.scope(scope))
        pool = searcher.search(query, max(k, self.settings.retrieval.rerank.candidates), self.scope(scope))
        return diversify(pool, k)

    def search_rows(
        self,
        query: str,
        k: int | None = None,
        method: str | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        legs: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """What ``evidencedesk search --json`` prints and ``POST /search`` returns: each result's
        ``Candidate.to_dict()`` plus the query words it holds (``shared_words``)."""
        results = self.search(query, k, method, scope, legs)
        return candidate_rows(results, query, searcher_tokenizer(self.searcher(method, legs)))

    # -- the lab: other chunkings, and what a search hands the generator --------------------------
    def rechunk(self, chunking: ChunkingConfig) -> list[Chunk]:
        """Every stored document chunked with ``chunking`` (held in memory: ``max_memory_chunks`` applies)."""
        self.check_memory("re-chunking in the lab", "search the stored chunks (no chunker)")
        return lab.rechunk(self.store.documents(), chunking)

    def searcher_over(
        self, chunks: Sequence[Chunk], method: str | None = None, legs: Sequence[str] | None = None
    ) -> Searcher:
        """A searcher of ``method`` built in memory over ``chunks`` (e.g. :meth:`rechunk`'s), configured as
        this Desk's searchers are (parameters, hybrid legs, collapsing); not cached."""
        method = self._method(method, legs)
        split = bool(self.settings.retrieval.tenant_statistics)
        made = lab.memory_searcher(self.settings, chunks, method, legs, self.path / EMBEDDINGS_FILE, split)
        return with_collapse(Serialized(made), self.settings)

    def prompt_preview(self, query: str, results: list[Candidate]) -> dict[str, Any]:
        """``{"context", "prompt"}``: the context ``results`` assemble into under ``context.*``, and the
        prompt the generator would be given for ``query`` over it."""
        return lab.prompt_preview(self.settings, query, results)

    @staticmethod
    def shared_words(query: str, text: str, searcher: Searcher | None = None) -> list[str]:
        """The query's words that ``text`` holds, as ``searcher`` (default: the default tokenizer) reads them."""
        return lab.words_shared(query, text, searcher)

    @staticmethod
    def warm_up() -> None:
        """Compile (or load from numba's cache) the search kernels now, so no request waits for them."""
        from evidencedesk.index.postings_kernel import warm

        warm()

    def warm_models(self) -> bool:
        """Load and run the bundled cross-encoder once when the configuration reads it (a cross-encoder
        reranker with no model named, or the extractive generator's reader), so no request pays for it.
        Returns whether it was warmed; a missing model is reported by the first request that needs it."""
        s = self.settings
        rerank = s.retrieval.rerank
        wanted = (rerank.method == "cross-encoder" and not rerank.model) or (
            s.generator.name == "extractive" and s.generator.answerability == "cross-encoder"
        )
        if not wanted:
            return False
        from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, warm

        try:
            warm()
        except (CrossEncoderUnavailable, ImportError, OSError):
            return False
        return True

    @staticmethod
    def file_types() -> list[str]:
        """The file suffixes an ingest reads (``.md``, ``.pdf``, ...), sorted."""
        from evidencedesk.ingest.folder import PARSERS

        return sorted(PARSERS)

    @staticmethod
    def files_in(folder: str | Path) -> list[tuple[Path, str]]:
        """The files an ingest of ``folder`` reads: each path with its name relative to ``folder``."""
        from evidencedesk.ingest.folder import scan

        return scan(Path(folder)).files

    @staticmethod
    def documents_in(folder: str | Path) -> Iterator[tuple[str, Document]]:
        """The documents an ingest of ``folder`` would write, each with its file's relative name; a file
        that fails to parse is left out (the ingest reports it)."""
        from evidencedesk.ingest.folder import parse_file

        for path, rel in Desk.files_in(folder):
            try:
                yield rel, parse_file(path, rel)
            except IngestError:
                continue

    @staticmethod
    def holds_store(location: str | Path) -> bool:
        """Whether ``location`` is a PostgreSQL URL or a folder holding an embedded store."""
        from evidencedesk.store import DB_NAME

        return is_postgres_url(location) or (Path(location) / DB_NAME).is_file()

    # -- ask -------------------------------------------------------------------------------------
    def generator(self, name: str | None = None) -> Generator:
        """The generator ``name`` (default: ``generator.name``), built once with the configured model."""
        chosen = name or self.settings.generator.name
        with self._lock:
            if chosen not in self._generators:
                self._generators[chosen] = build_generator(self.settings, chosen)
            return self._generators[chosen]

    def prepare_generator(self, name: str | None = None, *, queue_limit: int | None = None) -> bool:
        """Build the generator ``name`` now, so that a missing model fails before an answer starts; a local
        model's request queue takes ``queue_limit`` when one is given. Returns whether the generator writes
        its answer as it goes (a language model) rather than all at once."""
        from evidencedesk.answer.generators.base import StreamingGenerator

        built = self.generator(name)
        queue = getattr(built, "queue", None)
        if queue_limit is not None and queue is not None and hasattr(queue, "limit"):
            queue.limit = queue_limit
        return isinstance(built, StreamingGenerator)

    def ask(
        self,
        question: str,
        scope: Scope | Mapping[str, Any] | None = None,
        *,
        generator: str | None = None,
        method: str | None = None,
        k: int | None = None,
        candidates: int | None = None,
        rerank: str | None = None,
        budget_tokens: int | None = None,
        floor: float | None = None,
        dedup_threshold: float | None = None,
        order: str | None = None,
        rewrite: RewriteOptions | None = None,
        label: Any = None,
        over: tuple[Searcher, Sequence[Chunk]] | None = None,
        save: bool = True,
        owner: str | None = None,
        explain_abstention: bool = False,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Answer with validated citations, or abstain; returns what ``evidencedesk ask --json`` prints.

        Arguments left None take the configured values (``retrieval.k``, ``retrieval.rerank``,
        ``context.*``, ``generator.name``); ``rerank`` is none, overlap, llm or cross-encoder:MODEL.
        ``rewrite`` asks for query rewriting steps; ``label`` adds the labelled question's diagnosis.
        ``over`` answers from other chunks than the store's (a searcher and its chunks: the web lab's
        re-chunkings). The trace is stored unless ``save`` is False, as made by the API key ``owner``
        when one is named (the HTTP service names the caller's). ``explain_abstention``: when the answer
        abstains, search again without the scope and say, in ``outside_scope``, which documents outside it
        matched and why they are out (superseded, expired, another audience...): for whoever owns the store
        (the CLI sets it); the service never does, since that would tell a caller about hidden documents.
        ``max_tokens`` lowers a language model's token limit for this answer (never above
        ``generator.max_tokens``). ``ask_stream`` takes the same arguments and hands out the answer as it
        is written.
        """
        with self.ask_stream(
            question, scope, generator=generator, method=method, k=k, candidates=candidates, rerank=rerank,
            budget_tokens=budget_tokens, floor=floor, dedup_threshold=dedup_threshold, order=order,
            rewrite=rewrite, label=label, over=over, save=save, owner=owner, explain_abstention=explain_abstention,
            max_tokens=max_tokens,
        ) as events:  # fmt: skip
            for event in events:
                if isinstance(event, AnswerDone):
                    return event.result
        raise GenerationError("the generator stopped before it finished its answer")

    def ask_stream(
        self,
        question: str,
        scope: Scope | Mapping[str, Any] | None = None,
        *,
        generator: str | None = None,
        method: str | None = None,
        k: int | None = None,
        candidates: int | None = None,
        rerank: str | None = None,
        budget_tokens: int | None = None,
        floor: float | None = None,
        dedup_threshold: float | None = None,
        order: str | None = None,
        rewrite: RewriteOptions | None = None,
        label: Any = None,
        over: tuple[Searcher, Sequence[Chunk]] | None = None,
        save: bool = True,
        owner: str | None = None,
        explain_abstention: bool = False,
        max_tokens: int | None = None,
    ) -> AskStream:
        """``ask``, handed out as it is written: ``AnswerDelta`` events (pieces of the answer text), then
        one ``AnswerDone`` whose ``result`` is exactly what ``ask`` returns for the same arguments.

        A generator that cannot stream (the extractive one) gives its validated answer as one delta.
        The arguments and the generator are checked now (a bad value raises here); retrieval and
        generation run as the stream is read. Closing the stream (or leaving its ``with`` block)
        stops generation and stores no trace; ``AskStream.cancel()`` does so from another thread.
        A local model's request queue is joined now: ``ModelBusy`` (a ``GenerationError``) when it is
        full; the place is given back when the stream ends or is closed. With
        ``generator.answerability_gate`` a language model is asked only when the fitted answerability
        model says the context answers. See ``evidencedesk.answer.stream`` for the contract.
        """
        from evidencedesk.answer.pipeline import generate_stream, prepare, result_dict

        if not question.strip():
            raise ConfigError("question: must not be empty")
        s = self.with_settings(
            **{
                "retrieval.k": k,
                "retrieval.rerank.candidates": candidates,
                "context.budget_tokens": budget_tokens,
                "context.floor": floor,
                "context.dedup_threshold": dedup_threshold,
                "context.order": order,
            }
        )
        k = s.retrieval.k
        depth = candidates if candidates is not None else max(s.retrieval.rerank.candidates, k)
        if depth < k:
            raise ConfigError(f"candidates: must be at least k ({k}), got {depth}")
        if max_tokens is not None and max_tokens < 1:
            raise ConfigError(f"max_tokens: must be >= 1, got {max_tokens}")

        def gen() -> Generator:
            return self.generator(generator)

        answerer = gen()
        reranker = build_reranker(rerank if rerank is not None else rerank_spec(s), gen, s)
        the_scope = self.scope(scope)
        rewriter = build_rewriter(rewrite, gen)
        diversity = build_diversity(s)
        options = context_options(s)
        gate = self.answerability_gate(answerer, s)
        on_unsupported = s.generator.on_unsupported
        stop = threading.Event()
        admit = getattr(answerer, "admit", None)
        ticket = admit() if callable(admit) else None
        release = ticket.release if ticket is not None else None

        def events() -> Iterator[AskEvent]:
            by_id: Mapping[str, Chunk]
            if over is None:
                searcher = self.searcher(method)
                by_id = ScopedChunks(self.store, the_scope)
            else:
                searcher = over[0]
                by_id = {c.id: c for c in over[1] if the_scope.allows_chunk(c)}
            prepared = prepare(
                question, searcher, answerer, scope=the_scope, k=k, candidates=depth, reranker=reranker,
                rewrite=rewriter, diversify=diversity, **options,
            )  # fmt: skip
            diagnose = _diagnosis(label, by_id, k)
            stream = generate_stream(
                prepared, answerer, by_id, diagnose, max_tokens=max_tokens, should_stop=stop.is_set, gate=gate,
                on_unsupported=on_unsupported,
            )  # fmt: skip
            for item in stream:
                if isinstance(item, str):
                    yield AnswerDelta(item)
                    continue
                checked, trace = item
                out = result_dict(checked, trace, by_id)
                out["searcher"] = searcher_label(searcher)
                if explain_abstention and out.get("abstained"):
                    out["outside_scope"] = outside_scope(searcher.search(question, k, Scope.everything()), the_scope)
                if save:
                    self.store.save_trace(trace.id, out, owner=owner)
                if release is not None:
                    release()
                yield AnswerDone(out)

        return AskStream(events(), stop, on_close=release)

    def answerability_gate(self, generator: Generator, settings: Settings | None = None) -> Any:
        """The gate a language-model generator answers behind (``generator.answerability_gate``), or None.

        The extractive generator decides answerability itself, so it gets none."""
        from evidencedesk.answer.gate import AnswerabilityGate, Assessor

        s = settings or self.settings
        if not s.generator.answerability_gate or getattr(generator, "name", "") == "extractive":
            return None
        assessor = self.generator("extractive")
        return AnswerabilityGate(assessor) if isinstance(assessor, Assessor) else None

    # -- traces ----------------------------------------------------------------------------------
    def save_trace(
        self, result: dict[str, Any], owner: str | None = None, keep: int | None = DEFAULT_TRACE_KEEP
    ) -> str:
        """Store what :meth:`ask` returned (``save=False``, then completed by the caller) as a trace, made
        by ``owner``; only the ``keep`` newest traces stay (None: all). Returns its id."""
        trace_id = str(result["trace_id"])
        self.store.save_trace(trace_id, result, owner=owner, keep=keep)
        return trace_id

    def save_eval_run(self, run: dict[str, Any], owner: str | None = None) -> int:
        """Store what :meth:`evaluate` returned (``save=False``); returns the run's id."""
        return self.store.save_eval_run(run, owner=owner)

    def trace(self, trace_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """A stored trace (what ``ask`` returned), or None; with ``owner``, only one that key made."""
        return self.store.load_trace(trace_id, owner=owner)

    def traces(self, limit: int = 50, owner: str | None = None) -> list[dict[str, Any]]:
        """The most recent stored traces, newest first; with ``owner``, only that key's."""
        return self.store.traces(limit, owner=owner)

    # -- evaluate --------------------------------------------------------------------------------
    def evaluate(
        self,
        labels: str | Path | Sequence[Any],
        method: str | None = None,
        k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        *,
        floor: float | None = None,
        methods: Sequence[str] = (),
        answers: str | None = None,
        unfiltered: bool = True,
        hide_outside_scope: bool = False,
        size_series: bool = False,
        save: bool = True,
        owner: str | None = None,
    ) -> dict[str, Any]:
        """Score labelled questions (a labels file or loaded labels); returns the run (``run_id`` when
        saved, as made by the API key ``owner`` when one is named).

        ``methods`` adds rows to the strategies table; ``answers`` names a generator that answers
        every question too; ``unfiltered`` also scores without the scope; ``hide_outside_scope``
        (the service) judges only by the chunks inside the scope, so no finding names another;
        ``size_series`` measures recall against four re-chunkings of the documents.

        Evaluation reads the store's chunks once per call, in batches, and keeps only those that hold
        a gold phrase (``evaluation.evidence``): no other chunk changes a metric or a finding.
        """
        from evidencedesk.evaluation.run import EvalRun
        from evidencedesk.evaluation.runner import evaluate
        from evidencedesk.evaluation.strategies import compare_strategies, recall_curve, strategy_row

        method = method or self.settings.retrieval.method
        k = k or self.settings.retrieval.k
        floor = floor if floor is not None else self.settings.context.floor
        the_scope = self.scope(scope)
        rows = self._labels(labels)
        chunks = self._evidence(rows, the_scope if hide_outside_scope else None)
        searcher = self.searcher(method)
        results = evaluate(searcher, rows, chunks, the_scope, k, floor)
        table, curves = [strategy_row(method, results, k)], {method: recall_curve(results)}
        others = {m: self.searcher(m) for m in dict.fromkeys(methods) if m != method}
        if others:
            more_rows, more_curves = compare_strategies(others, rows, chunks, the_scope, k)
            table, curves = table + more_rows, {**curves, **more_curves}
        build = self.store.latest_build()
        run = EvalRun(
            method=method,
            k=k,
            scope=the_scope.to_dict(),
            questions=results,
            floor=floor,
            build_id=build.id if build else None,
            chunking_hash=build.chunking_hash if build else "",
            unfiltered=evaluate(searcher, rows, chunks, Scope.everything(), k, floor) if unfiltered else None,
            strategies=[r.to_dict() for r in table],
            curves=curves,
        ).to_dict()
        run["labels"] = str(labels) if isinstance(labels, str | Path) else "(labels)"
        from evidencedesk.evaluation.floor import suggest_floor

        suggested = suggest_floor(results)
        run["suggested_floor"] = suggested.to_dict() if suggested is not None else None
        if answers is not None:
            from evidencedesk.evaluation.answers import evaluate_answers

            s = self.settings
            by_id = ScopedChunks(self.store, the_scope if hide_outside_scope else Scope.everything(), chunks)
            run["answers"] = evaluate_answers(
                searcher, rows, by_id, self.generator(answers), the_scope, k, evidence=chunks, floor=floor,
                dedup_threshold=s.context.dedup_threshold, budget_tokens=s.context.budget_tokens,
                order=s.context.order,
            ).to_dict()  # fmt: skip
        if size_series:
            run["size_series"] = [s.to_dict() for s in self.size_series(rows, method, the_scope)]
        if save:
            run["run_id"] = self.store.save_eval_run(run, owner=owner)
        return run

    def _evidence(self, labels: Sequence[Any], scope: Scope | None = None) -> list[Chunk]:
        """The stored chunks (inside ``scope``, when given) that hold a gold phrase of ``labels``, read
        in batches; an error when the store (or the scope) holds no chunk at all."""
        from evidencedesk.evaluation.evidence import gather_evidence

        self.build_id()
        found = gather_evidence(self.store.iter_chunks(), labels, scope)
        if not found.read:
            raise StoreError(f"store {self.location} holds no chunks")
        if not found.in_scope:
            raise NothingInScope("the store holds no chunk inside this scope")
        return found.chunks

    def size_series(self, labels: Sequence[Any], method: str | None = None, scope: Scope | None = None) -> list[Any]:
        """Recall against context size for four re-chunkings of the documents inside ``scope``."""
        from evidencedesk.evaluation.series import chunk_size_series

        method = method or self.settings.retrieval.method
        self.check_memory("the size series", "it re-chunks every document four ways; leave it out")
        the_scope = self.scope(scope)
        documents = [d for d in self.store.documents() if the_scope.allows(d.metadata, d.id)]
        params = searcher_params(self.settings, method, self.path / EMBEDDINGS_FILE)
        return chunk_size_series(documents, labels, the_scope, method, **params)

    @staticmethod
    def _labels(labels: str | Path | Sequence[Any]) -> list[Any]:
        from evidencedesk.evaluation.labels import load_labels

        rows = load_labels(Path(labels)) if isinstance(labels, str | Path) else list(labels)
        if not rows:
            raise ConfigError(f"no labels in {labels}" if isinstance(labels, str | Path) else "no labels given")
        return rows

    def strategies(
        self,
        labels: str | Path | Sequence[Any],
        methods: Sequence[str],
        k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """One row per method of how the labelled questions fare: hits at 1, 3 and 5, answers outranked,
        answers missing from the top ``k``, junk returned for unanswerable questions
        (``evaluation.strategies.StrategyRow``)."""
        from evidencedesk.evaluation.strategies import compare_strategies

        searchers = {m: self.searcher(m) for m in methods}
        rows, _ = compare_strategies(
            searchers, self._labels(labels), self.chunks(), self.scope(scope), k=k or self.settings.retrieval.k
        )
        return list(rows)

    def whole_answers(self, chunking: ChunkingConfig, labels: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
        """``(chunks, whole, total)``: how many chunks the stored documents make under ``chunking``, and how
        many of the ``total`` evidence phrases of ``labels`` (rows of a labels file) one chunk holds whole."""
        from evidencedesk.chunking.evidence import whole_evidence

        chunks = self.rechunk(chunking)
        whole, total = whole_evidence(chunks, list(labels))
        return len(chunks), whole, total

    def diagnose(
        self,
        labels: str | Path | Sequence[Any],
        method: str | None = None,
        k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        floor: float | None = None,
    ) -> list[Diagnosis]:
        """Every failing labelled question with its findings, the root cause first."""
        from evidencedesk.evaluation.runner import evaluate

        rows = self._labels(labels)
        chunks = self._evidence(rows)
        floor = floor if floor is not None else self.settings.context.floor
        results = evaluate(
            self.searcher(method), rows, chunks, self.scope(scope), k or self.settings.retrieval.k, floor
        )
        return [Diagnosis(r.id, r.question, tuple(r.findings)) for r in results if r.failed and r.findings]

    def eval_run(self, run: int | Mapping[str, Any]) -> dict[str, Any]:
        """A stored evaluation run by id (a mapping is returned as it is)."""
        if isinstance(run, Mapping):
            return dict(run)
        found = self.store.load_eval_run(run)
        if found is None:
            raise StoreError(f"no evaluation run {run} in store {self.location}")
        return found

    @staticmethod
    def beir(
        settings: Settings,
        dataset_dir: str | Path,
        method: str,
        store_dir: str | Path,
        *,
        split: str = "test",
        run_out: str | Path | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Score ``method`` on a BEIR dataset (indexed once in ``store_dir``): nDCG@10, recall@100, MRR@10.
        ``options`` (k1, b, stem, stopwords, contextual, fusion, progress) override the settings."""
        from evidencedesk.benchmarks import beir_params, run_beir

        params = beir_params(settings, method, store_dir, **options)
        return run_beir(dataset_dir, method, store_dir, params, split=split, run_out=run_out)

    @staticmethod
    def report_html(
        run: Mapping[str, Any], title: str = "evidencedesk evaluation", size_series: Sequence[Any] | None = None
    ) -> str:
        """An evaluation run as one self-contained HTML page; its size curves are ``size_series`` (see
        :meth:`size_series`), else the ones the run carries."""
        from evidencedesk.evaluation.report_html import SizeSeries, render_report

        if size_series is None:
            size_series = [
                SizeSeries(s["name"], tuple(tuple(p) for p in s["points"])) for s in run.get("size_series") or []
            ]
        return render_report(run, size_series=size_series, title=title)

    def compare(
        self, run_a: int | Mapping[str, Any], run_b: int | Mapping[str, Any], threshold: float = 0.02
    ) -> Any:
        """Per-slice differences between two eval runs; ``.regressed`` is the gate's verdict."""
        return self.compare_runs(self.eval_run(run_a), self.eval_run(run_b), threshold)

    @staticmethod
    def compare_runs(run_a: Mapping[str, Any], run_b: Mapping[str, Any], threshold: float = 0.02) -> Any:
        """:meth:`compare` for two runs in hand (e.g. read from JSON files): no store needed."""
        from evidencedesk.evaluation.gate import compare

        return compare(dict(run_a), dict(run_b), threshold)


def outside_scope(found: Sequence[Candidate], scope: Scope) -> list[dict[str, Any]]:
    """The documents outside ``scope`` among ``found`` (a search without the scope) that rank above every
    document inside it: ``[{doc_id, chunk_id, rank, why}]``, one per document, best first. Empty when the
    best match is inside the scope."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in found:
        why = scope.excludes(c.chunk.metadata, c.chunk.doc_id)
        if why is None:
            break  # an allowed document ranks here: what follows is not "only" outside text
        if c.chunk.doc_id not in seen:
            seen.add(c.chunk.doc_id)
            out.append({"doc_id": c.chunk.doc_id, "chunk_id": c.chunk.id, "rank": c.rank, "why": why})
    return out


def labelled_questions(labels: str | Path) -> Sequence[Any]:
    """The labels of a ``labels.jsonl`` file (a shortcut for ``evaluation.labels.load_labels``)."""
    from evidencedesk.evaluation.labels import load_labels

    return load_labels(Path(labels))


__all__ = [
    "Desk",
    "Diagnosis",
    "RewriteOptions",
    "ScopedChunks",
    "Serialized",
    "candidate_rows",
    "labelled_questions",
    "leg_names",
    "outside_scope",
    "searcher_tokenizer",
]
