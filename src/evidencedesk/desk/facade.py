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

The Desk itself only delegates: each job has its collaborator beside this module (``index_upkeep``,
``searching``, ``answering``, ``records``, ``evaluating``, ``lab_tools``), all sharing one
``DeskState`` (``state``): the store, the settings and what is cached for the latest build.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.stream import AskStream
from evidencedesk.config import Overrides, Settings
from evidencedesk.documents import Chunk, Document
from evidencedesk.progress import Callback
from evidencedesk.results.ask import AskResult, JSONObject
from evidencedesk.results.ingest import EmbeddingProgress, IngestReport
from evidencedesk.results.search import SearchHit
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.first_stage import FirstStage
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.base import DEFAULT_TRACE_KEEP
from evidencedesk.store.contract import StoreProtocol

from . import evaluating
from .answering import Answering, warm_models
from .evaluating import Diagnosis, Evaluating, RunLike
from .index_upkeep import IndexUpkeep
from .lab_tools import LabTools
from .records import Records
from .request import AskRequest
from .searching import Searching
from .state import DeskState

if TYPE_CHECKING:
    from evidencedesk.evaluation.gate import Comparison
    from evidencedesk.evaluation.labels import Label
    from evidencedesk.evaluation.report_html import SizeSeries
    from evidencedesk.evaluation.strategies import StrategyRow
    from evidencedesk.results.evaluation import BeirSummary, EvalRun


