"""evidencedesk: answer questions from a folder of documents with citations, and find where it fails.

The public API is the names in ``__all__``; they load on first use, so ``import evidencedesk`` stays
fast. ``Desk`` runs the whole pipeline; the rest are building blocks for your own pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # the whole pipeline
    "Desk": "evidencedesk.desk",
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
    # evaluation
    "load_labels": "evidencedesk.evaluation.labels",
    "evaluate": "evidencedesk.evaluation.runner",
    "diagnose": "evidencedesk.evaluation.taxonomy",
    "metrics": "evidencedesk.evaluation.metrics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evidencedesk' has no attribute {name!r}")
    mod = import_module(module)
    value = mod if module.endswith("." + name) else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
