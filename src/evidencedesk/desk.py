"""Desk: the whole pipeline behind one object, configured by ``Settings``.

>>> desk = Desk(".evidencedesk")                        # doctest: +SKIP
>>> desk.ingest("examples/kestrel/docs")                 # doctest: +SKIP
>>> desk.search("stem bolt torque size M", k=3)          # doctest: +SKIP
>>> desk.ask("Can I return a bike after five weeks?")    # doctest: +SKIP

The CLI, the HTTP service and this class read the same ``Settings`` model; anything the YAML file
can say, ``Desk(store, settings=...)`` accepts. Searchers are built once per index build and reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidencedesk.config import Settings, load_settings
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Finding

EMBEDDINGS_FILE = "embeddings.sqlite"


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


class Desk:
    """Open a store and run ingest, search, ask, evaluate, diagnose and compare.

    ``store`` is a folder (the embedded SQLite store) or a ``postgresql://USER@HOST:PORT/DB`` URL
    (PostgreSQL with pgvector; BM25 and dense search then run inside the database).
    """

    def __init__(self, store: str | Path | Any = None, settings: Settings | None = None) -> None:
        from evidencedesk.backends import is_postgres_url, open_store

        self.settings = settings if settings is not None else load_settings()
        if store is not None and not isinstance(store, str | Path):  # an already opened store
            self.store = store
            self.is_postgres = not hasattr(store, "path")
            self.path = Path(".evidencedesk") if self.is_postgres else Path(store.path)
        else:
            location = str(store) if store is not None else self.settings.store
            self.is_postgres = is_postgres_url(location)
            # the embedding cache lives beside an embedded store; a PostgreSQL store keeps its vectors
            self.path = Path(".evidencedesk") if self.is_postgres else Path(location)
            self.store = open_store(location)
        self._searchers: dict[tuple[str, int | None, tuple[str, ...] | None], Searcher] = {}
        self._chunks: tuple[int | None, list[Chunk]] | None = None
        self._snap: tuple[int | None, Any, str] | None = None  # (build id, snapshot or None, why)
        self._default_scope: Scope | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest ----------------------------------------------------------------------------------
    def ingest(self, folder: str | Path, **chunker: Any) -> Any:
        """Ingest a folder; ``chunker`` overrides (name=, size=, overlap=, unit=) the configured chunker."""
        from evidencedesk.config import ChunkerSettings

        merged = {**self.settings.chunker.model_dump(), **chunker}
        report = self.store.ingest(Path(folder), ChunkerSettings(**merged).to_chunking())
        self._searchers.clear()
        self._chunks = None
        return report

    def _build_id(self) -> int | None:
        """The latest build's id (one cheap query; searches are cached per build)."""
        quick = getattr(self.store, "latest_build_id", None)
        if quick is not None:
            return quick()  # type: ignore[no-any-return]
        build = self.store.latest_build()
        return build.id if build else None

    def chunks(self) -> list[Chunk]:
        """Every stored chunk (cached until the next build)."""
        build_id = self._build_id()
        if self._chunks is None or self._chunks[0] != build_id:
            self._chunks = (build_id, self.store.chunks())
            self._searchers.clear()
        return self._chunks[1]

    # -- search ----------------------------------------------------------------------------------
    def _leg_params(self, method: str) -> dict[str, Any]:
        return leg_params(self.settings, method, self.path / EMBEDDINGS_FILE)

    def _dense_embedder(self) -> Any:
        from evidencedesk.index.embedders import default_embedder, embedder_from_name

        leg = next((x for x in self.settings.retrieval.legs if x.method == "dense"), None)
        return embedder_from_name(leg.model) if leg and leg.model != "minilm" else default_embedder()

    def searcher(self, method: str | None = None, legs: Sequence[str] | None = None) -> Searcher:
        """The first-stage searcher for ``method`` (default: what the settings describe); ``legs``
        names a hybrid's legs (default: the configured legs)."""
        method = method or self.settings.retrieval.method
        names = tuple(legs) if legs else None
        latest = (f"latest:{method}", self._build_id(), names)
        found = self._searchers.get(latest)  # one query per search when nothing changed since the last one
        if found is None:
            found = self._searchers[latest] = self._find_searcher(method, names)
        return found

    def _find_searcher(self, method: str, names: tuple[str, ...] | None) -> Searcher:
        from evidencedesk.retrieval.factory import make_searcher

        mapped = self._snapshot_searcher(method, names)
        if mapped is not None:
            return mapped
        chunks = self.chunks()
        key = (method, self._chunks[0] if self._chunks else None, names)
        if key not in self._searchers and self.is_postgres:
            from evidencedesk.backends.postgres.factory import pg_searcher

            leg_names = list(names or hybrid_legs(self.settings)) if method == "hybrid" else []
            if method == "dense" or "dense" in leg_names:
                self.store.ensure_vectors(self._dense_embedder(), self.path / EMBEDDINGS_FILE)
            extra = {"legs": leg_names} if method == "hybrid" else {}
            self._searchers[key] = pg_searcher(method, self.store, **extra)
        elif key not in self._searchers:
            params = searcher_params(self.settings, method, self.path / EMBEDDINGS_FILE, names)
            self._searchers[key] = make_searcher(method, chunks, **params)
        return self._searchers[key]

    # -- memory-mapped snapshot --------------------------------------------------------------------
    def write_index(self, dense: bool = True, ann: bool = True, timings: dict[str, float] | None = None) -> Path:
        """Save the latest build's index to ``<store>/snapshot``: BM25 with the configured settings,
        and (``dense``) the vectors through the embedding cache plus (``ann``) an HNSW graph.

        Later searches open it memory-mapped instead of loading every chunk and rebuilding the index;
        an ingest makes it stale (searches then fall back to the in-memory index until it is rewritten).
        """
        from evidencedesk.retrieval.snapshot_settings import write_store_snapshot

        if self.is_postgres:
            raise ValueError("write_index: a PostgreSQL store keeps its indexes in the database")
        embedder = self._dense_embedder() if dense else None
        path = write_store_snapshot(self.store, self.settings, embedder, self.path / EMBEDDINGS_FILE, ann, timings)
        self._snap = None
        self._searchers.clear()
        return path

    def snapshot_status(self) -> str:
        """Whether searches use the memory-mapped snapshot, and if not, why."""
        return self._snapshot()[1]

    def _snapshot(self) -> tuple[Any, str]:
        if self.is_postgres:
            return None, "PostgreSQL store: searches run in the database"
        from evidencedesk.retrieval.snapshot_settings import snapshot_status

        build_id = self._build_id()
        if self._snap is None or self._snap[0] != build_id:
            self._snap = (build_id, *snapshot_status(self.store, self.settings))
        return self._snap[1], self._snap[2]

    def _snapshot_searcher(self, method: str, names: tuple[str, ...] | None) -> Searcher | None:
        snap, _ = self._snapshot()
        if snap is None:
            return None
        from evidencedesk.retrieval.snapshot_settings import snapshot_searcher

        key = (f"snapshot:{method}", snap.build_id, names)
        if key not in self._searchers:
            legs = names or hybrid_legs(self.settings)
            found = snapshot_searcher(snap, self.store, self.settings, method, legs, self._dense_embedder)
            if found is None:
                return None
            self._searchers[key] = found
        return self._searchers[key]

    def _scope(self, scope: Scope | dict[str, Any] | None) -> Scope:
        if scope is None:
            if self._default_scope is None:
                self._default_scope = self.settings.scope.to_scope()
            return self._default_scope
        return Scope.from_dict(scope) if isinstance(scope, dict) else scope

    def search(
        self, query: str, k: int | None = None, method: str | None = None, scope: Scope | dict[str, Any] | None = None
    ) -> list[Candidate]:
        """Ranked chunks for ``query`` inside ``scope`` (default: the configured scope)."""
        return self.searcher(method).search(query, k or self.settings.retrieval.k, self._scope(scope))

    # -- ask -------------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        scope: Scope | dict[str, Any] | None = None,
        generator: str | None = None,
        method: str | None = None,
        k: int | None = None,
        save: bool = True,
    ) -> dict[str, Any]:
        """Answer with validated citations, or abstain; returns what ``evidencedesk ask --json`` prints."""
        from evidencedesk.answer.generators import get_generator
        from evidencedesk.answer.pipeline import ask, result_dict
        from evidencedesk.retrieval.rerank import get_reranker

        s = self.settings
        gen_name = generator or s.generator.name
        params: dict[str, Any] = {}
        if gen_name == "openai":
            params = {"base_url": s.generator.base_url, "model": s.generator.model}
        rerank = s.retrieval.rerank
        spec = rerank.method if rerank.method != "cross-encoder" else f"cross-encoder:{rerank.model}"
        searcher = self.searcher(method)
        if self._snapshot()[0] is not None:  # a million chunks need not be loaded to check citations
            from evidencedesk.store.lookup import StoredChunks

            by_id: Any = StoredChunks(self.store)
        else:
            by_id = {c.id: c for c in self.chunks()}
        checked, trace = ask(
            question,
            searcher,
            by_id,
            get_generator(gen_name, **params),
            scope=self._scope(scope),
            k=k or s.retrieval.k,
            candidates=max(rerank.candidates, k or s.retrieval.k),
            reranker=get_reranker(spec if rerank.method in ("overlap", "cross-encoder") else None),
            budget_tokens=s.context.budget_tokens,
            floor=s.context.floor,
            dedup_threshold=s.context.dedup_threshold,
            order=s.context.order,
        )
        out = result_dict(checked, trace, by_id)
        if save:
            self.store.save_trace(trace.id, out)
        return out

    # -- evaluate --------------------------------------------------------------------------------
    def evaluate(
        self,
        labels: str | Path,
        method: str | None = None,
        k: int | None = None,
        scope: Scope | dict[str, Any] | None = None,
        save: bool = True,
    ) -> dict[str, Any]:
        """Score labelled questions; returns the stored run (with ``run_id`` when saved)."""
        from evidencedesk.evaluation.labels import load_labels
        from evidencedesk.evaluation.run import EvalRun
        from evidencedesk.evaluation.runner import evaluate
        from evidencedesk.evaluation.strategies import recall_curve, strategy_row

        method = method or self.settings.retrieval.method
        k = k or self.settings.retrieval.k
        the_scope = self._scope(scope)
        rows = load_labels(Path(labels))
        chunks = self.chunks()
        searcher = self.searcher(method)
        results = evaluate(searcher, rows, chunks, the_scope, k)
        build = self.store.latest_build()
        run = EvalRun(
            method=method,
            k=k,
            scope=the_scope.to_dict(),
            questions=results,
            build_id=build.id if build else None,
            chunking_hash=build.chunking_hash if build else "",
            unfiltered=evaluate(searcher, rows, chunks, Scope.everything(), k),
            strategies=[strategy_row(method, results, k).to_dict()],
            curves={method: recall_curve(results)},
        ).to_dict()
        run["labels"] = str(labels)
        if save:
            run["run_id"] = self.store.save_eval_run(run)
        return run

    def diagnose(
        self, labels: str | Path, method: str | None = None, k: int | None = None, scope: Scope | None = None
    ) -> list[Diagnosis]:
        """Every failing labelled question with its findings, the root cause first."""
        from evidencedesk.evaluation.labels import load_labels
        from evidencedesk.evaluation.runner import evaluate

        rows = load_labels(Path(labels))
        results = evaluate(
            self.searcher(method), rows, self.chunks(), self._scope(scope), k or self.settings.retrieval.k
        )
        return [Diagnosis(r.id, r.question, tuple(r.findings)) for r in results if r.failed and r.findings]

    def compare(self, run_a: int | dict[str, Any], run_b: int | dict[str, Any], threshold: float = 0.02) -> Any:
        """Per-slice differences between two eval runs; ``.regressed`` is the gate's verdict."""
        from evidencedesk.evaluation.gate import compare

        def load(run: int | dict[str, Any]) -> dict[str, Any]:
            if isinstance(run, dict):
                return run
            found = self.store.load_eval_run(run)
            if found is None:
                raise ValueError(f"no eval run with id {run} in {self.path}")
            return found

        return compare(load(run_a), load(run_b), threshold)


