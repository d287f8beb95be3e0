"""Helpers for the dense tests: the real embedder wrapped to count what it embeds."""

from __future__ import annotations

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
