"""A SQLite cache of embeddings keyed by (model name, sha256 of the text), so re-indexing never re-embeds."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from evidencedesk.index.embedders import Embedder, progress_bar

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_BATCH = 500  # stays well below SQLite's limit on bound parameters
_EMBED_BLOCK = 512  # texts embedded (and stored) per step
_REPORT_BATCHES = 2  # progress is reported after every this many batches of a block


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """One SQLite file; each row is one float32 vector. Safe to share between processes (SQLite locking)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise ValueError(f"cache path: {self.path} is a directory, expected a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A service builds a searcher in one worker thread and closes it from another at shutdown.
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # reads memory-mapped and a 64 MB page cache: a large ingest looks up every chunk's vector here
        self._db.execute("PRAGMA mmap_size = 1073741824")
        self._db.execute("PRAGMA cache_size = -65536")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, model: str, hashes: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes`` (a vector stored with another dimension is ignored)."""
        found: dict[str, np.ndarray] = {}
        unique = sorted(set(hashes))  # in key order: each batch walks nearby pages of the table
        for start in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[start : start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND dim = ? AND text_sha256 IN ({marks})",
                (model, dim, *part),
            )
            for digest, blob in rows:
                found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(hashes):
            raise ValueError(f"vectors: expected {len(hashes)} rows, got shape {vectors.shape}")
        dim = vectors.shape[1]
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings (model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)",
                ((model, h, dim, v.tobytes()) for h, v in zip(hashes, vectors, strict=True)),
            )

    def holds(self, model: str) -> bool:
        """Whether any vector of ``model`` is cached (one index probe, at any size)."""
        return self._db.execute("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", (model,)).fetchone() is not None

    def count(self, model: str | None = None) -> int:
        if model is None:
            return int(self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
        return int(self._db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _embed_misses(
    embedder: Embedder,
    missing: dict[str, str],
    cache: EmbeddingCache,
    found: dict[str, np.ndarray],
    batch_size: int,
    progress: bool,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> None:
    """Embed the missing texts block by block, storing each block at once: an interrupted run keeps its work.

    ``on_progress(done, total, model)`` is called after every ``_REPORT_BATCHES`` batches, so a slow
    embedder still shows movement every few seconds."""
    digests = sorted(missing, key=lambda d: len(missing[d]))  # similar lengths share a block: less padding
    bar = progress_bar() if progress else None
    if bar is not None:
        bar.start()
        task = bar.add_task(f"embedding ({embedder.name})", total=len(digests))
    if on_progress is not None:
        on_progress(0, len(digests), embedder.name)  # the wait starts now: say so before the first batch
    try:
        for start in range(0, len(digests), _EMBED_BLOCK):
            block = digests[start : start + _EMBED_BLOCK]
            parts = []
            step = max(batch_size, 1) * _REPORT_BATCHES
            for at in range(0, len(block), step):  # reported batch by batch, stored block by block
                texts = [missing[d] for d in block[at : at + step]]
                parts.append(np.asarray(embedder.embed(texts, batch_size=batch_size), dtype=np.float32))
                if on_progress is not None and at + step < len(block):
                    on_progress(start + at + len(texts), len(digests), embedder.name)
            fresh = np.concatenate(parts) if len(parts) > 1 else parts[0]
            if fresh.shape != (len(block), embedder.dim):
                raise ValueError(
                    f"embedder {embedder.name!r} returned shape {fresh.shape}, expected ({len(block)}, {embedder.dim})"
                )
            cache.put_many(embedder.name, block, fresh)
            found.update(zip(block, fresh, strict=True))
            if bar is not None:
                bar.advance(task, len(block))
            if on_progress is not None:
                on_progress(min(start + len(block), len(digests)), len(digests), embedder.name)
    finally:
        if bar is not None:
            bar.stop()


def _reuse_same_vectors(
    embedder: Embedder, missing: dict[str, str], cache: EmbeddingCache, found: dict[str, np.ndarray]
) -> None:
    """Fill misses from vectors the cache holds under another name that gives the same vector for
    some texts (``same_vectors_name`` and ``fitting``: MiniLM at 256 tokens, for a text it reads
    whole), storing them under this embedder's name; what is filled leaves ``missing``. Texts are
    tokenised only when the cache holds vectors under that name at all."""
    name = getattr(embedder, "same_vectors_name", None)
    if name is None or not cache.holds(name):
        return
    digests = list(missing)
    asked = [digests[n] for n in embedder.fitting([missing[d] for d in digests])]  # type: ignore[attr-defined]
    reused = cache.get_many(name, asked, embedder.dim)
    if reused:
        cache.put_many(embedder.name, list(reused), np.stack(list(reused.values())))
        found.update(reused)
        for digest in reused:
            del missing[digest]


def embed_cached(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    batch_size: int = 32,
    progress: bool = False,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> np.ndarray:
    """Embed ``texts``, asking ``embedder`` only for texts the cache lacks (each distinct text once);
    ``on_progress(done, total, model)`` follows the texts embedded now."""
    texts = list(texts)
    if cache is None:
        return embedder.embed(texts, batch_size=batch_size, progress=progress)
    hashes = [text_hash(t) for t in texts]
    found = cache.get_many(embedder.name, hashes, embedder.dim)
    missing: dict[str, str] = {}
    for digest, text in zip(hashes, texts, strict=True):
        if digest not in found and digest not in missing:
            missing[digest] = text
    if missing:
        _reuse_same_vectors(embedder, missing, cache, found)
    if missing:
        _embed_misses(embedder, missing, cache, found, batch_size, progress, on_progress)
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for row, digest in enumerate(hashes):
        out[row] = found[digest]
    return out