def leg_params(settings: Settings, method: str, cache_path: Path) -> dict[str, Any]:
    """Searcher parameters for one ``method`` from the settings' leg of that method (defaults when
    no leg names it); dense embeddings are cached at ``cache_path``."""
    leg = next((x for x in settings.retrieval.legs if x.method == method), None)
    if method == "dense":
        params: dict[str, Any] = {"cache_path": cache_path}
        if leg is not None:
            params["contextual"] = leg.contextual
            if leg.model != "minilm":
                params["embedder"] = leg.model
        return params
    if method == "bm25":
        if leg is None:
            return {}
        return {"k1": leg.k1, "b": leg.b, "stem": leg.stem, "stopwords": leg.stopwords, "language": leg.language}
    if method == "lsa" and leg is not None:
        return {"rank": leg.rank}
    return {}


def hybrid_legs(settings: Settings) -> tuple[str, ...]:
    """A hybrid's legs: the configured legs when there are several, else bm25 and dense."""
    legs = settings.retrieval.legs
    return tuple(leg.method for leg in legs) if len(legs) > 1 else ("bm25", "dense")


def searcher_params(
    settings: Settings, method: str, cache_path: Path, legs: Sequence[str] | None = None
) -> dict[str, Any]:
    """``make_searcher`` parameters for ``method`` as the settings describe it (the CLI, the service
    and Desk build searchers through this); ``legs`` replaces a hybrid's configured legs."""
    if method != "hybrid":
        return leg_params(settings, method, cache_path)
    r = settings.retrieval
    names = list(legs) if legs else list(hybrid_legs(settings))
    depths = [leg.depth for leg in r.legs if leg.method in names]
    return {
        "legs": names,
        "leg_params": {m: leg_params(settings, m, cache_path) for m in names},
        "fusion": r.fusion.method,
        "rrf_k": r.fusion.k,
        "weights": r.fusion.weights,
        "depth": max(depths or [leg.depth for leg in r.legs]),
    }


def labelled_questions(labels: str | Path) -> Sequence[Any]:
    """The labels of a ``labels.jsonl`` file (a shortcut for ``evaluation.labels.load_labels``)."""
    from evidencedesk.evaluation.labels import load_labels

    return load_labels(Path(labels))