class Desk:
    """Open a store and run ingest, search, ask, evaluate, diagnose and compare over it.

    Helpers that need no store are module functions: ``files_in``, ``documents_in`` and ``file_types``
    (what an ingest would read), ``holds_store`` and ``warm_up`` in ``evidencedesk.desk``. What only the
    web lab asks (re-chunkings, searchers over them, prompt previews) sits behind :attr:`lab`.

    Args:
        store: A folder (the embedded SQLite store), a ``postgresql://USER@HOST:PORT/DB`` URL, or an
            already opened store (default: ``settings.store``).
        settings: The settings (default: ``./evidencedesk.yaml``, or the defaults without one).
        work_dir: Where a PostgreSQL store's embedding cache and staged uploads live (default
            ``.evidencedesk``); an embedded store keeps them in its own folder.

    Attributes:
        store: The open store (its protocol: ``StoreProtocol``).
        location: Its folder or URL (the repr of a store handed in opened).
        is_postgres: Whether it searches inside PostgreSQL.
        path: The embedding cache's folder: the store's own, or ``work_dir`` for PostgreSQL.

    Raises:
        StoreError: the store cannot be opened.
        ConfigError: the settings file is invalid.
    """

    def __init__(
        self,
        store: str | Path | StoreProtocol | None = None,
        settings: Settings | None = None,
        *,
        work_dir: str | Path | None = None,
    ) -> None:
        self._state = state = DeskState.open(store, settings, work_dir)
        self.store: StoreProtocol = state.store  # the open store
        self.location = state.location  # its folder or URL (the repr of a store handed in opened)
        self.is_postgres = state.is_postgres  # whether it searches inside PostgreSQL
        self.path = state.path  # the embedding cache's folder: the store's own, or work_dir for PostgreSQL
        self._index = IndexUpkeep(state)
        self._search = Searching(state, self._index)
        self._answers = Answering(state, self._search)
        self._records = Records(state.store, state.location)
        self._eval = Evaluating(state, self._index, self._search, self._answers)
        self._lab = LabTools(state, self._answers)

    # -- what may change after opening -------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The settings in use (see :meth:`reconfigure`)."""
        return self._state.settings

    @property
    def lab(self) -> LabTools:
        """What the web lab asks of this Desk beyond search and ask: the stored documents re-chunked,
        searchers built in memory over any chunks, prompt previews, the answerability gate."""
        return self._lab

    @property
    def max_memory_chunks(self) -> int | None:
        """The most chunks a step may hold in memory, or None for no limit.

        A step that would hold every chunk in memory (an in-memory index, a re-chunking) over a store
        with more chunks raises TooLargeForMemory; the service sets it."""
        return self._state.max_memory_chunks

    @max_memory_chunks.setter
    def max_memory_chunks(self, limit: int | None) -> None:
        self._state.max_memory_chunks = limit

    @property
    def step_progress(self) -> Callable[[str], Callback] | None:
        """How long steps report progress, or None for not at all.

        ``step_progress(step)`` gives the progress callback of a step a search or an answer waits for
        ("embedding chunks": the dense leg's first use); the CLI draws it on stderr."""
        return self._state.step_progress

    @step_progress.setter
    def step_progress(self, factory: Callable[[str], Callback] | None) -> None:
        self._state.step_progress = factory

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Drop what is cached for the latest build and close the store (leaving ``with Desk(...)`` does it)."""
        self._state.drop_cached()
        self._state.store.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build_id(self) -> int | None:
        """The store's latest build id (one small query); cached indexes are dropped when it changed.

        Returns:
            The id of the latest ingest's build, or None for an empty store.
        """
        return self._state.build_id()

    def reconfigure(self, settings: Settings) -> None:
        """Use ``settings`` from now on: the searchers, generators and default scope built from the old
        ones are dropped (a PostgreSQL store keeps the BM25 settings it was opened with)."""
        with self._state.lock:
            self._state.reconfigure(settings)
            self._answers.drop_generators()

    def with_settings(self, overrides: Overrides) -> Settings:
        """The settings with ``overrides`` applied (``Overrides(order="edges")``); None keeps a value.

        Raises ConfigError naming the key for a bad value.
        """
        return self._state.with_settings(overrides)

    # -- ingest and the index ----------------------------------------------------------------------
    def ingest(
        self,
        folder: str | Path,
        *,
        max_bytes: int | None = None,
        progress: Callable[[int, int, str], None] | None = None,
        remove_missing: bool = True,
        embed: bool = False,
        embed_progress: Callback | None = None,
        **chunker: object,
    ) -> IngestReport:
        """Ingest a folder: unchanged files are skipped by hash, changed files re-chunked and (with
        ``remove_missing``) documents whose file is gone removed. When the store has a snapshot (see
        :meth:`write_index`) it is brought up to date in the same call, with one new segment.

        Args:
            folder: the folder of documents (read recursively).
            max_bytes: files larger than this fail (default: the ingest's limit).
            progress: ``progress(done, total, path)`` follows the files.
            remove_missing: remove stored documents whose file is gone.
            embed: also compute the dense embeddings of every chunk now (see :meth:`embed`), so the
                first dense or hybrid query does not pay for them.
            embed_progress: follows the embedding (with ``embed``).
            **chunker: overrides of the configured chunker (``name=``, ``size=``, ``overlap=``, ``unit=``).

        Returns:
            The :class:`~evidencedesk.results.ingest.IngestReport`: documents added, updated, unchanged and
            removed, the files that failed and why, and in ``progress`` the files' (and the embedding's)
            count, seconds and rate, and ``progress.index``: what the snapshot update added, deleted and
            merged (or why the snapshot could not be updated).

        Raises:
            ConfigError: a bad chunker override or ``max_bytes``.
        """
        return self._index.ingest(
            folder, max_bytes=max_bytes, progress=progress, remove_missing=remove_missing, embed=embed,
            embed_progress=embed_progress, chunker=chunker,
        )  # fmt: skip

    def embed(self, progress: Callback | None = None) -> EmbeddingProgress:
        """Compute the dense embeddings of every stored chunk into the embedding cache (PostgreSQL: into the
        store), exactly as the dense leg of a search would; chunks already embedded are not embedded again.

        Args:
            progress: ``progress(done, total, model)`` follows the chunks embedded now.

        Returns:
            The embedding's ``count`` (chunks embedded now), ``total`` (chunks stored), ``seconds``,
            ``per_second`` and ``model``.
        """
        return self._index.embed(progress)

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every stored chunk of the latest build, or one document's.

        All of them are kept in memory only while in-memory searchers need them (an embedded store
        without a current snapshot); otherwise read anew on each call.

        Args:
            doc_id: A document's id: only its chunks (default: every document's).

        Returns:
            The chunks, in document order (empty for an id not stored).
        """
        return self._index.chunks() if doc_id is None else self._state.store.chunks(doc_id)

    def write_index(
        self,
        dense: bool = True,
        ann: bool = True,
        timings: dict[str, float] | None = None,
        *,
        rebuild: bool = False,
        merge: bool = False,
        report: dict[str, object] | None = None,
    ) -> Path:
        """Save the latest build's index to ``<store>/snapshot``: BM25 with the configured settings,
        and (``dense``) the vectors through the embedding cache plus (``ann``) HNSW graphs.

        A snapshot written with the same settings (and the same ``dense``/``ann`` choice) is brought
        up to date with one new segment for what changed since its build; otherwise, or with
        ``rebuild``, it is written whole as one segment. ``merge`` then merges every segment into one.
        Later searches open it memory-mapped instead of loading every chunk and rebuilding the index,
        and every ingest keeps it up to date.

        Args:
            dense: also save the dense vectors (embedded through the embedding cache).
            ann: also build HNSW graphs over the vectors (with ``dense``).
            timings: receives the seconds each step took, by step.
            rebuild: write the snapshot whole even when it could be brought up to date.
            merge: then merge every segment into one.
            report: receives what was done: ``mode`` (``rebuild`` or ``update``), ``update`` (rows added
                and deleted, segments merged) and, with ``merge``, ``merge``.

        Returns:
            The snapshot's folder.

        Raises:
            ConfigError: a PostgreSQL store (it keeps its indexes in the database).
        """
        return self._index.write_index(dense, ann, timings, rebuild=rebuild, merge=merge, report=report)

    def snapshot_status(self) -> str:
        """Whether searches use the memory-mapped snapshot (see :meth:`write_index`).

        Returns:
            A line saying the snapshot is used, or why not (none written, written for other settings or
            an older build, a PostgreSQL store).
        """
        return self._index.snapshot_status()

    # -- what is stored ----------------------------------------------------------------------------
    def documents(self) -> list[Document]:
        """Every stored document, without its text and sections.

        Returns:
            The documents (ids, titles, paths, formats, metadata; ``text`` empty), ordered by id.
        """
        return self._state.store.document_headers()

    def document(self, doc_id: str) -> Document | None:
        """One stored document, whole: text, metadata and sections.

        Args:
            doc_id: The document's id.

        Returns:
            The document, or None when no document has that id.
        """
        return self._state.store.document(doc_id)

    def chunk(self, chunk_id: str) -> Chunk | None:
        """One stored chunk: what a citation points to.

        Args:
            chunk_id: The chunk's id (``doc_id:c3``).

        Returns:
            The chunk, or None when no chunk has that id.
        """
        return self._state.store.chunk(chunk_id)

    def chunk_counts(self) -> dict[str, int]:
        """How many chunks each stored document has in the latest build.

        Returns:
            The count by document id (a document without chunks may be missing).
        """
        return self._state.store.chunk_counts()

    # -- searchers and search ----------------------------------------------------------------------
    def searcher(self, method: str | None = None, legs: Sequence[str] | None = None) -> Searcher:
        """The first-stage searcher of a method, built where the index lives; cached until the next build.

        Args:
            method: The retrieval method (default: ``retrieval.method``).
            legs: A hybrid's legs (default: the configured legs).

        Returns:
            The searcher, without collapsing or diversity (see :meth:`first_stage` for those).

        Raises:
            ConfigError: an unknown method or leg.
        """
        return self._search.searcher(method, legs)

    def first_stage(
        self, method: str | None = None, legs: Sequence[str] | None = None, *, over: Searcher | None = None
    ) -> FirstStage:
        """The ranking that ``search``, the service, the lab, ``eval`` and ``diagnose`` show, and that ``ask``
        retrieves through: a searcher with ``retrieval.collapse``, then ``retrieval.diversity``.

        Args:
            method: The retrieval method (default: ``retrieval.method``).
            legs: A hybrid's legs (default: the configured legs).
            over: A searcher to rank with instead, e.g. ``desk.lab.searcher_over(...)``'s.

        Returns:
            The first stage; its ``search(query, k, scope)`` is the top k.
        """
        return self._search.first_stage(method, legs, over)

    def searcher_label(self, method: str | None = None, legs: Sequence[str] | None = None) -> str:
        """Where a method ranks now.

        Args:
            method: The retrieval method (default: ``retrieval.method``).
            legs: A hybrid's legs (default: the configured legs).

        Returns:
            ``pg-bm25``, ``snapshot-bm25``, ``memory-bm25``, ``hybrid(...)`` and so on.
        """
        return self._search.label(method, legs)

    def scope(self, scope: Scope | Mapping[str, object] | None = None) -> Scope:
        """A scope as a Scope.

        Args:
            scope: A Scope, or its fields as a mapping (``{"tenant": "acme"}``); default: the configured
                scope.

        Returns:
            The Scope.

        Raises:
            ConfigError: a field that is no scope field, or a bad value.
        """
        return self._state.scope(scope)

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
        return self._search.search(query, k, method, scope, legs)

    def search_rows(
        self, query: str, k: int | None = None, method: str | None = None,
        scope: Scope | Mapping[str, Any] | None = None, legs: Sequence[str] | None = None,
    ) -> list[SearchHit]:  # fmt: skip
        """The ranking of :meth:`search` with the query words each result holds: what ``evidencedesk search
        --json`` prints and ``POST /search`` returns (each hit's ``to_dict()``).

        Args:
            query: the question or keywords (not empty).
            k: how many results (default: ``retrieval.k``).
            method: ``bm25``, ``tfidf``, ``lsa``, ``dense`` or ``hybrid`` (default: ``retrieval.method``).
            scope: the chunks that may be ranked (default: the configured scope).
            legs: a hybrid's legs (default: the configured legs).

        Returns:
            The hits, best first: fewer than ``k`` when fewer chunks inside the scope match.

        Raises:
            ConfigError: an empty query, a bad ``k``, an unknown method, or ``legs`` without a hybrid.
        """
        return self._search.rows(query, self.search(query, k, method, scope, legs), method, legs)

    # -- ask -------------------------------------------------------------------------------------
    def generator(self, name: str | None = None) -> Generator:
        """A generator, built once with the configured model.

        Args:
            name: The generator (default: ``generator.name``).

        Returns:
            The generator.

        Raises:
            ConfigError: an unknown generator.
            GenerationError: its model cannot be loaded.
        """
        return self._answers.generator(name)

    def prepare_generator(self, name: str | None = None, *, queue_limit: int | None = None) -> bool:
        """Build a generator now, so that a missing model fails before an answer starts.

        Args:
            name: The generator (default: ``generator.name``).
            queue_limit: How many requests a local model's queue takes (default: as configured).

        Returns:
            Whether the generator writes its answer as it goes (a language model) rather than all at once.
        """
        return self._answers.prepare_generator(name, queue_limit)

    def warm_models(self) -> bool:
        """Load and run the bundled cross-encoder once when the configuration reads it (a cross-encoder
        reranker with no model named, or the extractive generator's reader), so no request pays for it.

        Returns:
            Whether it was warmed; a missing model is reported by the first request that needs it.
        """
        return warm_models(self._state.settings)

    def ask(
        self, question: AskRequest | str, scope: Scope | Mapping[str, object] | None = None, **fields: object
    ) -> AskResult:
        """Answer with validated citations, or abstain.

        ``question`` is an :class:`AskRequest`, or the question with the request's other fields as
        ``scope`` and keywords (``desk.ask("...", k=3, save=False)``); with a request, keywords replace its
        fields. An unknown keyword raises TypeError naming it. See :class:`AskRequest` for every field:
        the configured values fill what is left None; ``over`` answers from other chunks than the store's;
        the trace is stored unless ``save`` is False, as made by the API key ``owner``; with
        ``explain_abstention`` an abstention names the documents outside the scope that matched best
        (the CLI sets it; the service never does, since that would tell a caller about hidden documents).
        :meth:`ask_stream` takes the same arguments and hands out the answer as it is written.

        Args:
            question: The question, or a whole :class:`AskRequest`.
            scope: The documents it may be answered from (a ``Scope`` or its fields as a mapping);
                default: the configured scope.
            **fields: Any other :class:`AskRequest` field (``k``, ``method``, ``generator``, ``save`` ...).

        Returns:
            The :class:`~evidencedesk.results.ask.AskResult`: the validated answer and its citations (or
            the abstention and why), where each citation points, and the trace of every stage;
            ``to_dict()`` gives what ``evidencedesk ask --json`` prints.

        Raises:
            TypeError: an unknown keyword.
            ConfigError: a value the settings refuse (``candidates`` below ``k`` ...).
            GenerationError: the generator failed or stopped before it finished.
        """
        return self._answers.ask(AskRequest.of(question, scope, **fields))

    def ask_stream(
        self, question: AskRequest | str, scope: Scope | Mapping[str, object] | None = None, **fields: object
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

        Args:
            question: The question, or a whole :class:`AskRequest`.
            scope: The documents it may be answered from; default: the configured scope.
            **fields: Any other :class:`AskRequest` field, as for :meth:`ask`.

        Returns:
            An :class:`AskStream` (an iterator and a context manager) of ``AnswerDelta`` events and one
            closing ``AnswerDone`` whose ``result`` is the :class:`~evidencedesk.results.ask.AskResult`.

        Raises:
            TypeError: an unknown keyword.
            ConfigError: a value the settings refuse.
            ModelBusy: a local model's request queue is full.
        """
        return self._answers.ask_stream(AskRequest.of(question, scope, **fields))

    # -- traces and evaluation runs ----------------------------------------------------------------
    def save_trace(self, result: AskResult, owner: str | None = None, keep: int | None = DEFAULT_TRACE_KEEP) -> str:
        """Store what :meth:`ask` returned (``save=False``, then completed by the caller) as a trace, made
        by ``owner``; only the ``keep`` newest traces stay (None: all). What is stored is
        ``result.to_dict()`` (a face's own result type adds its fields there).

        Args:
            result: What :meth:`ask` returned, or a face's result built on it.
            owner: The API key that made it (None: visible to every reader of the store).
            keep: How many of the newest traces stay (None: all).

        Returns:
            The trace id.
        """
        return self._records.save_trace(result, owner, keep)

    def save_eval_run(self, run: EvalRun, owner: str | None = None) -> int:
        """Store what :meth:`evaluate` returned (``save=False``).

        Args:
            run: the run; its ``to_dict()`` is what the store keeps.
            owner: the API key that made it (None: no key; visible to admin keys only through the service).

        Returns:
            The stored run's id.
        """
        return self._records.save_eval_run(run.to_dict(), owner)

    def trace(self, trace_id: str, owner: str | None = None) -> JSONObject | None:
        """A stored trace, or None; with ``owner``, only one that key made. It is the JSON the store keeps:
        what ``ask`` returned (``AskResult.to_dict()``, which ``AskResult.from_dict`` reads back), with the
        fields a face added (the lab's grades).

        Args:
            trace_id: The id ``ask`` returned.
            owner: Only a trace this API key made (None: any).

        Returns:
            The stored JSON object, or None when there is no such trace (for ``owner``).
        """
        return self._records.trace(trace_id, owner)

    def traces(self, limit: int = 50, owner: str | None = None) -> list[JSONObject]:
        """The most recent stored traces, newest first; with ``owner``, only that key's.

        Args:
            limit: How many at most.
            owner: Only the traces this API key made (None: all).

        Returns:
            The stored JSON objects, newest first.
        """
        return self._records.traces(limit, owner)

    def eval_run(self, run: int | Mapping[str, object]) -> EvalRun:
        """A stored evaluation run.

        Args:
            run: the run's id, or a run's JSON already in hand (read as it is).

        Returns:
            The run, its ``run_id`` the stored id. Raises StoreError when the store holds no such run.
        """
        from evidencedesk.results.evaluation import EvalRun

        return EvalRun.from_dict(self._records.eval_run(run))

    # -- evaluate --------------------------------------------------------------------------------
    def evaluate(
        self, labels: str | Path | Sequence[Label], method: str | None = None, k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None, *, floor: float | None = None, methods: Sequence[str] = (),
        answers: str | None = None, unfiltered: bool = True, hide_outside_scope: bool = False,
        size_series: bool = False, save: bool = True, owner: str | None = None,
    ) -> EvalRun:  # fmt: skip
        """Score labelled questions through the Desk's own first stage (what :meth:`search` shows).

        Evaluation reads the store's chunks once per call, in batches, and keeps only those that hold
        a gold phrase (``evaluation.evidence``): no other chunk changes a metric or a finding.

        Args:
            labels: a labels file (JSON lines), or labels already loaded.
            method: the retrieval method (default: ``retrieval.method``).
            k: how many chunks count as retrieved (default: ``retrieval.k``).
            scope: the scope every question runs in (default: the configured one).
            floor: the score floor of the context (default: ``context.floor``).
            methods: more methods for the strategies table.
            answers: a generator that answers every question too, through :meth:`ask`'s own path
                (reranker, floors, gate, validation); None: retrieval only.
            unfiltered: also score without the scope (its label counts).
            hide_outside_scope: judge only by the chunks inside the scope, so no finding names another
                (the service).
            size_series: also measure recall against four re-chunkings of the documents.
            save: store the run.
            owner: the API key the stored run is made by.

        Returns:
            The run (``EvalRun``): ``run_id`` set when saved; ``to_dict()`` is its JSON.
        """
        return self._eval.evaluate(
            labels, method, k, scope, floor=floor, methods=methods, answers=answers, unfiltered=unfiltered,
            hide_outside_scope=hide_outside_scope, size_series=size_series, save=save, owner=owner,
        )  # fmt: skip

    def size_series(
        self, labels: Sequence[Label], method: str | None = None, scope: Scope | None = None
    ) -> list[SizeSeries]:
        """Recall against context size for four re-chunkings of the documents inside ``scope``.

        Args:
            labels: the labels, loaded.
            method: the retrieval method (default: ``retrieval.method``).
            scope: the scope (default: the configured one).

        Returns:
            One ``SizeSeries`` per chunking: points of (mean context words, answer recall, k).
        """
        return self._eval.size_series(labels, method, scope)

    def strategies(
        self,
        labels: str | Path | Sequence[Label],
        methods: Sequence[str],
        k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
    ) -> list[StrategyRow]:
        """How the labelled questions fare under each method, over the stored chunks.

        Args:
            labels: a labels file, or labels already loaded.
            methods: the retrieval methods to compare.
            k: how many chunks count as retrieved (default: ``retrieval.k``).
            scope: the scope (default: the configured one).

        Returns:
            One ``StrategyRow`` per method: hits at 1, 3 and 5, answers outranked, answers missing from
            the top ``k``, junk returned for unanswerable questions.
        """
        return self._eval.strategies(labels, methods, k, scope)

    def diagnose(
        self,
        labels: str | Path | Sequence[Label],
        method: str | None = None,
        k: int | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        floor: float | None = None,
        generator: str | None = None,
    ) -> list[Diagnosis]:
        """Every failing labelled question with its findings, the root cause first. Each question is
        answered as :meth:`ask` answers it, and the findings are read off that answer's trace: evidence
        lost between retrieval and the prompt is named by what dropped it (the reranker, collapsing, the
        floor, a duplicate, the budget).

        Args:
            labels: a labels file, or labels already loaded.
            method: the retrieval method (default: ``retrieval.method``).
            k: the context size (default: ``retrieval.k``).
            scope: the scope (default: the configured one).
            floor: the score floor (default: ``context.floor``).
            generator: the generator that answers (default: the configured one).

        Returns:
            One ``Diagnosis`` per failing question, in label order.
        """
        return self._eval.diagnose(labels, method, k, scope, floor, generator)

    @staticmethod
    def beir(
        settings: Settings,
        dataset_dir: str | Path,
        method: str,
        store_dir: str | Path,
        *,
        split: str = "test",
        run_out: str | Path | None = None,
        k1: float | None = None,
        b: float | None = None,
        stem: bool | None = None,
        stopwords: bool | None = None,
        contextual: bool | None = None,
        fusion: str | None = None,
        progress: bool = False,
    ) -> BeirSummary:
        """Score ``method`` on a BEIR dataset, indexed once in ``store_dir``.

        Args:
            settings: the configuration; what the keywords leave None comes from it.
            dataset_dir: the BEIR dataset folder (corpus, queries, qrels).
            method: the retrieval method.
            store_dir: the store the corpus is indexed in (kept for the next run).
            split: the qrels split.
            run_out: also write the TREC run file here.
            k1: BM25's k1 (default: the settings' BM25 leg's).
            b: BM25's b, likewise.
            stem: stem words, likewise.
            stopwords: drop stopwords, likewise.
            contextual: index and embed 'title > headings' before each chunk, likewise.
            fusion: the hybrid's fusion, rrf or normalized (default: ``retrieval.fusion.method``).
            progress: show progress bars.

        Returns:
            The summary: nDCG@10, recall@100, MRR@10 and the seconds taken.
        """
        return evaluating.beir(
            settings, dataset_dir, method, store_dir, split, run_out, k1=k1, b=b, stem=stem, stopwords=stopwords,
            contextual=contextual, fusion=fusion, progress=progress,
        )  # fmt: skip

    @staticmethod
    def report_html(
        run: RunLike, title: str = "evidencedesk evaluation", size_series: Sequence[SizeSeries] | None = None
    ) -> str:
        """An evaluation run as one self-contained HTML page.

        Args:
            run: the run, or its JSON (a stored run).
            title: the page's title.
            size_series: the size curves (see :meth:`size_series`); None: the ones the run carries.

        Returns:
            The page.
        """
        return evaluating.report_html(run, title, size_series)

    def compare(self, run_a: int | RunLike, run_b: int | RunLike, threshold: float = 0.02) -> Comparison:
        """Per-slice differences between two eval runs.

        Args:
            run_a: the baseline: a stored run's id, a run, or a run's JSON.
            run_b: the candidate, likewise.
            threshold: the largest allowed drop of any metric on any slice.

        Returns:
            The ``Comparison``; ``.regressed`` is the gate's verdict.
        """
        a = self._records.eval_run(run_a) if isinstance(run_a, int) else run_a  # the stored JSON as it is
        b = self._records.eval_run(run_b) if isinstance(run_b, int) else run_b
        return evaluating.compare_runs(a, b, threshold)

    @staticmethod
    def compare_runs(run_a: RunLike, run_b: RunLike, threshold: float = 0.02) -> Comparison:
        """:meth:`compare` for two runs in hand (e.g. read from JSON files): no store needed.

        Args:
            run_a: the baseline run, or its JSON.
            run_b: the candidate run, or its JSON.
            threshold: the largest allowed drop of any metric on any slice.

        Returns:
            The ``Comparison``; ``.regressed`` is the gate's verdict.
        """
        return evaluating.compare_runs(run_a, run_b, threshold)


__all__ = ["Desk"]
