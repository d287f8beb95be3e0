"""Embedders for tests: the real MiniLM wrapped to count or remember, and a fast deterministic one."""

from __future__ import annotations

import hashlib

import numpy as np

from evidencedesk.index.embedders import default_embedder


class CountingEmbedder:
    """The real MiniLM embedder, counting the texts it is asked to embed."""

    def __init__(self, name: str | None = None) -> None:
        self.inner = default_embedder()
        self.name = name or self.inner.name
        self.dim = self.inner.dim
        self.texts_embedded = 0
        self.calls = 0

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        return self.inner.embed(texts, batch_size=batch_size, progress=progress)


class MemoEmbedder:
    """The real default embedder, remembering what it embedded (queries are searched many times)."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if todo:
            self.seen.update(zip(todo, self.inner.embed(todo, batch_size=batch_size), strict=True))
        return np.array([self.seen[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


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
