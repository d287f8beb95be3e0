"""Chunkers: turn a Document into Chunks, by name, with a ChunkingConfig.

``fixed`` (windows), ``recursive`` (separators in order), ``section`` (one per heading),
``paragraph`` (one per blank-line block), ``structure`` (text packed, tables and code kept whole or
cut with their headers) and ``parent_child`` (structure children that carry their section as parent).
Every chunker is deterministic: the same text and config give the same ids and texts.
"""

from __future__ import annotations

from collections.abc import Callable

from evidencedesk.chunking.config import DEFAULT_SEPARATORS, ChunkingConfig
from evidencedesk.chunking.evidence import whole_evidence
from evidencedesk.chunking.fixed import chunk_fixed
from evidencedesk.chunking.paragraph import chunk_paragraph
from evidencedesk.chunking.parent_child import chunk_parent_child, parent_id
from evidencedesk.chunking.recursive import chunk_recursive
from evidencedesk.chunking.section import chunk_section
from evidencedesk.chunking.structure import chunk_structure
from evidencedesk.constants import CHUNKERS, UNITS
from evidencedesk.documents import Chunk, Document

Chunker = Callable[[Document, ChunkingConfig], list[Chunk]]

_REGISTRY: dict[str, Chunker] = {
    "fixed": chunk_fixed,
    "recursive": chunk_recursive,
    "section": chunk_section,
    "paragraph": chunk_paragraph,
    "structure": chunk_structure,
    "parent_child": chunk_parent_child,
}


def get_chunker(name: str) -> Chunker:
    """The chunker registered under ``name``; a ValueError naming the choices otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"chunker: unknown name {name!r}; choose one of {', '.join(CHUNKERS)}") from None


def chunk_document(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    """The chunks of ``doc`` made by the chunker ``config.name``."""
    return get_chunker(config.name)(doc, config)


__all__ = [
    "CHUNKERS",
    "DEFAULT_SEPARATORS",
    "UNITS",
    "Chunker",
    "ChunkingConfig",
    "chunk_document",
    "chunk_fixed",
    "chunk_paragraph",
    "chunk_parent_child",
    "chunk_recursive",
    "chunk_section",
    "chunk_structure",
    "get_chunker",
    "parent_id",
    "whole_evidence",
]
