"""Helpers for the PostgreSQL backend tests: documents for hand-made chunks, a fast random embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from evidencedesk.documents import Chunk, Document


def documents_for(chunks: Sequence[Chunk]) -> list[tuple[Document, list[Chunk]]]:
    """Group chunks by document and make each a Document carrying its first chunk's metadata."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for doc_id, cs in by_doc.items():
        text = "\n\n".join(c.text for c in cs)
        doc = Document(
            id=doc_id,
            title=cs[0].title or doc_id,
            path=cs[0].source or f"{doc_id}.md",
            format="markdown",
            text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            metadata=cs[0].metadata,
        )
        out.append((doc, cs))
    return out


class RandomEmbedder:
    """Deterministic random unit vectors in the positive orthant (every cosine is positive), keyed by text."""

    def __init__(self, dim: int = 32) -> None:
        self.name, self.dim = f"test-random-positive-{dim}", dim

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.abs(np.random.default_rng(seed).standard_normal(self.dim))
            out[i] = v / np.linalg.norm(v)
        return out


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
