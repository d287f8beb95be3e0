"""evidencedesk: answer questions from a folder of documents with citations, and find where it fails.

The public API is the names in ``__all__``; they load on first use, so ``import evidencedesk`` stays
fast. ``Desk`` runs the whole pipeline; the rest are building blocks for your own pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # the whole pipeline
    "Desk": "evidencedesk.desk",
    "AskRequest": "evidencedesk.desk",
    "Settings": "evidencedesk.config",
    "load_settings": "evidencedesk.config",
    # errors: every one is an EvidencedeskError
    "EvidencedeskError": "evidencedesk.errors",
    "ConfigError": "evidencedesk.errors",
    "StoreError": "evidencedesk.errors",
    "IngestError": "evidencedesk.errors",
    "LabelError": "evidencedesk.errors",
    "SnapshotError": "evidencedesk.errors",
    "GenerationError": "evidencedesk.errors",
    # records
    "Document": "evidencedesk.documents",
    "Chunk": "evidencedesk.documents",
    "Metadata": "evidencedesk.documents",
    "Location": "evidencedesk.documents",
    "Scope": "evidencedesk.retrieval.scope",
    "Candidate": "evidencedesk.retrieval.candidates",
    "Part": "evidencedesk.retrieval.candidates",
    "Searcher": "evidencedesk.retrieval.candidates",
    "Trace": "evidencedesk.trace",
    "Finding": "evidencedesk.trace",
    # ingest and chunking
    "IngestReport": "evidencedesk.results.ingest",
    "Store": "evidencedesk.store",
    "StoreProtocol": "evidencedesk.store.contract",
    "parse_folder": "evidencedesk.ingest",
    "ChunkingConfig": "evidencedesk.chunking",
    "chunk_document": "evidencedesk.chunking",
    # retrieval
    "BM25Searcher": "evidencedesk.retrieval.lexical",
    "TfidfSearcher": "evidencedesk.retrieval.lexical",
    "LsaSearcher": "evidencedesk.retrieval.lexical",
    "DenseSearcher": "evidencedesk.retrieval.dense",
    "HybridSearcher": "evidencedesk.retrieval.hybrid",
    "make_searcher": "evidencedesk.retrieval.factory",
    "rrf": "evidencedesk.retrieval.fusion",
    "normalized_fusion": "evidencedesk.retrieval.fusion",
    "mmr": "evidencedesk.retrieval.mmr",
    "OverlapReranker": "evidencedesk.retrieval.rerank",
    "CrossEncoderReranker": "evidencedesk.retrieval.rerank.cross_encoder",
    "TwoStage": "evidencedesk.retrieval.rerank",
    # answering
    "assemble": "evidencedesk.answer.context",
    "ExtractiveGenerator": "evidencedesk.answer.generators.extractive",
    "get_generator": "evidencedesk.answer.generators",
    "validate": "evidencedesk.answer.validate",
    "ask": "evidencedesk.answer.pipeline",
    "AnswerDelta": "evidencedesk.answer.stream",
    "AnswerDone": "evidencedesk.answer.stream",
    "AskEvent": "evidencedesk.answer.stream",
    "AskStream": "evidencedesk.answer.stream",
    # evaluation
    "Label": "evidencedesk.evaluation.labels",
    "load_labels": "evidencedesk.evaluation.labels",
    "LabelWarning": "evidencedesk.evaluation.labels",
    "FloorSuggestion": "evidencedesk.evaluation.floor",
    "evaluate": "evidencedesk.evaluation.runner",
    "diagnose": "evidencedesk.evaluation.taxonomy",
    "metrics": "evidencedesk.evaluation.metrics",
}

_MODULES = frozenset({"metrics"})  # names that stand for a whole module

__all__ = [
    "AnswerDelta",
    "AnswerDone",
    "AskEvent",
    "AskRequest",
    "AskStream",
    "BM25Searcher",
    "Candidate",
    "Chunk",
    "ChunkingConfig",
    "ConfigError",
    "CrossEncoderReranker",
    "DenseSearcher",
    "Desk",
    "Document",
    "EvidencedeskError",
    "ExtractiveGenerator",
    "Finding",
    "FloorSuggestion",
    "GenerationError",
    "HybridSearcher",
    "IngestError",
    "IngestReport",
    "Label",
    "LabelError",
    "LabelWarning",
    "Location",
    "LsaSearcher",
    "Metadata",
    "OverlapReranker",
    "Part",
    "Scope",
    "Searcher",
    "Settings",
    "SnapshotError",
    "Store",
    "StoreError",
    "StoreProtocol",
    "TfidfSearcher",
    "Trace",
    "TwoStage",
    "ask",
    "assemble",
    "chunk_document",
    "diagnose",
    "evaluate",
    "get_generator",
    "load_labels",
    "load_settings",
    "make_searcher",
    "metrics",
    "mmr",
    "normalized_fusion",
    "parse_folder",
    "rrf",
    "validate",
]

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and editors
    from evidencedesk.answer.context import assemble as assemble
    from evidencedesk.answer.generators import get_generator as get_generator
    from evidencedesk.answer.generators.extractive import ExtractiveGenerator as ExtractiveGenerator
    from evidencedesk.answer.pipeline import ask as ask
    from evidencedesk.answer.stream import AnswerDelta as AnswerDelta
    from evidencedesk.answer.stream import AnswerDone as AnswerDone
    from evidencedesk.answer.stream import AskEvent as AskEvent
    from evidencedesk.answer.stream import AskStream as AskStream
    from evidencedesk.answer.validate import validate as validate
    from evidencedesk.chunking import ChunkingConfig as ChunkingConfig
    from evidencedesk.chunking import chunk_document as chunk_document
    from evidencedesk.config import Settings as Settings
    from evidencedesk.config import load_settings as load_settings
    from evidencedesk.desk import AskRequest as AskRequest
    from evidencedesk.desk import Desk as Desk
    from evidencedesk.documents import Chunk as Chunk
    from evidencedesk.documents import Document as Document
    from evidencedesk.documents import Location as Location
    from evidencedesk.documents import Metadata as Metadata
    from evidencedesk.errors import ConfigError as ConfigError
    from evidencedesk.errors import EvidencedeskError as EvidencedeskError
    from evidencedesk.errors import GenerationError as GenerationError
    from evidencedesk.errors import IngestError as IngestError
    from evidencedesk.errors import LabelError as LabelError
    from evidencedesk.errors import SnapshotError as SnapshotError
    from evidencedesk.errors import StoreError as StoreError
    from evidencedesk.evaluation import metrics as metrics
    from evidencedesk.evaluation.floor import FloorSuggestion as FloorSuggestion
    from evidencedesk.evaluation.labels import Label as Label
    from evidencedesk.evaluation.labels import LabelWarning as LabelWarning
    from evidencedesk.evaluation.labels import load_labels as load_labels
    from evidencedesk.evaluation.runner import evaluate as evaluate
    from evidencedesk.evaluation.taxonomy import diagnose as diagnose
    from evidencedesk.ingest import parse_folder as parse_folder
    from evidencedesk.results.ingest import IngestReport as IngestReport
    from evidencedesk.retrieval.candidates import Candidate as Candidate
    from evidencedesk.retrieval.candidates import Part as Part
    from evidencedesk.retrieval.candidates import Searcher as Searcher
    from evidencedesk.retrieval.dense import DenseSearcher as DenseSearcher
    from evidencedesk.retrieval.factory import make_searcher as make_searcher
    from evidencedesk.retrieval.fusion import normalized_fusion as normalized_fusion
    from evidencedesk.retrieval.fusion import rrf as rrf
    from evidencedesk.retrieval.hybrid import HybridSearcher as HybridSearcher
    from evidencedesk.retrieval.lexical import BM25Searcher as BM25Searcher
    from evidencedesk.retrieval.lexical import LsaSearcher as LsaSearcher
    from evidencedesk.retrieval.lexical import TfidfSearcher as TfidfSearcher
    from evidencedesk.retrieval.mmr import mmr as mmr
    from evidencedesk.retrieval.rerank import OverlapReranker as OverlapReranker
    from evidencedesk.retrieval.rerank import TwoStage as TwoStage
    from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker as CrossEncoderReranker
    from evidencedesk.retrieval.scope import Scope as Scope
    from evidencedesk.store import Store as Store
    from evidencedesk.store.contract import StoreProtocol as StoreProtocol
    from evidencedesk.trace import Finding as Finding
    from evidencedesk.trace import Trace as Trace


def __getattr__(name: str) -> object:
    """Import an exported name's module on first use (type checkers see the imports above instead)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evidencedesk' has no attribute {name!r}")
    mod = import_module(module)
    value = mod if name in _MODULES else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
